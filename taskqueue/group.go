package taskqueue

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
)

// A Group runs tasks on a queue and waits for all of them, in the manner of
// errgroup.Group, on any Queue: serial, concurrent, a child of a tree.
//
// By default Wait returns the errors of all members, joined in submission
// order. WithCancelOnError makes the first error cancel the group's context
// instead, so that members that had not started never run, and Wait returns
// that first error alone. A member that panics completes with a *PanicError
// (find it with errors.As), which Wait reports like any error; the panic also
// goes to the queue's panic handler, as for any task with a handle.
//
// A Group must be made with NewGroup, configured before its first Go, and not
// copied. Go may be called from several goroutines, and from members.
type Group struct {
	q       *Queue
	ctx     context.Context
	cancel  context.CancelCauseFunc // set by WithCancelOnError
	room    chan struct{}           // set by WithLimit
	pending sync.WaitGroup

	mu      sync.Mutex
	members []*Handle
	first   error // the first error, with WithCancelOnError

	onDone func(i int) // called as member i is done; set by GroupOf
}

// NewGroup returns a Group whose members run on q with ctx.
func NewGroup(ctx context.Context, q *Queue) *Group {
	return &Group{q: q, ctx: ctx}
}

// WithCancelOnError makes the first member error cancel the context the
// members run with, so that those not started yet never run, and makes Wait
// return that error alone. It returns g, and panics if a member was
// submitted already.
func (g *Group) WithCancelOnError() *Group {
	g.mustBeNew("WithCancelOnError")
	g.ctx, g.cancel = context.WithCancelCause(g.ctx)
	return g
}

// WithLimit bounds the members queued or running at once to n, on top of
// the queue's own limit: Go waits for room. It returns g, and panics if
// n < 1 or if a member was submitted already.
func (g *Group) WithLimit(n int) *Group {
	if n < 1 {
		panic(fmt.Sprintf("taskqueue: Group.WithLimit(%d): limit must be at least 1", n))
	}
	g.mustBeNew("WithLimit")
	g.room = make(chan struct{}, n)
	return g
}

func (g *Group) mustBeNew(call string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.members) > 0 {
		panic("taskqueue: Group." + call + " called after Go")
	}
}

// Context returns the context the members run with: the group's, canceled
// by the first error if WithCancelOnError was set.
func (g *Group) Context() context.Context { return g.ctx }

// Go submits f as a member of g. With WithLimit, it first waits for room,
// or for the group's context to be done, which completes the member with
// its error without running it.
func (g *Group) Go(f func(ctx context.Context) error) {
	if f == nil {
		nilFunc("Group.Go")
	}
	g.add(func() *Handle { return g.q.RunAsync(g.ctx, f) })
}

// add submits a member made by submit, counting it until it is done.
func (g *Group) add(submit func() *Handle) {
	g.pending.Add(1)
	var h *Handle
	roomy := false // holds room in g.room
	if g.room != nil {
		select {
		case g.room <- struct{}{}:
			roomy = true
		case <-g.ctx.Done():
			h = &Handle{ctx: g.ctx, q: g.q}
			h.finish(context.Cause(g.ctx))
		}
	}
	if h == nil {
		h = submit()
	}
	g.mu.Lock()
	i := len(g.members)
	g.members = append(g.members, h)
	g.mu.Unlock()
	h.notify(func() {
		g.memberDone(h, roomy)
		if g.onDone != nil {
			g.onDone(i)
		}
	})
}

// memberDone accounts for a member that is done.
func (g *Group) memberDone(h *Handle, roomy bool) {
	if roomy {
		<-g.room
	}
	if err := h.Err(); err != nil && g.cancel != nil && !g.canceledByGroup(err) {
		g.mu.Lock()
		if g.first == nil {
			g.first = err
		}
		g.mu.Unlock()
		g.cancel(err)
	}
	g.pending.Done()
}

// canceledByGroup reports whether err is that of a member the group's
// cancellation stopped.
func (g *Group) canceledByGroup(err error) bool {
	return g.ctx.Err() != nil && errors.Is(err, g.ctx.Err())
}

// Wait waits for every member submitted before it returns, then reports
// their errors (see Group).
func (g *Group) Wait() error {
	g.pending.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cancel != nil {
		return g.first
	}
	var errs []error
	for _, h := range g.members {
		if err := h.Err(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// A GroupOf is a Group whose members produce values: Wait returns them in
// submission order. Its rules are those of Group.
type GroupOf[T any] struct {
	g    Group
	mu   sync.Mutex
	futs []*Future[T]

	order    orderQueue // the members' indices, in the order they completed
	finished sync.Cond  // signaled as a member completes; on order.mu
}

// orderQueue is the completion order of a GroupOf's members.
type orderQueue struct {
	mu  sync.Mutex
	idx []int
}

// NewGroupOf returns a GroupOf whose members run on q with ctx.
func NewGroupOf[T any](ctx context.Context, q *Queue) *GroupOf[T] {
	g := &GroupOf[T]{g: Group{q: q, ctx: ctx}}
	g.finished.L = &g.order.mu
	g.g.onDone = g.completed
	return g
}

// completed records that member i is done.
func (g *GroupOf[T]) completed(i int) {
	g.order.mu.Lock()
	g.order.idx = append(g.order.idx, i)
	g.order.mu.Unlock()
	g.finished.Broadcast()
}

// Completed returns the values and errors of g's members in the order they
// complete, as they complete: a stream, where Wait gives them all at once
// in submission order. It yields every member submitted before the
// iteration reaches the end, waiting for those still running, and may be
// iterated again from the start. A member that failed, or did not run,
// yields the zero T and its error.
func (g *GroupOf[T]) Completed() iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for next := 0; ; next++ {
			g.mu.Lock()
			submitted := len(g.futs)
			g.mu.Unlock()
			g.order.mu.Lock()
			for next == len(g.order.idx) && next < submitted {
				g.finished.Wait()
			}
			if next == len(g.order.idx) {
				g.order.mu.Unlock()
				return
			}
			i := g.order.idx[next]
			g.order.mu.Unlock()
			g.mu.Lock() // member i's future is appended under it
			f := g.futs[i]
			g.mu.Unlock()
			g.g.mu.Lock()
			h := g.g.members[i]
			g.g.mu.Unlock()
			var v T
			err := h.Err()
			if f != nil && err == nil {
				v = f.val
			}
			if !yield(v, err) {
				return
			}
		}
	}
}

// WithCancelOnError is Group.WithCancelOnError.
func (g *GroupOf[T]) WithCancelOnError() *GroupOf[T] {
	g.g.WithCancelOnError()
	return g
}

// WithLimit is Group.WithLimit.
func (g *GroupOf[T]) WithLimit(n int) *GroupOf[T] {
	g.g.WithLimit(n)
	return g
}

// Context is Group.Context.
func (g *GroupOf[T]) Context() context.Context { return g.g.ctx }

// Go submits f as a member of g.
func (g *GroupOf[T]) Go(f func(ctx context.Context) (T, error)) {
	if f == nil {
		nilFunc("GroupOf.Go")
	}
	g.mu.Lock()
	defer g.mu.Unlock() // keeps futs in submission order
	var fut *Future[T]
	g.g.add(func() *Handle {
		fut = RunAsync(g.g.ctx, g.g.q, f)
		return &fut.Handle
	})
	g.futs = append(g.futs, fut) // nil if the member never started
}

// Wait waits for every member, then returns their values in submission
// order (the zero T for a member that failed or did not run) and their
// errors, as Group.Wait does.
func (g *GroupOf[T]) Wait() ([]T, error) {
	err := g.g.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	vals := make([]T, len(g.futs))
	for i, f := range g.futs {
		if f != nil && f.Err() == nil {
			vals[i] = f.val
		}
	}
	return vals, err
}
