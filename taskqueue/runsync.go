package taskqueue

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// RunSync runs f on q and blocks until it returns, then returns its error.
//
// If the calling goroutine is running a task of q, f runs on it at once, in
// the task's place: the task waits for f, so the queue's limit and, on a
// serial queue, exclusivity hold, and RunSync from inside a serial queue's
// own task completes instead of deadlocking (the rule of .NET's
// TryExecuteTaskInline). If q is idle, f runs on the calling goroutine too,
// as libdispatch does, which saves the hand-off to a worker; exclusivity and
// submission order hold all the same. Neither costs an allocation. Otherwise
// f waits its turn in the queue and runs on a worker, and RunSync waits for
// it; that costs no allocation either. A goroutine that a task starts is not
// running the task: its RunSync waits its turn.
//
// If ctx is done before f starts, f does not run and RunSync returns
// ctx.Err(); if ctx is done while f runs, RunSync returns ctx.Err() at once
// and f runs on (a panic in it then goes to the queue's panic handler).
// RunSync returns ErrClosed if q is closed and ErrQueueFull as RunAsync
// would. If f panics, RunSync panics in the caller with the *PanicError,
// which holds the panic value and the stack of f; if f calls
// runtime.Goexit, so does RunSync.
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
	if err := ctx.Err(); err != nil {
		q.rejected.Add(1)
		return err
	}
	var err error
	if q.s.TryRun(func() {
		_, err = call(q, ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx) })
	}) {
		return err
	}
	return q.wait(ctx, f)
}

// RunSync runs f on q, blocks until it returns and returns its result. It is
// the typed form of Queue.RunSync, which documents it. Unlike it, the typed
// form allocates when it waits for its turn, for its result.
func RunSync[T any](ctx context.Context, q *Queue, f func(context.Context) (T, error)) (T, error) {
	if f == nil {
		nilFunc("RunSync")
	}
	if err := ctx.Err(); err != nil {
		q.rejected.Add(1)
		var zero T
		return zero, err
	}
	var v T
	var err error
	if q.s.TryRun(func() { v, err = call(q, ctx, f) }) {
		return v, err
	}
	return waitFor(ctx, q, f)
}

// waitFor is Queue.wait for a task with a result.
func waitFor[T any](ctx context.Context, q *Queue, f func(context.Context) (T, error)) (T, error) {
	var v T
	err := q.wait(ctx, func(ctx context.Context) (err error) {
		v, err = f(ctx)
		return err
	})
	return v, err
}

// call runs f for RunSync on the calling goroutine, which holds a slot of q.
// A panic in f becomes a *PanicError with f's stack, re-panicked.
func call[T any](q *Queue, ctx context.Context, f func(context.Context) (T, error)) (v T, err error) {
	normal := false
	defer func() {
		if !normal {
			if p := recover(); p != nil {
				q.panicked.Add(1)
				panic(newPanicError(p, q)) // the stack is f's: we are still unwinding it
			}
			q.failed.Add(1) // runtime.Goexit goes on, as it would have for a plain call
		}
	}()
	if q.observer != nil {
		err = q.observe(func() (err error) { v, err = f(ctx); return err })
	} else {
		v, err = f(ctx)
	}
	normal = true
	if err != nil {
		q.failed.Add(1)
	}
	return v, err
}

// A syncCall is a RunSync call that waits for its turn on a busy queue.
// Calls are pooled, each with its channel, so that waiting costs no
// allocation.
type syncCall struct {
	q      *Queue
	ctx    context.Context
	f      func(context.Context) error
	err    error
	p      *PanicError   // f's panic
	goexit bool          // f called runtime.Goexit
	state  atomic.Uint32 // see the constants below
	// When state becomes callDone, the worker wakes the caller: through
	// done, made for a caller that also watches its context, or through
	// park otherwise.
	done chan struct{}
	park *parker

	// While the caller waits, the call is in its queue's list of waits
	// (see Waits), under the queue's mutex.
	prev, next *syncCall
	g          uint64    // the caller's goroutine ID
	since      time.Time // when the caller began to wait
}

// The states of a syncCall. It moves from pending to running on a worker,
// then to done; the caller may move it from pending or running to abandoned
// when its context ends. The compare-and-swaps decide who owns the outcome.
const (
	callPending uint32 = iota
	callRunning
	callDone
	callAbandoned
)

var syncCalls = sync.Pool{New: func() any { return &syncCall{park: newParker()} }}

// wait queues f and waits for it, for RunSync on a queue that cannot run it
// on the caller.
func (q *Queue) wait(ctx context.Context, f func(context.Context) error) error {
	c := syncCalls.Get().(*syncCall)
	c.q, c.ctx, c.f = q, ctx, f
	if ctx.Done() != nil {
		c.done = make(chan struct{}, 1) // not pooled: a synctest bubble owns it
	}
	id, err := q.enqueue(ctx, c)
	if err != nil {
		c.recycle()
		q.rejected.Add(1)
		return err
	}
	q.addWait(c)
	done := true
	// While it waits, the caller lends its slots of the targets above q:
	// a task of a tree that waits for a queue of the same tree must not hold
	// the slots that queue needs.
	q.s.Await(func() {
		if ctx.Done() == nil {
			c.park.wait() // nothing can end the wait but the call's end
			return
		}
		select {
		case <-c.done:
		case <-ctx.Done():
			done = false
		}
	})
	q.removeWait(c)
	if done {
		return c.result()
	}
	if q.s.TryDequeue(id) {
		q.canceled.Add(1)
		c.recycle()
		return ctx.Err()
	}
	if c.state.CompareAndSwap(callPending, callAbandoned) ||
		c.state.CompareAndSwap(callRunning, callAbandoned) {
		return ctx.Err() // c stays with the worker; it is not reused
	}
	<-c.done // f finished meanwhile
	return c.result()
}

// result recycles c and returns its outcome as RunSync does: f's error, or
// f's panic or runtime.Goexit in the caller.
func (c *syncCall) result() error {
	err, p, goexit := c.err, c.p, c.goexit
	c.recycle()
	switch {
	case p != nil:
		panic(p)
	case goexit:
		runtime.Goexit()
	}
	return err
}

func (c *syncCall) recycle() {
	c.q, c.ctx, c.f, c.err, c.p, c.goexit, c.done = nil, nil, nil, nil, nil, false, nil
	c.state.Store(callPending)
	syncCalls.Put(c)
}

// Run runs the call on a worker.
func (c *syncCall) Run() {
	q := c.q
	if !c.state.CompareAndSwap(callPending, callRunning) {
		q.skipped.Add(1) // abandoned before it started: it never runs
		q.canceled.Add(1)
		return
	}
	if err := c.ctx.Err(); err != nil {
		q.skipped.Add(1)
		q.canceled.Add(1)
		c.end(err, nil, false)
		return
	}
	normal := false
	defer func() {
		if !normal {
			var p *PanicError
			if v := recover(); v != nil {
				p = newPanicError(v, q)
				q.panicked.Add(1)
			} else {
				q.failed.Add(1)
			}
			c.end(nil, p, p == nil) // on Goexit, the worker's goroutine ends after this
		}
	}()
	err := q.invoke(c.ctx, c.f)
	normal = true
	if err != nil {
		q.failed.Add(1)
	}
	c.end(err, nil, false)
}

// end records the call's outcome and hands it to the caller, or, if the
// caller has left, gives a panic to the queue's handler.
func (c *syncCall) end(err error, p *PanicError, goexit bool) {
	q := c.q
	c.err, c.p, c.goexit = err, p, goexit
	if c.state.CompareAndSwap(callRunning, callDone) {
		if c.done != nil {
			c.done <- struct{}{}
		} else {
			c.park.wake()
		}
		return
	}
	if p != nil { // abandoned: nobody else will see the panic
		q.onPanic(p)
	}
}

// close completes a call that CloseNow took out of the queue.
func (c *syncCall) close() {
	if c.state.CompareAndSwap(callPending, callRunning) {
		c.end(ErrClosed, nil, false)
	}
}
