package taskqueue

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// A Handle is the caller's view of a task submitted with RunAsync, RunAfter
// or RunBarrier: it reports when the task is done and how it ended, and
// cancels it before it starts. A Handle is made by the queue; its zero value
// is not useful.
//
// A Handle is safe for use by multiple goroutines. It must not be copied.
// The return of the task happens before Wait returns, before IsDone reports
// true and before the channel returned by Done is closed.
type Handle struct {
	ctx   context.Context      // the context the task was submitted with
	q     *Queue               // the queue it was submitted to
	id    atomic.Uint64        // its scheduler.ID once queued; 0 while it waits for its due time
	state atomic.Pointer[node] // see node
}

// A node is what a Handle's state points to. While the task is pending, the
// state is nil or the newest of a list of nodes: those waiting for the task,
// pushed with compare-and-swap, on top of, for a delayed task, the node that
// holds its reservation. Once the task is done, the state is its outcome,
// which ends the list for good; the task's finisher swaps it in and signals
// every node of the list it took.
type node struct {
	next *node
	kind nodeKind
	err  error                  // outcome: how the task ended
	ch   chan struct{}          // doneChan: closed when done; waitChan: receives once
	stop func() bool            // doneChan: stops the watch of the task's context
	park *parker                // pooled: woken when done
	res  *scheduler.Reservation // delayed: the room the task holds
	call func()                 // callback: called when done
}

type nodeKind uint8

const (
	outcome  nodeKind = iota // the task is done
	doneChan                 // the channel of Done
	waitChan                 // a Wait call's that also watches a context
	pooled                   // a Wait call's, reused once woken
	delayed                  // the reservation of a task that waits for its due time
	callback                 // a function to call when the task is done
)

// succeeded is the outcome of every task that returned nil.
var succeeded = &node{kind: outcome}

// waiters are the nodes of Wait calls that watch no context, reused, so that
// such a wait allocates nothing; see BenchmarkRunAsyncWait.
var waiters = sync.Pool{New: func() any { return &node{kind: pooled, park: newParker()} }}

// closedChan is returned by Done for tasks done before anyone asked.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// aborted is the error of a task that did not return: it panicked (p is not
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

// IsDone reports, without blocking, whether the task is done: it returned,
// panicked, was canceled, or was not accepted.
func (h *Handle) IsDone() bool {
	s := h.state.Load()
	return s != nil && s.kind == outcome
}

// Done returns a channel that is closed when the task is done: it returned,
// panicked, was canceled, or its queue was closed with CloseNow. When the
// task's context is done before the task starts, the task is canceled and the
// channel closed without waiting for the queue to reach the task. Every call
// returns the same channel.
func (h *Handle) Done() <-chan struct{} {
	var w *node
	for {
		top := h.state.Load()
		ch := closedChan
		if top == nil || top.kind != outcome {
			ch = doneChanOf(top)
			// A walk that began before the task finished may have followed a
			// pooled node into another handle's list: trust what it found only
			// if the task is still pending, which means the list was intact.
			if h.IsDone() {
				ch = closedChan
			}
		}
		if ch != nil {
			if w != nil && w.stop != nil {
				w.stop()
			}
			return ch
		}
		if w == nil {
			w = &node{kind: doneChan, ch: make(chan struct{})}
			if h.ctx.Done() != nil {
				w.stop = context.AfterFunc(h.ctx, func() { h.q.cancel(h, h.ctx.Err()) })
			}
		}
		w.next = top
		if h.state.CompareAndSwap(top, w) {
			return w.ch
		}
	}
}

// doneChanOf returns the channel of the Done node in the list from top, or nil.
func doneChanOf(top *node) chan struct{} {
	for n := top; n != nil; n = n.next {
		if n.kind == doneChan {
			return n.ch
		}
	}
	return nil
}

// Err returns nil while the task is pending or running. Once it is done, Err
// returns the error the task returned; a *PanicError if it panicked;
// ErrGoexit if it called runtime.Goexit; context.Canceled if Cancel stopped
// it; the error of its context (ctx.Err()) if that was done before the task
// started; ErrClosed if the queue was closed before it started, or before it
// was accepted; ErrQueueFull if it was not accepted because the queue was
// full.
func (h *Handle) Err() error {
	s := h.state.Load()
	if s == nil || s.kind != outcome {
		return nil
	}
	if a, ok := s.err.(aborted); ok {
		return a.unwrap()
	}
	return s.err
}

// Wait blocks until the task is done and returns Err, or until ctx is done and
// returns ctx.Err(); the task then goes on. If the task's own context is done
// before the task starts, the task is canceled at once. Waiting costs no
// allocation. A task that waits for a task of a queue of its own tree lends
// its slots of their shared targets while it waits (see WithTarget), so that
// waiting tasks cannot hold every slot the awaited task needs.
func (h *Handle) Wait(ctx context.Context) error {
	if h.IsDone() {
		return h.Err()
	}
	var err error
	// A task that waits for a queue of its own tree lends its slots of the
	// targets above that queue meanwhile; see scheduler.Scheduler.Await.
	h.q.s.Await(func() { err = h.wait(ctx) })
	return err
}

func (h *Handle) wait(ctx context.Context) error {
	if ctx.Done() == nil && h.ctx.Done() == nil {
		w := waiters.Get().(*node)
		if h.push(w) {
			w.park.wait()
		}
		// The finisher is done with w: it read w.next before waking it.
		w.next = nil
		waiters.Put(w)
		return h.Err()
	}
	w := &node{kind: waitChan, ch: make(chan struct{}, 1)}
	if !h.push(w) {
		return h.Err()
	}
	taskDone := h.ctx.Done()
	for {
		select {
		case <-w.ch:
			return h.Err()
		case <-taskDone:
			taskDone = nil // cancel the task if it has not started; wait on
			h.q.cancel(h, h.ctx.Err())
		case <-ctx.Done():
			return ctx.Err() // w stays in the list; its signal goes unread
		}
	}
}

// push adds w to the nodes waiting for the task, reporting false if the
// task is done already.
func (h *Handle) push(w *node) bool {
	for {
		top := h.state.Load()
		if top != nil && top.kind == outcome {
			return false
		}
		w.next = top
		if h.state.CompareAndSwap(top, w) {
			return true
		}
	}
}

// notify arranges for f to be called once the task is done: by the
// goroutine that completes it, after the task's outcome is set, or at once if
// it is done already. f must not block.
func (h *Handle) notify(f func()) {
	if !h.push(&node{kind: callback, call: f}) {
		f()
	}
}

// Cancel stops the task if it has not started, reporting whether it did; the
// handle then completes with context.Canceled. A task that has started runs
// to the end: Cancel does not interrupt it (cancel the task's context for
// that). A canceled delayed task leaves its queue's timer, and its room in a
// bounded queue is free at once.
func (h *Handle) Cancel() bool {
	return h.q.cancel(h, context.Canceled)
}

// cancel completes h with err if its task has not started, reporting whether
// it did: a queued task leaves the scheduler, a delayed one the heap, a
// continuation the task it waits for (see Then).
func (q *Queue) cancel(h *Handle, err error) bool {
	if id := h.id.Load(); id != 0 {
		return q.dequeue(h, scheduler.ID(id), err)
	}
	if n := h.waitingNode(); n != nil {
		return q.cancelWaiting(h, n, err)
	}
	return q.cancelDelayed(h, err)
}

// reservation returns the room a delayed task holds, or nil. The task's
// queue must be locked and the task still delayed, so that its list of nodes
// cannot be taken by a finisher during the walk.
func (h *Handle) reservation() *scheduler.Reservation {
	for n := h.state.Load(); n != nil; n = n.next {
		if n.kind == delayed {
			return n.res
		}
	}
	return nil
}

// finish completes the task with err and signals those waiting for it.
// Exactly one path finishes a task: the scheduler's lock (TryDequeue against
// the worker's pop) and the queue's lock (for delayed tasks) decide which.
func (h *Handle) finish(err error) {
	out := succeeded
	if err != nil {
		out = &node{kind: outcome, err: err}
	}
	for n := h.state.Swap(out); n != nil; {
		next := n.next // before the signal, after which a pooled node is reused
		switch n.kind {
		case doneChan:
			if n.stop != nil {
				n.stop()
			}
			close(n.ch)
		case waitChan:
			n.ch <- struct{}{}
		case pooled:
			n.park.wake()
		case callback:
			n.call()
		}
		n = next
	}
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
	err := h.q.invoke(h.ctx, f)
	normal = true
	if err != nil {
		h.q.failed.Add(1)
	}
	h.finish(err)
}

// abort completes a task that panicked with v, or that called
// runtime.Goexit if v is nil. It runs in the deferred call that recovered v,
// so the stack it records is the panic's. The panic goes to the queue's
// panic handler before the handle completes.
func (h *Handle) abort(v any) {
	if v == nil {
		h.q.failed.Add(1)
		h.finish(aborted{})
		return
	}
	p := newPanicError(v, h.q)
	h.q.panicked.Add(1)
	h.q.onPanic(p)
	h.finish(aborted{p})
}

// runner is a task the queue runs: a scheduler.Task with a Handle.
type runner interface {
	scheduler.Task
	handle() *Handle
}

// errTask is an untyped task: 48 bytes, a single allocation per RunAsync.
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
	if err := f.Wait(ctx); !f.IsDone() {
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
