package taskqueue

import (
	"context"
	"runtime"
	"sync/atomic"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// A Handle is the caller's view of a task submitted with RunAsync, RunAfter
// or RunBarrier: it reports when the task is done and how it ended, and
// cancels it before it starts. A Handle is made by the queue; its zero value
// is not useful.
//
// A Handle is safe for use by multiple goroutines. It must not be copied.
// The return of the task happens before Wait returns and before the channel
// returned by Done is closed.
type Handle struct {
	id   atomic.Uint64          // the task's scheduler.ID; zero while a delayed task waits for its time
	ctx  context.Context        // the context the task was submitted with
	q    *Queue                 //
	err  error                  // how the task ended; written once, before wait is set to finished
	wait atomic.Pointer[waiter] // nil until someone waits; finished once the task is done
}

// A waiter is what a Handle's observers wait on.
type waiter struct {
	ch   chan struct{} // closed when the task is done; nil for the sentinels
	stop func() bool   // stops the watch on the task's context; nil if there is none
	sync bool          // a RunSync caller waits: it takes the task's panic
}

var (
	// finished marks a done task.
	finished = &waiter{}
	// syncInline marks a task that RunSync runs on its own goroutine.
	syncInline = &waiter{sync: true}
	// abandoned marks a RunSync task whose caller stopped waiting: if the
	// task panics, nobody will see the panic but the queue's handler.
	abandoned = &waiter{}
)

// closedChan is returned by Done for tasks done before anyone asked.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// aborted is the err of a task that did not return: it panicked (p is not
// nil) or called runtime.Goexit. It keeps those apart from an error the task
// returned, which might itself be a *PanicError from elsewhere.
type aborted struct{ p *PanicError }

func (a aborted) Error() string { return a.unwrap().Error() }

func (a aborted) unwrap() error {
	if a.p != nil {
		return a.p
	}
	return ErrGoexit
}

// Done returns a channel that is closed when the task is done: it returned,
// panicked, was canceled, or its queue was closed with CloseNow. When the
// task's context is done before the task starts, the task is canceled and the
// channel closed without waiting for the queue to reach the task.
func (h *Handle) Done() <-chan struct{} {
	for {
		switch w := h.wait.Load(); w {
		case finished:
			return closedChan
		case nil:
		default:
			return w.ch
		}
		w := &waiter{ch: make(chan struct{})}
		if h.ctx.Done() != nil {
			w.stop = context.AfterFunc(h.ctx, func() { h.q.cancel(h, h.ctx.Err()) })
		}
		if h.wait.CompareAndSwap(nil, w) {
			return w.ch
		}
		if w.stop != nil {
			w.stop() // the task finished meanwhile
		}
	}
}

// Err returns nil while the task is pending or running. Once it is done, Err
// returns the error the task returned; a *PanicError if it panicked;
// ErrGoexit if it called runtime.Goexit; context.Canceled if Cancel stopped
// it; the error of its context (ctx.Err()) if that was done before the task
// started; ErrClosed if the queue was closed before it started, or before it
// was accepted; ErrQueueFull if it was not accepted because the queue was
// full.
func (h *Handle) Err() error {
	if h.wait.Load() != finished {
		return nil
	}
	if a, ok := h.err.(aborted); ok {
		return a.unwrap()
	}
	return h.err
}

// Wait blocks until the task is done and returns Err, or until ctx is done and
// returns ctx.Err(); the task then goes on.
func (h *Handle) Wait(ctx context.Context) error {
	if h.wait.Load() == finished {
		return h.Err()
	}
	select {
	case <-h.Done():
		return h.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Cancel stops the task if it has not started, reporting whether it did; the
// handle then completes with context.Canceled. A task that has started runs
// to the end: Cancel does not interrupt it (cancel the task's context for
// that). A canceled delayed task leaves its queue's timer.
func (h *Handle) Cancel() bool {
	return h.q.cancel(h, context.Canceled)
}

// isDone reports whether the task is done.
func (h *Handle) isDone() bool { return h.wait.Load() == finished }

// finish completes the task with err and returns the waiter it replaced.
// Exactly one path finishes a task: the scheduler's lock (TryDequeue against
// the worker's pop) and the queue's lock (for delayed tasks) decide which.
func (h *Handle) finish(err error) *waiter {
	h.err = err
	w := h.wait.Swap(finished)
	if w != nil && w.ch != nil {
		if w.stop != nil {
			w.stop()
		}
		close(w.ch)
	}
	return w
}

// run calls f with the task's context and completes the task with the
// outcome. A task whose context is done before it starts does not run.
func (h *Handle) run(f func(context.Context) error) {
	if err := h.ctx.Err(); err != nil {
		h.q.skipped.Add(1)
		h.q.canceled.Add(1)
		h.finish(err)
		return
	}
	normal := false
	defer func() {
		if !normal {
			h.abort(recover())
		}
	}()
	err := f(h.ctx)
	normal = true
	h.finish(err)
}

// abort completes a task that panicked with v, or that called
// runtime.Goexit if v is nil. It runs in the deferred call that recovered v,
// so the stack it records is the panic's. A panic goes to the queue's panic
// handler unless a RunSync caller waits to re-panic with it; for a task with a
// Handle, the handler runs before the handle completes.
func (h *Handle) abort(v any) {
	if v == nil {
		h.finish(aborted{})
		return
	}
	p := scheduler.NewPanicError(v)
	h.q.panicked.Add(1)
	// A RunSync task's waiter is set before it starts and is never nil; it
	// changes only to abandoned, when the caller leaves, or to finished,
	// here, so whether the caller takes the panic is decided by the swap.
	if w := h.wait.Load(); w == nil || (!w.sync && w != abandoned) {
		h.q.onPanic(p)
		h.finish(aborted{p})
		return
	}
	if h.finish(aborted{p}) == abandoned {
		h.q.onPanic(p)
	}
}

// syncResult returns the outcome of a task run by RunSync, re-panicking with
// its *PanicError or calling runtime.Goexit as the task did.
func (h *Handle) syncResult() error {
	if a, ok := h.err.(aborted); ok {
		if a.p != nil {
			panic(a.p)
		}
		runtime.Goexit()
	}
	return h.err
}

// runner is a task the queue runs: a scheduler.Task with a Handle.
type runner interface {
	scheduler.Task
	handle() *Handle
}

// errTask is an untyped task.
type errTask struct {
	Handle
	fn func(context.Context) error
}

func (t *errTask) Run()            { t.run(t.fn) }
func (t *errTask) handle() *Handle { return &t.Handle }

// A Future is the Handle of a task that returns a value of type T, made by
// the generic functions RunAsync and RunAfter. Its methods are those of
// Handle, plus Result.
type Future[T any] struct {
	Handle
	fn  func(context.Context) (T, error)
	val T // written by the task before it is done
}

// Result waits for the task as Wait does and returns the value and error the
// task returned. If the task did not return (see Handle.Err), or ctx is done
// first, Result returns the zero T and the error.
func (f *Future[T]) Result(ctx context.Context) (T, error) {
	if err := f.Wait(ctx); f.wait.Load() != finished {
		var zero T
		return zero, err
	}
	return f.val, f.Err() // val stays zero unless the task returned
}

// futureTask is a Future seen by the scheduler: the same memory with a Run
// method, which Future itself does not export.
type futureTask[T any] Future[T]

func (t *futureTask[T]) Run() {
	t.run(func(ctx context.Context) error {
		v, err := t.fn(ctx)
		t.val = v
		return err
	})
}

func (t *futureTask[T]) handle() *Handle { return &t.Handle }
