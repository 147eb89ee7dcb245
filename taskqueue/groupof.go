package taskqueue

import (
	"context"
	"iter"
	"slices"
	"sync/atomic"
)

// A GroupOf is a Group whose members return a value of type T: Wait returns
// the values in the order the members were added, and Completed yields them
// as the members end, for streaming. Everything else is as for Group, which
// documents it.
//
// A GroupOf is safe for use by multiple goroutines and must not be copied.
// The zero GroupOf is not usable: its methods panic; call
// NewGroupOf.
type GroupOf[T any] struct {
	g    Group
	head atomic.Pointer[memberOf[T]] // the members that ended, the last first
}

// NewGroupOf returns a group whose members run on q, receive a context
// derived from ctx and return a value of type T. NewGroupOf panics if q is
// nil.
func NewGroupOf[T any](ctx context.Context, q *Queue, opts ...GroupOption) *GroupOf[T] {
	g := &GroupOf[T]{}
	g.g.init(ctx, q, "NewGroupOf", opts)
	return g
}

// Go adds a member that runs f on the group's queue, as Group.Go does.
func (g *GroupOf[T]) Go(f func(context.Context) (T, error)) {
	g.g.mustBeMade("GroupOf")
	if f == nil {
		nilFunc("GroupOf.Go")
	}
	m := &memberOf[T]{g: g, f: f}
	m.member.i = g.g.next.Add(1) - 1
	m.member.typ = m
	g.g.add(&m.member)
}

type memberOf[T any] struct {
	member
	g     *GroupOf[T]
	f     func(context.Context) (T, error)
	val   T
	err   error
	ended *memberOf[T] // next in the list of the members that ended
}

func (m *memberOf[T]) call(ctx context.Context) error {
	v, err := m.f(ctx)
	m.val = v
	return err
}

// end pushes m on the list of the members that ended.
func (m *memberOf[T]) end(err error) {
	m.err = err
	for {
		top := m.g.head.Load()
		m.ended = top
		if m.g.head.CompareAndSwap(top, m) {
			return
		}
	}
}

// Wait waits for the members as Group.Wait does and returns, with the same
// error, the values they returned, in the order they were added: the value
// of a member that failed is the one it returned with its error, and that
// of a member that never ran (the group was canceled, or the queue refused
// it) is the zero T.
func (g *GroupOf[T]) Wait(ctx context.Context) ([]T, error) {
	g.g.mustBeMade("GroupOf")
	if err := g.g.waitMembers(ctx, "GroupOf.Wait"); err != nil {
		return nil, err
	}
	return g.values(), g.g.result()
}

func (g *GroupOf[T]) values() []T {
	vals := make([]T, g.g.next.Load())
	for m := g.head.Load(); m != nil; m = m.ended {
		vals[m.i] = m.val
	}
	return vals
}

// Completed returns an iterator over the members' results as the members
// end, for streaming: each value with its error, in the order the members
// ended, so that a failure shows as soon as it happens and a caller can act
// on each result while the others are still running. A member that never ran
// because the group was canceled yields nothing; one the queue refused yields
// the zero T and the queue's error. The iteration ends when the group is done,
// as Wait would return; it then ends the group as Wait does, and Wait returns
// at once with the values and error. Stopping the loop early stops only the
// iteration: the members go on.
//
// The members must be added before the iteration begins, or by members, as
// for Wait. An iteration may begin again, and several may run at once: each
// yields every result. Ranging over Completed from a task of the group's own
// serial queue panics, as Wait does.
func (g *GroupOf[T]) Completed() iter.Seq2[T, error] {
	g.g.mustBeMade("GroupOf")
	return func(yield func(T, error) bool) {
		var mark *memberOf[T] // the newest member yielded
		var batch []*memberOf[T]
		for {
			top := g.head.Load()
			batch = batch[:0]
			for m := top; m != mark; m = m.ended {
				batch = append(batch, m)
			}
			mark = top
			for _, m := range slices.Backward(batch) {
				if !yield(m.val, m.err) {
					return
				}
			}
			if len(batch) > 0 {
				continue
			}
			if isDone(g.g.state.Load()) {
				if g.head.Load() == mark { // every member that ended was before the end
					g.g.end()
					return
				}
				continue
			}
			g.g.mustNotWaitForItself(g.g.ctx, "GroupOf.Completed")
			g.waitForMore(mark)
		}
	}
}

// waitForMore blocks until a member ends after mark, or the group is done.
func (g *GroupOf[T]) waitForMore(mark *memberOf[T]) {
	gg := &g.g
	gg.streams.Add(1)
	defer gg.streams.Add(-1)
	gg.q.s.Await(slotOf(gg.ctx), func() {
		gg.mu.Lock()
		defer gg.mu.Unlock()
		for g.head.Load() == mark && !isDone(gg.state.Load()) {
			gg.cond.Wait()
		}
	})
}
