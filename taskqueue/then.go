package taskqueue

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// thenWaiting marks the node of a continuation that waits for the task it
// follows: its stop claims the continuation, for the first of the one who
// queues it and the one who cancels it.
const thenWaiting = callback + 1

// roomWaiting marks the node of a continuation that waits for room on a full
// queue, on a goroutine of its own: its stop ends that wait, its channel is
// closed once the goroutine has queued the task or given up, and its wait
// field goes from waitWaiting to waitAbandoned when the goroutine gave up
// because stop was called, which leaves the continuation to the canceler
// (see cancelRoomWait).
const roomWaiting = thenWaiting + 1

// errStopWait is the cause with which a canceler ends a continuation's wait
// for room.
var errStopWait = errors.New("taskqueue: the wait for room was canceled")

// Then submits f to run on q once the task of h has returned nil, and
// returns f's Handle at once: a continuation. While it waits for h, the
// continuation holds no slot of any queue and no goroutine; when h's task
// returns, the goroutine that ran it queues f on q, and goes on. So a stage
// of a pipeline hands its result to the next stage's queue without holding
// its own slot while the next stage is busy, as a RunSync nested in the
// first stage's task would.
//
// If h's task fails (it returns an error, panics, is canceled or was never
// accepted), f never runs and the continuation completes with h's error
// (see Handle.Err). If ctx is done before f starts, while it waits for h
// included, f never runs and the continuation completes with ctx.Err(); its
// Cancel works at any time before f starts too. If q is closed when h's task
// returns, the continuation completes with ErrClosed. On a full queue made
// WithMaxQueued, the continuation fails with ErrQueueFull or waits for room
// until ctx is done, as q's policy says, without holding up the goroutine that
// ran h's task. When more than one of these applies, the first to happen
// decides; at the call itself, a done ctx comes first, then a closed q, and
// h's outcome, even if h has failed already, only after them.
//
// Then is the untyped form of the generic Then. Then panics if q or f is nil.
func (h *Handle) Then(ctx context.Context, q *Queue, f func(context.Context) error) *Handle {
	mustCtx("Handle.Then", ctx)
	if f == nil {
		nilFunc("Handle.Then")
	}
	t := &errTask{fn: f}
	q.follow(ctx, h, &t.Handle, t, "Handle.Then")
	return &t.Handle
}

// Then submits fn to run on q with the value of prev's task once that task
// has returned with a nil error, and returns a Future for fn's result at
// once: a continuation. It is the typed form of Handle.Then, which documents
// it. Then panics if prev, q or fn is nil.
func Then[T, U any](ctx context.Context, prev *Future[T], q *Queue, fn func(context.Context, T) (U, error)) *Future[U] {
	mustCtx("Then", ctx)
	if fn == nil {
		nilFunc("Then")
	}
	if prev == nil {
		panic("taskqueue: Then with a nil Future")
	}
	t := &Future[U]{fn: func(ctx context.Context) (U, error) { return fn(ctx, prev.val) }}
	q.follow(ctx, &prev.Handle, &t.Handle, (*futureTask[U])(t), "Then")
	return t
}

// follow makes the task t, whose Handle is h, wait for the task of prev,
// to be queued on q when that returns.
func (q *Queue) follow(ctx context.Context, prev, h *Handle, t scheduler.Task, call string) {
	if q == nil {
		panic("taskqueue: " + call + " with a nil queue")
	}
	if prev == nil {
		panic("taskqueue: " + call + " on a nil Handle")
	}
	prev.mustBeMade()
	h.init(ctx, q)
	if err := ctx.Err(); err != nil {
		q.reject(h, err)
		return
	}
	if q.isClosed() {
		q.reject(h, ErrClosed)
		return
	}
	claimed := new(atomic.Bool)
	claim := func() bool { return !claimed.Swap(true) }
	h.state.Store(&node{kind: thenWaiting, stop: claim, prev: prev})
	if ctx.Done() != nil {
		h.Done() // watch ctx meanwhile: its end cancels the continuation
	}
	prev.notify(func() bool {
		return claim() && q.queueAfter(prev, h, t)
	})
}

// queueAfter queues the continuation t, whose Handle is h, now that the task
// of prev is done; it runs on the goroutine that completed prev and must not
// block.
//
// It reports whether prev's failure, if prev failed, reaches someone who
// will see it: the continuation's watchers, or its submitter (Awaited).
func (q *Queue) queueAfter(prev, h *Handle, t scheduler.Task) bool {
	if err := prev.Err(); err != nil {
		q.canceled.Add(1)
		return h.finish(err) || h.awaited
	}
	id, err := q.s.Enqueue(t)
	if err == scheduler.ErrFull && !q.failFull {
		q.waitForRoom(h, t)
		return true
	}
	if err != nil {
		q.reject(h, queueError(err))
		return true
	}
	h.id.Store(uint64(id))
	return true
}

// waitForRoom queues the continuation t, whose Handle is h, once q has room,
// on a goroutine of its own, not on the one that ran the task it follows,
// which may hold a slot that the room waits for. A cancel stops the wait
// (see cancelRoomWait).
func (q *Queue) waitForRoom(h *Handle, t scheduler.Task) {
	ctx, stop := context.WithCancelCause(h.ctx())
	w := &node{kind: roomWaiting, ch: make(chan struct{}), stop: func() bool { stop(errStopWait); return true }}
	if !h.push(w) {
		stop(nil)
		return // completed meanwhile: it cannot be, claimed as it is, but nothing is lost
	}
	go func() {
		defer close(w.ch)
		defer stop(nil)
		id, err := q.s.EnqueueContext(ctx, t)
		switch {
		case err == nil:
			h.id.Store(uint64(id))
		case context.Cause(ctx) == errStopWait:
			w.wait.Store(waitAbandoned) // the canceler completes h
		default:
			q.reject(h, queueError(err))
		}
	}()
}

// cancelRoomWait ends the wait for room w of the continuation h and
// completes it with err if the wait gave up for it, reporting whether it
// did. It waits for the wait's goroutine to have queued the task or given
// up, which it does at once once stopped: a task queued meanwhile is then
// canceled as any queued task, and a wait that ended for another reason (its
// context, a closed queue) has completed h itself.
func (q *Queue) cancelRoomWait(h *Handle, w *node, err error) bool {
	w.stop()
	<-w.ch
	if id := h.id.Load(); id != 0 {
		return q.dequeue(h, scheduler.ID(id), err)
	}
	if !w.wait.CompareAndSwap(waitAbandoned, waitDelivered) {
		return false // completed by the wait, or by another canceler
	}
	q.canceled.Add(1)
	h.finish(err)
	return true
}

// antecedent returns the task that h's continuation waits for, or nil if h
// is no continuation or no longer waits.
func (h *Handle) antecedent() *Handle {
	if n := h.waitingNode(); n != nil {
		return n.prev
	}
	return nil
}

// waitingNode returns the node of h's continuation while it waits for the
// task it follows, or nil.
func (h *Handle) waitingNode() *node { return h.pending(thenWaiting) }

// cancelWaiting completes with err the continuation h, whose node is n, if
// it still waits for the task it follows, reporting whether it did.
func (q *Queue) cancelWaiting(h *Handle, n *node, err error) bool {
	if !n.stop() {
		return false // queued meanwhile, or being queued
	}
	q.canceled.Add(1)
	h.finish(err)
	return true
}
