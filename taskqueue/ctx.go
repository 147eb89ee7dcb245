package taskqueue

import (
	"context"
	"sync"

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

	turn  sync.Mutex // nested functions run with this context take turns under it
	ended bool       // under turn: the work returned; the slot is no longer its
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

// end marks the work of c returned, once the nested functions run with c in
// flight have returned: from then on, c holds no slot.
func (c *taskCtx) end() {
	c.turn.Lock()
	c.ended = true
	c.turn.Unlock()
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
