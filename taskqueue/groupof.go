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
	mustCtx("NewGroupOf", ctx)
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
	mustCtx("GroupOf.Wait", ctx)
	g.g.mustBeMade("GroupOf")
	g.g.waitMembers(ctx, "GroupOf.Wait")
	return g.values(), g.g.result()
}

// TryGo adds a member that runs f only if it can start at once, as
// Group.TryGo does, and reports whether it did.
func (g *GroupOf[T]) TryGo(f func(context.Context) (T, error)) bool {
	g.g.mustBeMade("GroupOf")
	if f == nil {
		nilFunc("GroupOf.TryGo")
	}
	m := &memberOf[T]{g: g, f: f}
	m.member.typ = m
	return g.g.tryGo(&m.member)
}

// values returns the members' values in the order they were added, the
// indexes that TryGo refused left out.
func (g *GroupOf[T]) values() []T {
	skipped := g.g.skippedIndexes()
	vals := make([]T, int(g.g.next.Load())-len(skipped))
	for m := g.head.Load(); m != nil; m = m.ended {
		// The members before m lose a place for each index skipped before m's.
		before, _ := slices.BinarySearch(skipped, m.i)
		vals[int(m.i)-before] = m.val
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
// yields every result. Completed takes no context: it tells its caller by
// the group's context alone. So ranging over it panics, as Wait does, from
// a task that holds the one slot of a serial queue the members need when
// the group was made with that task's context (or one derived from it); a
// task that ranges over a group made with another context, such as
// context.Background(), cannot be told from an outsider and waits, for
// itself, forever. A member must not range over its own group's Completed.
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
			g.waitForMore(mark)
		}
	}
}

// waitForMore blocks until a member ends after mark, or the group is done.
func (g *GroupOf[T]) waitForMore(mark *memberOf[T]) {
	gg := &g.g
	gg.streams.Add(1)
	defer gg.streams.Add(-1)
	await(gg.ctx, "GroupOf.Completed", waited{q: gg.q, group: gg}, func() error {
		gg.mu.Lock()
		defer gg.mu.Unlock()
		for g.head.Load() == mark && !isDone(gg.state.Load()) {
			gg.cond.Wait()
		}
		return nil
	})
}
