package taskqueue

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// The work of a task. A task's function receives a context of its own, a
// taskCtx: the context it was submitted with, which also carries the slot of
// the queue that the task holds while it runs (see scheduler.Slot). Work
// done with that context, on any goroutine (the task's own calls, an
// iter.Pull body the task drives, goroutines it starts), is the task's own
// work: RunSync with it runs in the task's place instead of waiting behind
// the task for a slot the task holds, Handle.Wait, Group.Wait and Apply with
// it lend the task's slots of shared targets while they wait, and a
// submission with it to the task's own full queue fails rather than wait
// for itself. Nothing asks which goroutine calls.
//
// Nested functions that run in the task's place with one context take turns,
// under the context's turn mutex, so that no two of them ever overlap, as no
// two tasks of a serial queue do. Each runs with a context of its own in
// turn, whose own nested functions take turns under it. When the task
// returns, its context ends (under the turn, after the nested functions in
// flight): work that outlived the task is an outsider from then on.

// slotKey is the context key under which a taskCtx finds itself.
type slotKey struct{}

// A taskCtx is the context a task or a nested function runs with. It is
// part of the task's record (Handle, or the record of a RunSync), so it
// costs no allocation of its own.
type taskCtx struct {
	context.Context // the context the work was submitted with
	slot            scheduler.Slot

	group *Group // the group the work is a member of, or nil

	turn   sync.Mutex  // nested functions run with this context take turns under it
	nested atomic.Bool // a nested function came for a turn: end waits for turn
	ended  atomic.Bool // the work returned; the slot is no longer its
}

// Value returns the taskCtx itself for slotKey, and the submitted context's
// values otherwise.
func (c *taskCtx) Value(key any) any {
	if key == (slotKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// start makes c the context of work submitted with ctx that runs on sl.
func (c *taskCtx) start(ctx context.Context, sl scheduler.Slot) {
	c.Context, c.slot = ctx, sl
}

// end marks the work of c returned, and returns once the nested functions
// run with c in flight have returned: from then on, c holds no slot.
//
// Work that no nested function came for, the common case, ends without a
// lock. A nested function sets nested before it takes the turn, and looks at
// ended once it holds it; end sets ended before it looks at nested. So
// either end sees nested and waits for the turn, or the nested function
// sees ended and does not run.
func (c *taskCtx) end() {
	c.ended.Store(true)
	if c.nested.Load() {
		c.turn.Lock()
		//lint:ignore SA2001 the empty critical section waits for the nested function in flight
		c.turn.Unlock()
	}
}

// takeTurn takes c's turn for a function nested in c's work, and reports
// whether the work is still running; if not, it gives the turn back at
// once. A nested function that got the turn gives it back with giveTurn.
func (c *taskCtx) takeTurn() bool {
	c.nested.Store(true)
	c.turn.Lock()
	if c.ended.Load() {
		c.turn.Unlock()
		return false
	}
	return true
}

// giveTurn gives back the turn that takeTurn took.
func (c *taskCtx) giveTurn() { c.turn.Unlock() }

// tryRun calls s.TryRun(sl, run) in the turn that takeTurn took, and gives
// the turn back however run ends.
func (c *taskCtx) tryRun(s *scheduler.Scheduler, sl scheduler.Slot, run func(scheduler.Slot)) bool {
	defer c.giveTurn()
	return s.TryRun(sl, run)
}

// workOf returns the taskCtx that ctx carries, or nil for a context that
// comes from no task.
func workOf(ctx context.Context) *taskCtx {
	c, _ := ctx.Value(slotKey{}).(*taskCtx)
	return c
}

// slotOf returns the Slot that ctx's work holds, or the zero Slot.
func slotOf(ctx context.Context) scheduler.Slot {
	if c := workOf(ctx); c != nil {
		return c.slot
	}
	return scheduler.Slot{}
}

// isMemberOf reports whether ctx is the context of a member of g, or of work
// nested in one.
func isMemberOf(ctx context.Context, g *Group) bool {
	for c := workOf(ctx); c != nil; c = workOf(c.Context) {
		if c.group == g {
			return true
		}
	}
	return false
}
