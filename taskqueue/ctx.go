package taskqueue

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// The work of a task. A task's function receives a context of its own, a
// taskCtx: the context it was submitted with, which also carries the slot of
// the queue that the task holds while it runs (see scheduler.Slot). Work
// done with that context, or with one derived from it, on any goroutine (the
// task's own calls, an iter.Pull body the task drives, goroutines it starts
// and waits for, tasks it submits with it and waits for) is the task's own
// work: RunSync with it runs in the task's place instead of waiting behind
// the task for a slot the task holds, a wait with it that could only wait
// for the task itself panics (see await), and a submission with it to the
// task's own full queue fails rather than wait for itself. Nothing asks
// which goroutine calls.
//
// Nested functions that run in the task's place with one context take turns,
// under the context's turn, so that no two of them ever overlap, as no two
// tasks of a serial queue do. Each runs with a context of its own in turn,
// whose own nested functions take turns under it. When the task returns, its
// context ends (under the turn, after the nested functions in flight): work
// that outlived the task is an outsider from then on.

// slotKey is the context key under which a taskCtx finds itself.
type slotKey struct{}

// A taskCtx is the context a task or a nested function runs with. It is
// part of the task's record (Handle, or the record of a RunSync), so it
// costs no allocation of its own.
type taskCtx struct {
	context.Context // the context the work was submitted with
	slot            scheduler.Slot
	q               *Queue // the queue whose work it is

	// Nested functions run with this context take turns on turn's channel,
	// made by the first one to come: a turn is a value in it. The turn also
	// says whether the work has returned (see ended): work that no nested
	// function came for ends with endedTurn in place of one, which keeps
	// the flag out of the record of every task.
	turn atomic.Pointer[turn]
}

// A turn is the lock under which the functions nested in a task's work take
// turns. It is a channel rather than a mutex so that a wait for it can end
// with its caller's context, and counts as blocked for testing/synctest.
type turn struct {
	ch    chan struct{}
	ended atomic.Bool // the work returned; the slot is no longer its
}

// endedTurn is the turn of work that returned before any nested function
// came: it has no channel, and none will take it.
var endedTurn = func() *turn {
	t := new(turn)
	t.ended.Store(true)
	return t
}()

// ended reports whether the work of c has returned: its slot is no longer
// its, and its context is an outsider's.
func (c *taskCtx) ended() bool {
	t := c.turn.Load()
	return t != nil && t.ended.Load()
}

// Value returns the taskCtx itself for slotKey, nothing for awaitedKey (the
// mark of Awaited is not passed on to what the task submits), and the
// submitted context's values otherwise.
func (c *taskCtx) Value(key any) any {
	switch key {
	case slotKey{}:
		return c
	case awaitedKey{}:
		return nil
	}
	return c.Context.Value(key)
}

// awaitedKey is the context key of Awaited's mark.
type awaitedKey struct{}

// Awaited returns a copy of ctx that marks the tasks submitted with it as
// awaited: their submitter promises to wait for their outcome (with Wait,
// Err, Result or Done, or a coroutine's WaitFor). A panic of an awaited task
// goes to its handle alone, as a *PanicError that Wait and Err return, and
// never to the queue's panic handler, even when nobody waits for the task
// yet as it panics: without the mark, such a panic is reported to the
// handler too, since nobody might ever see it, and a caller that waits later
// sees it twice. The mark is the submitter's promise: an awaited task whose
// handle nobody reads keeps its panic unseen.
//
// The mark covers the submissions with a handle: RunAsync, RunAfter and
// RunBarrier, the generic RunAsync and RunAfter, Then, and Keyed's RunAsync
// and RunAfter. It is not passed on to the tasks' own contexts: what an
// awaited task submits with its context is not marked. Awaited panics if
// ctx is nil.
func Awaited(ctx context.Context) context.Context {
	if ctx == nil {
		panic("taskqueue: Awaited(nil)")
	}
	return context.WithValue(ctx, awaitedKey{}, true)
}

// start makes c the context of work of q submitted with ctx that runs on sl.
func (c *taskCtx) start(q *Queue, ctx context.Context, sl scheduler.Slot) {
	c.q, c.Context, c.slot = q, ctx, sl
}

// end marks the work of c returned, and returns once the nested functions
// run with c in flight have returned: from then on, c holds no slot.
//
// Work that no nested function came for, the common case, ends at once,
// with endedTurn for its turn. A nested function makes the turn before it
// takes it, and looks at the turn's ended once it holds it; end sets ended
// on a turn it finds before it waits for the turn. So either end finds the
// turn and waits for it, or the nested function sees ended (or endedTurn)
// and does not run.
func (c *taskCtx) end() {
	if c.turn.CompareAndSwap(nil, endedTurn) {
		return
	}
	t := c.turn.Load()
	if t == endedTurn {
		return // ended before
	}
	t.ended.Store(true)
	t.ch <- struct{}{} // the nested function in flight has returned
	<-t.ch
}

// takeTurn takes c's turn for a function nested in c's work, waiting for it
// until ctx is done, and reports whether the work is still running; if not,
// it gives the turn back at once. A nested function that got the turn gives
// it back with giveTurn. takeTurn returns ctx.Err() if ctx was done first.
func (c *taskCtx) takeTurn(ctx context.Context) (bool, error) {
	t := c.turn.Load()
	if t == nil {
		t = &turn{ch: make(chan struct{}, 1)}
		if !c.turn.CompareAndSwap(nil, t) {
			t = c.turn.Load()
		}
	}
	if t == endedTurn {
		return false, nil
	}
	select {
	case t.ch <- struct{}{}:
	default:
		if err := waitTurn(ctx, t, c.q.name); err != nil {
			return false, err
		}
	}
	if t.ended.Load() {
		<-t.ch
		return false, nil
	}
	return true, nil
}

// waitTurn waits for the turn t until ctx is done. A function in a task's
// place that calls, with the context of the task (or of the function it
// runs in) rather than its own, something that runs in the task's place
// waits for its own turn: it says so through log/slog after five seconds,
// as RunSync does of a call that waits behind its own task, naming the
// task's queue.
func waitTurn(ctx context.Context, t *turn, queue string) error {
	slow := time.NewTimer(slowWaitAfter)
	defer slow.Stop()
	for {
		select {
		case t.ch <- struct{}{}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-slow.C:
			slog.Warn("taskqueue: a call in a task's place has waited five seconds for its turn, which may be its own: "+
				"a function run in a task's place must pass on the context it received, not the task's",
				"queue", queue)
		}
	}
}

// giveTurn gives back the turn that takeTurn took.
func (c *taskCtx) giveTurn() { <-c.turn.Load().ch }

// tryRun calls s.TryRun(c.slot, run) in the turn that takeTurn took, and
// gives the turn back however run ends.
func (c *taskCtx) tryRun(s *scheduler.Scheduler, run func(scheduler.Slot)) bool {
	defer c.giveTurn()
	return s.TryRun(c.slot, run)
}

// workOf returns the taskCtx that ctx carries, or nil for a context that
// comes from no task.
func workOf(ctx context.Context) *taskCtx {
	c, _ := ctx.Value(slotKey{}).(*taskCtx)
	return c
}

// slotOf returns the Slot that ctx's work holds, or the zero Slot: that of
// the innermost task or function in place whose context ctx is or derives
// from. The Slot of a task that has returned holds nothing.
func slotOf(ctx context.Context) scheduler.Slot {
	if c := workOf(ctx); c != nil {
		return c.slot
	}
	return scheduler.Slot{}
}

// holds reports whether the work of ctx (see workOf) holds a slot of s:
// the innermost task or function in place whose context ctx is or derives
// from, or one whose context that derives from, while it runs.
func holds(ctx context.Context, s *scheduler.Scheduler) bool {
	for c := workOf(ctx); c != nil; c = workOf(c.Context) {
		if !c.ended() && s.Holds(c.slot) {
			return true
		}
	}
	return false
}
