package taskqueue

import (
	"context"
	"runtime"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/handoff"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// RunSync runs f on q and blocks until it returns, then returns its error.
// f receives a context derived from ctx.
//
// f runs at once on the calling goroutine, in a task's place, when ctx is
// the context a running task of q received, or that of a task of a queue
// above q that q runs on, or derives from one (see Serial queues and
// re-entry in the package documentation): the task waits for f, so q's limit
// and order hold, and RunSync from a serial queue's own task completes where
// other pools deadlock. f also runs on the caller when q is idle, which
// saves the hand-off to a worker. Otherwise f waits its turn and runs on a
// worker.
//
// If ctx is done before f starts, f does not run and RunSync returns
// ctx.Err(); if ctx is done while f runs on a worker, RunSync returns
// ctx.Err() at once and f runs on (a panic in it then goes to the queue's
// panic handler). RunSync returns ErrClosed if q is closed and ErrQueueFull
// as RunAsync would. If f panics, RunSync panics in the caller with the
// *PanicError, which holds the panic value and the stack of f; if f calls
// runtime.Goexit, so does RunSync. A call that could only wait for itself
// panics instead of waiting (see Handle.Wait); one made from inside a task
// with another context, which cannot be told, is reported through log/slog
// when it has waited five seconds behind a task that is still running.
// RunSync costs one allocation, the record that is f's context.
//
// RunSync is shorthand for the generic RunSync with a task that returns no
// value.
func (q *Queue) RunSync(ctx context.Context, f func(context.Context) error) error {
	mustCtx("RunSync", ctx)
	if f == nil {
		nilFunc("RunSync")
	}
	return q.runSync(ctx, f)
}

// RunSync runs f on q, blocks until it returns and returns its result. It is
// the typed form of Queue.RunSync, which documents it.
func RunSync[T any](ctx context.Context, q *Queue, f func(context.Context) (T, error)) (T, error) {
	mustCtx("RunSync", ctx)
	mustQueue(q, "RunSync")
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
// for work with ctx (see RunSync): in the place of a task whose context ctx
// is or derives from, in that task's turn, or on a free slot. It reports
// whether it did. It returns ctx.Err() if ctx was done while it waited for
// the task's turn.
func (q *Queue) tryRun(ctx context.Context, run func(scheduler.Slot)) (bool, error) {
	var inner *taskCtx // the innermost work of ctx that runs, whose slot a new one carries on
	for c := workOf(ctx); c != nil; c = workOf(c.Context) {
		if c.ended() {
			continue
		}
		if inner == nil {
			inner = c
		}
		if !q.runsOn(c.slot) {
			continue
		}
		// run would run in c's place, on a slot it holds of q or of a
		// target above: it takes its turn with c's other work.
		switch ok, err := c.takeTurn(ctx); {
		case err != nil:
			return false, err
		case ok:
			return c.tryRun(q.s, run), nil
		}
		// c returned meanwhile: its context is an outsider's, and its slot,
		// which the worker has not given back yet, is not the caller's.
		if inner == c {
			inner = nil
		}
	}
	sl := scheduler.Slot{}
	if inner != nil {
		sl = inner.slot
	}
	return q.s.TryRun(sl, run), nil
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
	ran, terr := q.tryRun(ctx, func(sl scheduler.Slot) { err = q.runHere(ctx, sl, f) })
	switch {
	case terr != nil:
		q.canceled.Add(1)
		return terr
	case ran:
		return err
	}
	return q.wait(ctx, f)
}

// runHere runs f for RunSync on the calling goroutine, on the slot sl of q
// that it holds, with a context of its own, and returns its error. A panic in
// f is re-panicked, as a *PanicError with f's stack.
func (q *Queue) runHere(ctx context.Context, sl scheduler.Slot, f func(context.Context) error) error {
	c := &taskCtx{}
	c.start(q, ctx, sl)
	p, err := q.callHere(c, f, func() {
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
// on the caller. Through await: a call whose f could never start while the
// caller waits panics before it is queued.
func (q *Queue) wait(ctx context.Context, f func(context.Context) error) (err error) {
	if q.isClosed() {
		q.rejected.Add(1) // closed to anyone: no wait to judge
		return ErrClosed
	}
	await(ctx, "RunSync", waited{q: q}, func() error {
		err = q.waitTurn(ctx, f)
		return nil
	})
	return err
}

// waitTurn queues f, waits for a worker to run it and returns its outcome,
// or ctx.Err() once ctx is done.
func (q *Queue) waitTurn(ctx context.Context, f func(context.Context) error) error {
	c := &syncCall{f: f}
	c.tc.q, c.tc.Context = q, ctx
	c.call.Arm(ctx)
	id, err := q.enqueue(ctx, c)
	if err != nil {
		q.rejected.Add(1)
		return err
	}
	q.addWait(c)
	delivered, ran := c.call.Wait(ctx)
	q.removeWait(c)
	if !delivered {
		hold := q.s.Hold() // q is not idle until the call is counted
		defer hold.Release()
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
	q := c.tc.q
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
