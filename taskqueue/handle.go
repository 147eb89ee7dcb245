package taskqueue

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// A Handle is the caller's view of a task submitted with RunAsync, RunAfter
// or RunBarrier: it reports when the task is done and how it ended, and
// cancels it before it starts. A Handle is made by the queue; the zero Handle
// is not usable: its methods panic.
//
// A Handle is safe for use by multiple goroutines. It must not be copied.
// The return of the task happens before Wait returns, before IsDone reports
// true and before the channel returned by Done is closed.
type Handle struct {
	tc    taskCtx              // the context the task receives, the queue it was submitted to, and the slot it holds while it runs
	id    atomic.Uint64        // its scheduler.ID once queued; 0 while it waits for its due time, inFlight while runDue queues it
	state atomic.Pointer[node] // see node
	// done is counted down when the task is done: the waits that watch no
	// context wait on it, which costs no allocation; sleepers counts them.
	done     sync.WaitGroup
	sleepers atomic.Int32
	awaited  bool // submitted with Awaited: a panic is the handle's alone
}

// A node is what a Handle's state points to. While the task is pending, the
// state is nil or the newest of a list of nodes, pushed with
// compare-and-swap: the channel of Done, the waits that also watch a
// context, the callbacks of continuations and groups, and, for a delayed
// task, the node that holds its reservation. Nodes are never changed once
// pushed, so that any goroutine may walk the list it loaded. Once the task is
// done, the state is its outcome, which ends the list for good; the task's
// finisher swaps it in and signals every node of the list it took. The
// outcome keeps the channel of Done, if the list had one, so that Done
// returns the same channel before and after.
type node struct {
	next *node
	kind nodeKind
	err  error // outcome: how the task ended
	// ch: doneChan: closed when done; waitChan: receives once; outcome: the
	// doneChan's, if Done was called while pending; roomWaiting: closed when
	// the wait ends.
	ch   chan struct{}
	stop func() bool            // doneChan: stops the watch of the task's context
	res  *scheduler.Reservation // delayed: the room the task holds
	call func() bool            // callback: called when done; reports whether it passed the outcome on to a watcher
	prev *Handle                // thenWaiting: the task the continuation follows
	// waitChan: waiting, then delivered by finish or abandoned by its Wait,
	// whichever swaps first, so that a Wait that gave up is no watcher.
	// outcome: delivered once ch is closed (see closeDone). roomWaiting:
	// abandoned when the wait gave up for a canceler (see cancelRoomWait).
	wait atomic.Uint32
}

// The states of a waitChan node.
const (
	waitWaiting uint32 = iota
	waitDelivered
	waitAbandoned
)

type nodeKind uint8

const (
	outcome  nodeKind = iota // the task is done
	doneChan                 // the channel of Done
	waitChan                 // a Wait call's that also watches a context
	delayed                  // the reservation of a task that waits for its due time
	callback                 // a function to call when the task is done
)

// succeeded is the outcome of every task that returned nil.
var succeeded = &node{kind: outcome}

// closedChan is returned by Done for tasks done before anyone asked.
// A task done after someone asked keeps the channel they got in its
// outcome's node, so that Done returns the same channel on every call.
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

// init readies h for a task submitted to q with ctx.
func (h *Handle) init(ctx context.Context, q *Queue) {
	h.tc.Context, h.tc.q = ctx, q
	h.awaited = ctx.Value(awaitedKey{}) != nil
	h.done.Add(1)
}

// ctx returns the context the task was submitted with.
func (h *Handle) ctx() context.Context { return h.tc.Context }

// IsDone reports, without blocking, whether the task is done: it returned,
// panicked, was canceled, or was not accepted. A task whose context is done
// before it starts is canceled by the first of IsDone, Err, Done or Wait
// that sees it, if the queue has not reached it first, so that IsDone
// reports true as soon as Done's channel would be closed.
func (h *Handle) IsDone() bool {
	h.mustBeMade()
	if h.settled() {
		return true
	}
	if ctx := h.ctx(); ctx != nil && h.tc.q != nil {
		if err := ctx.Err(); err != nil {
			h.tc.q.cancel(h, err) // does nothing if the task has started
			return h.settled()
		}
	}
	return false
}

// settled reports whether the task has its outcome.
func (h *Handle) settled() bool {
	s := h.state.Load()
	return s != nil && s.kind == outcome
}

// Done returns a channel that is closed when the task is done: it returned,
// panicked, was canceled, or its queue was closed with CloseNow. When the
// task's context is done before the task starts, the task is canceled and the
// channel closed without waiting for the queue to reach the task. Every call
// returns the same channel. Asking for it is no waiting for the task's panic
// (see WithPanicHandler): submit the task with a context made by Awaited to
// have its panic for the handle alone.
func (h *Handle) Done() <-chan struct{} {
	h.mustBeMade()
	if h.IsDone() { // a task whose context is done is canceled here, at once
		return h.state.Load().doneChan()
	}
	var w *node
	for {
		top := h.state.Load()
		var ch <-chan struct{}
		if top != nil && top.kind == outcome {
			ch = top.doneChan()
		} else if n := find(top, doneChan); n != nil {
			ch = n.ch
		}
		if ch != nil { // done, or another call pushed the channel first
			if w != nil && w.stop != nil {
				w.stop()
			}
			return ch
		}
		if w == nil {
			w = &node{kind: doneChan, ch: make(chan struct{})}
			if h.ctx().Done() != nil {
				w.stop = context.AfterFunc(h.ctx(), func() { h.tc.q.cancel(h, h.ctx().Err()) })
			}
		}
		w.next = top
		if h.state.CompareAndSwap(top, w) {
			return w.ch
		}
	}
}

// doneChan returns the channel of Done for an outcome node: the one handed
// out while the task was pending, closed (by this call, if the finisher has
// not got to it yet), or closedChan.
func (n *node) doneChan() <-chan struct{} {
	if n.ch == nil {
		return closedChan
	}
	n.closeDone()
	return n.ch
}

// closeDone closes, once, the channel of Done that the outcome node n keeps,
// and returns once it is closed: the finisher and every Done that finds the
// outcome race to close it, and those that lose wait for the instant it
// takes the winner to, so that no Done returns an open channel once the task
// is done.
func (n *node) closeDone() {
	if n.wait.CompareAndSwap(waitWaiting, waitDelivered) {
		close(n.ch)
		return
	}
	<-n.ch
}

// find returns the first node of kind in the list from top, or nil.
func find(top *node, kind nodeKind) *node {
	for n := top; n != nil; n = n.next {
		if n.kind == kind {
			return n
		}
	}
	return nil
}

// Err returns nil while the task is pending or running. Once it is done, Err
// returns the error the task returned; a *PanicError if it panicked;
// ErrGoexit if it called runtime.Goexit; context.Canceled if Cancel stopped
// it; the error of its context (ctx.Err()) if that was done before the task
// started, and the queue or a look at the handle found it so; ErrClosed if
// the queue was closed before it started (CloseNow drops a task whose context
// is done, and nobody looked, as any other), or before it was accepted; ErrQueueFull if it was not accepted because the queue was
// full.
func (h *Handle) Err() error {
	if !h.IsDone() {
		return nil
	}
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
// allocation when neither context can be done.
//
// A task that waits keeps its slot, of its queue and of each target above
// it, while it waits. A wait that could never end panics instead: one from
// the task itself (with its context, or one derived from it), and one from a
// task that holds the one slot of a serial queue that the task waited for
// needs to start (a task of the same serial queue, or of a queue whose
// target is a serial queue that the awaited task runs on too). A task is
// told by its context: with another, such as context.Background(), the wait
// cannot be told from an outsider's and lasts until that context is done.
// On concurrent queues, tasks that wait for tasks of the same queue or tree
// hold their slots as a pool's workers do: when every slot the awaited task
// could run on is held by such a wait, the waits last until their contexts
// end. To wait inside a task for work of its own queue without holding a
// slot, chain it with Then instead.
func (h *Handle) Wait(ctx context.Context) error {
	mustCtx("Handle.Wait", ctx)
	h.mustBeMade()
	if h.IsDone() {
		return h.Err()
	}
	return await(ctx, "Handle.Wait", waited{q: h.tc.q, task: &h.tc, after: h.antecedent()}, func() error { return h.wait(ctx) })
}

func (h *Handle) wait(ctx context.Context) error {
	if ctx.Done() == nil && h.ctx().Done() == nil {
		h.sleepers.Add(1)
		h.done.Wait()
		return h.Err()
	}
	w := &node{kind: waitChan, ch: make(chan struct{}, 1)}
	if !h.push(w) {
		return h.Err()
	}
	taskDone := h.ctx().Done()
	for {
		select {
		case <-w.ch:
			return h.Err()
		case <-taskDone:
			taskDone = nil // cancel the task if it has not started; wait on
			h.tc.q.cancel(h, h.ctx().Err())
		case <-ctx.Done():
			// w stays in the list; its signal goes unread. If finish came
			// first, its outcome is this Wait's: a panic then reaches the
			// caller, not the handler; otherwise the handler's.
			if w.wait.CompareAndSwap(waitWaiting, waitAbandoned) {
				return ctx.Err()
			}
			<-w.ch
			return h.Err()
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
// it is done already. f reports whether it passed the outcome on to someone
// who will see it (a continuation's watcher); f must not block.
func (h *Handle) notify(f func() bool) {
	if !h.push(&node{kind: callback, call: f}) {
		f()
	}
}

// Cancel stops the task if it has not started, reporting whether it did; the
// handle then completes with context.Canceled. A task that has started runs
// to the end: Cancel does not interrupt it (cancel the task's context for
// that). A canceled delayed task leaves its queue's timer, and its room in a
// bounded queue is free at once. Of Cancels of one task from several
// goroutines at once, one reports true and completes the handle; the others
// report false, and may return before it is done.
func (h *Handle) Cancel() bool {
	h.mustBeMade()
	return h.tc.q.cancel(h, context.Canceled)
}

// cancel completes h with err if its task has not started, reporting whether
// it did: a queued task leaves the scheduler, a delayed one the heap, a
// continuation the task it waits for (see Then).
func (q *Queue) cancel(h *Handle, err error) bool {
	if w := h.pending(roomWaiting); w != nil {
		return q.cancelRoomWait(h, w, err)
	}
	if id := h.id.Load(); id != 0 && id != inFlight {
		return q.dequeue(h, scheduler.ID(id), err)
	}
	if n := h.waitingNode(); n != nil {
		return q.cancelWaiting(h, n, err)
	}
	return q.cancelDelayed(h, err)
}

// pending returns the node of kind of h's task while it is pending, or nil.
func (h *Handle) pending(kind nodeKind) *node {
	top := h.state.Load()
	if top != nil && top.kind == outcome {
		return nil
	}
	return find(top, kind)
}

// reservation returns the room a delayed task holds, or nil.
func (h *Handle) reservation() *scheduler.Reservation {
	if n := find(h.state.Load(), delayed); n != nil {
		return n.res
	}
	return nil
}

// finish completes the task with err and signals those waiting for it.
// Exactly one path finishes a task: the scheduler's lock (TryDequeue against
// the worker's pop) and the queue's lock (for delayed tasks) decide which.
// It reports whether anyone was waiting for the task: a Wait, a
// continuation or a group; not the channel of Done, whose readers may have
// left.
func (h *Handle) finish(err error) (watched bool) {
	list, out := h.settle(err)
	for n := list; n != nil; n = n.next {
		switch n.kind {
		case doneChan:
			if n.stop != nil {
				n.stop()
			}
			out.closeDone() // out keeps n's channel; its readers may have left: no watcher
		case waitChan:
			if n.wait.CompareAndSwap(waitWaiting, waitDelivered) {
				n.ch <- struct{}{}
				watched = true
			}
		case callback:
			if n.call() {
				watched = true
			}
		}
	}
	watched = watched || h.sleepers.Load() > 0
	h.done.Done()
	return watched
}

// settle swaps in the outcome err for the list of nodes waiting, and returns
// both. The outcome keeps the list's channel of Done, if it has one, which
// finish then closes: Done keeps returning it.
func (h *Handle) settle(err error) (list, out *node) {
	for {
		top := h.state.Load()
		out = succeeded
		if dc := find(top, doneChan); err != nil || dc != nil {
			out = &node{kind: outcome, err: err}
			if dc != nil {
				out.ch = dc.ch
			}
		}
		if h.state.CompareAndSwap(top, out) {
			return top, out
		}
	}
}

// mustBeMade panics on a zero Handle: one the queue made has its queue, or
// its outcome already.
func (h *Handle) mustBeMade() {
	if h.tc.q == nil && h.state.Load() == nil {
		panic("taskqueue: use of a zero Handle; handles are made by a queue's RunAsync, RunAfter and RunBarrier")
	}
}
