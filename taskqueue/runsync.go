package taskqueue

import (
	"context"
	"runtime"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/handoff"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// RunSync runs f on q and blocks until it returns, then returns its error.
// f receives a context derived from ctx, which carries the slot of q that f
// holds while it runs (see below).
//
// Where f runs:
//
//   - In place of the caller's task, when ctx is the context a task of q
//     received (or one derived from it, as Go code passes contexts down) and
//     that task is still running: f runs at once on the calling goroutine,
//     in the task's place, on its slot. The task waits for f, so the queue's
//     limit and, on a serial queue, exclusivity hold, and RunSync from
//     inside a serial queue's own task completes instead of deadlocking (the
//     rule of .NET's TryExecuteTaskInline). This holds for every goroutine
//     that works for the task with its context: an iter.Pull body the task
//     drives, goroutines it starts and waits for. Functions run in one
//     task's place take turns (Apply's and Map's part on the caller
//     included): no two of them overlap, whichever goroutines call, and
//     each gets a context of its own for its own nested calls; a call that
//     waits for its turn gives up when its ctx is done. A goroutine that the
//     task does not wait for must not use its context while the task runs:
//     its calls would run, and its waits lend the task's slot (see
//     WithTarget), beside the task's own code. Once the task has returned,
//     its context is an outsider's and holds no slot.
//   - On the calling goroutine too when q is idle (nothing queued, a slot
//     free), as libdispatch does, which saves the hand-off to a worker;
//     exclusivity and submission order hold all the same.
//   - Otherwise f waits its turn in the queue, runs on a worker, and
//     RunSync waits for it.
//
// The context is what makes a call the task's own: RunSync with a context
// that does not come from the task's (context.Background(), or the context
// of an outer function in place of the nested one's) is an outsider that
// waits behind the task; from inside the task, on a serial queue, it would
// wait forever, and RunSync logs a warning through log/slog when a call has
// waited five seconds behind a task that is still running. A task submitted
// with Go receives no context: one that needs RunSync on its own queue is
// submitted with RunAsync.
//
// If ctx is done before f starts, f does not run and RunSync returns
// ctx.Err(); if ctx is done while f runs on a worker, RunSync returns
// ctx.Err() at once and f runs on (a panic in it then goes to the queue's
// panic handler). RunSync returns ErrClosed if q is closed and ErrQueueFull
// as RunAsync would. If f panics, RunSync panics in the caller with the
// *PanicError, which holds the panic value and the stack of f; if f calls
// runtime.Goexit, so does RunSync. RunSync costs one allocation, the record
// that is f's context.
//
// A task of queue A that calls B.RunSync while a task of B calls A.RunSync
// waits for B while holding A's slot, and the other way round: when every
// slot of both queues is held so, neither can go on until a context ends, as
// with two mutexes taken in opposite orders. [Waits] shows such cycles.
//
// RunSync is shorthand for the generic RunSync with a task that returns no
// value.
func (q *Queue) RunSync(ctx context.Context, f func(context.Context) error) error {
	if f == nil {
		nilFunc("RunSync")
	}
	return q.runSync(ctx, f)
}

// RunSync runs f on q, blocks until it returns and returns its result. It is
// the typed form of Queue.RunSync, which documents it.
func RunSync[T any](ctx context.Context, q *Queue, f func(context.Context) (T, error)) (T, error) {
	if f == nil {
		nilFunc("RunSync")
	}
	var v T
	err := q.runSync(ctx, func(ctx context.Context) (err error) {
		v, err = f(ctx)
		return err
	})
	return v, err
}

// tryRun calls run at once, on the calling goroutine, if q can run it there
// for work with ctx (see RunSync): in the place of the task whose context
// ctx is, in its turn, or on a free slot. It reports whether it did, and
// otherwise the Slot that the caller's work holds, for its wait: the zero
// Slot for an outsider, or for a task that has returned. It returns
// ctx.Err() if ctx was done while it waited for the task's turn, or for the
// task's slot, lent to work that another of its goroutines waits for, to
// come back.
func (q *Queue) tryRun(ctx context.Context, run func(scheduler.Slot)) (bool, scheduler.Slot, error) {
	w := workOf(ctx)
	if w == nil {
		return q.s.TryRun(scheduler.Slot{}, run), scheduler.Slot{}, nil
	}
	sl := w.slot
	if !q.runsOn(sl) {
		ran, err := q.s.TryRunContext(ctx, sl, run)
		return ran, sl, err
	}
	// run would run in the task's place, on a slot it holds of q or of a
	// target above: it takes its turn with the task's other work.
	switch ok, err := w.takeTurn(ctx); {
	case err != nil:
		return false, scheduler.Slot{}, err
	case !ok:
		// The task has returned: its context is an outsider's, which holds
		// no slot, whether or not the worker has moved on yet.
		return q.s.TryRun(scheduler.Slot{}, run), scheduler.Slot{}, nil
	}
	ran, err := w.tryRun(ctx, q.s, sl, run)
	return ran, sl, err
}

// runsOn reports whether work that holds sl would run on a slot it holds,
// were q to run a function of it now: sl holds a slot of q, or of a target
// above q.
func (q *Queue) runsOn(sl scheduler.Slot) bool {
	for a := q; a != nil; a = a.target {
		if a.s.Holds(sl) {
			return true
		}
	}
	return false
}

// slowWaitAfter is how long a RunSync may wait behind a task that is still
// running, the same one all along, before RunSync warns through log/slog
// that it may be waiting for itself: a call from inside a task, with a
// context that is not the task's, can never run on a serial queue.
const slowWaitAfter = 5 * time.Second

func (q *Queue) runSync(ctx context.Context, f func(context.Context) error) error {
	q.mustBeMade()
	if err := ctx.Err(); err != nil {
		q.rejected.Add(1)
		return err
	}
	var err error
	ran, sl, terr := q.tryRun(ctx, func(sl scheduler.Slot) { err = q.runHere(ctx, sl, f) })
	switch {
	case terr != nil:
		q.canceled.Add(1)
		return terr
	case ran:
		return err
	}
	return q.wait(ctx, sl, f)
}

// runHere runs f for RunSync on the calling goroutine, on the slot sl of q
// that it holds, with a context of its own, and returns its error. A panic in
// f is re-panicked, as a *PanicError with f's stack.
func (q *Queue) runHere(ctx context.Context, sl scheduler.Slot, f func(context.Context) error) error {
	c := &taskCtx{}
	c.start(ctx, sl)
	p, err := q.call(c, f, func() {
		c.end()
		q.failed.Add(1) // runtime.Goexit goes on, as it would for a plain call
	})
	c.end()
	switch {
	case p != nil:
		q.panicked.Add(1)
		panic(p)
	case err != nil:
		q.failed.Add(1)
	}
	return err
}

// A syncCall is a RunSync call that waits for its turn on a busy queue, and
// the context its function runs with.
type syncCall struct {
	tc     taskCtx
	q      *Queue
	f      func(context.Context) error
	call   handoff.Call
	err    error
	p      *PanicError // f's panic
	goexit bool        // f called runtime.Goexit

	// While the caller waits, the call is in its queue's list of waits
	// (see Waits), under the queue's mutex.
	prev, next *syncCall
	since      time.Time // when the caller began to wait
	progress   uint64    // the queue's tasks completed when the caller began to wait
	warned     bool      // the slow wait was reported
}

// wait queues f and waits for it, for RunSync on a queue that cannot run it
// on the caller, whose work holds sl.
func (q *Queue) wait(ctx context.Context, sl scheduler.Slot, f func(context.Context) error) error {
	c := &syncCall{q: q, f: f}
	c.tc.Context = ctx
	c.call.Arm(ctx)
	id, err := q.enqueue(ctx, c)
	if err != nil {
		q.rejected.Add(1)
		return err
	}
	q.addWait(c)
	var delivered, ran bool
	// While it waits, the caller lends its slots of the targets above q:
	// a task of a tree that waits for a queue of the same tree must not hold
	// the slots that queue needs.
	q.s.Await(sl, func() { delivered, ran = c.call.Wait(ctx) })
	q.removeWait(c)
	if !delivered {
		if !ran && q.s.TryDequeue(id) {
			q.canceled.Add(1) // out of the queue at once, not skipped later
		} else if !ran {
			q.skipped.Add(1) // the worker will find it given up
			q.canceled.Add(1)
		}
		return ctx.Err()
	}
	switch {
	case c.p != nil:
		panic(c.p)
	case c.goexit:
		runtime.Goexit()
	}
	return c.err
}

// CatchesPanics: see errTask.
func (c *syncCall) CatchesPanics() {}

// Run runs the call on a worker, on the slot sl.
func (c *syncCall) Run(sl scheduler.Slot) {
	q := c.q
	if !c.call.Start() {
		return // given up before it started: counted by its caller
	}
	if err := c.tc.Err(); err != nil {
		q.skipped.Add(1)
		q.canceled.Add(1)
		c.err = err
		c.call.Deliver()
		return
	}
	c.tc.slot = sl
	p, err := q.call(&c.tc, c.f, func() {
		c.tc.end()
		q.failed.Add(1)
		c.goexit = true
		c.call.Deliver() // on Goexit, the worker's goroutine ends after this
	})
	c.tc.end()
	switch {
	case p != nil:
		q.panicked.Add(1)
	case err != nil:
		q.failed.Add(1)
	}
	c.err, c.p = err, p
	if !c.call.Deliver() && p != nil {
		q.onPanic(p) // abandoned: nobody else will see the panic
	}
}

// close completes, with err, a call that CloseNow or CancelKey took out of
// the queue, reporting whether it did: its caller may have given it up.
func (c *syncCall) close(err error) bool {
	if !c.call.Start() {
		return false
	}
	c.err = err
	c.call.Deliver()
	return true
}
