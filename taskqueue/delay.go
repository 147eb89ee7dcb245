package taskqueue

import (
	"context"
	"time"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// RunAfter is RunAsync for a task that starts no earlier than d from now. The
// task holds no goroutine while it waits; on a serial queue delayed tasks start
// in the order they come due, and in submission order when they come due
// together. Its context is watched while it waits: if the context is done, or
// the handle canceled, the task leaves the queue's timer at once. With d <= 0,
// RunAfter is RunAsync.
func (q *Queue) RunAfter(ctx context.Context, d time.Duration, f func(context.Context) error) *Handle {
	mustCtx("RunAfter", ctx)
	if f == nil {
		nilFunc("RunAfter")
	}
	t := &errTask{fn: f}
	q.submitAfter(ctx, d, &t.Handle, t)
	return &t.Handle
}

// RunAfter submits f to run on q no earlier than d from now and returns a
// Future for its result. It is the typed form of Queue.RunAfter, which
// documents it.
func RunAfter[T any](ctx context.Context, q *Queue, d time.Duration, f func(context.Context) (T, error)) *Future[T] {
	mustCtx("RunAfter", ctx)
	mustQueue(q, "RunAfter")
	if f == nil {
		nilFunc("RunAfter")
	}
	t := &Future[T]{fn: f}
	q.submitAfter(ctx, d, &t.Handle, (*futureTask[T])(t))
	return t
}

// submitAfter holds the task r, whose Handle is h, in the delayed heap until d
// has passed.
func (q *Queue) submitAfter(ctx context.Context, d time.Duration, h *Handle, r runner) {
	if d <= 0 {
		q.submit(ctx, h, r)
		return
	}
	q.mustBeMade()
	h.init(ctx, q)
	if err := ctx.Err(); err != nil {
		q.reject(h, err)
		return
	}
	// The task takes its room in the list now, so that coming due never
	// blocks or fails: it was accepted at submission.
	res, err := q.reserve(ctx)
	if err != nil {
		q.reject(h, err)
		return
	}
	due := time.Now().Add(d)
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock() // giving the room back may run the scheduler's idle function
		res.Cancel()
		q.reject(h, ErrClosed)
		return
	}
	q.delayed.push(due, r, res)
	h.state.Store(&node{kind: delayed, res: res})
	if q.delayed.top().r == r {
		q.armLocked(time.Now())
	}
	q.mu.Unlock()
	if ctx.Done() != nil {
		// Watch the context while the task waits, so that its end frees the
		// timer and the room without waiting for the due time; with q.mu
		// released, since a context that has ended meanwhile cancels the
		// task at once, which takes q.mu.
		h.Done()
	}
}

// inFlight is the ID of a delayed task that runDue has taken from the heap
// and is queuing, without q.mu: a cancel waits for it to be queued.
const inFlight = ^uint64(0)

// runDue moves the delayed tasks that have come due to the scheduler, in due
// order. The timer calls it. It takes the due tasks from the heap under
// q.mu, and queues them with q.mu released, since queuing may run the
// scheduler's idle function (a Keyed's, which reads the queue's Stats): no
// callback runs under a lock of the module. One goroutine moves at a time,
// so that due order holds from one batch to the next; a call that finds
// another moving leaves it a note to look again.
func (q *Queue) runDue() {
	for q.mover.Add(1) == 1 {
		q.moveDue()
		if q.mover.Swap(0) == 1 {
			return // nobody came meanwhile
		}
	}
}

// moveDue moves one batch of due tasks to the scheduler.
func (q *Queue) moveDue() {
	q.mu.Lock()
	now := time.Now()
	var batch []waiting
	for q.delayed.len() > 0 && !q.delayed.top().due.After(now) {
		d := q.delayed.pop()
		if d.r.handle().settled() {
			q.dead-- // canceled while it waited; its room was given back then
			continue
		}
		d.r.handle().id.Store(inFlight)
		batch = append(batch, d)
	}
	var moved chan struct{}
	if len(batch) > 0 {
		moved = make(chan struct{})
		q.moved = moved
	}
	q.armLocked(now)
	q.mu.Unlock()
	if moved == nil {
		return
	}
	for _, d := range batch {
		d.r.handle().id.Store(uint64(d.res.Enqueue(d.r)))
	}
	q.mu.Lock()
	q.moved = nil
	q.mu.Unlock()
	close(moved)
}

// armLocked drops canceled entries from the top of the heap and sets the
// timer for the earliest task left, or stops it if none is left.
func (q *Queue) armLocked(now time.Time) {
	for q.delayed.len() > 0 && q.delayed.top().r.handle().settled() {
		q.delayed.pop()
		q.dead--
	}
	if q.delayed.len() == 0 {
		if q.timer != nil {
			q.timer.Stop()
			q.timer = nil // a queue used in one synctest bubble keeps no timer for the next
		}
		return
	}
	wait := q.delayed.top().due.Sub(now)
	if q.timer == nil {
		q.timer = time.AfterFunc(wait, q.runDue)
	} else {
		q.timer.Reset(wait)
	}
}

// reserve takes room in the scheduler for a task to be queued later, as
// enqueue would wait for it.
func (q *Queue) reserve(ctx context.Context) (*scheduler.Reservation, error) {
	var r *scheduler.Reservation
	var err error
	if q.mayWait(ctx) {
		r, err = q.s.ReserveContext(ctx)
	} else {
		r, err = q.s.Reserve()
	}
	return r, queueError(err)
}

// cancelDelayed completes h with err if its task waits in the delayed heap,
// reporting whether it did.
func (q *Queue) cancelDelayed(h *Handle, err error) bool {
	q.mu.Lock()
	for h.id.Load() == inFlight { // being queued: wait, then take it out
		moved := q.moved
		q.mu.Unlock()
		<-moved
		q.mu.Lock()
	}
	if id := h.id.Load(); id != 0 { // it came due meanwhile
		q.mu.Unlock()
		return q.dequeue(h, scheduler.ID(id), err)
	}
	res := h.reservation()
	if h.settled() || res == nil {
		q.mu.Unlock()
		return false // done, never accepted, or a continuation waiting for its antecedent (see Then)
	}
	h.finish(err)
	q.canceled.Add(1)
	q.dead++ // its entry is dropped lazily: the handle is done, which runDue and armLocked look at
	if q.dead > q.delayed.len()/2 {
		q.delayed.compact()
		q.dead = 0
	}
	q.armLocked(time.Now())
	q.mu.Unlock()
	// Its room is given back with q.mu released: giving it back may run the
	// scheduler's idle function.
	res.Cancel()
	return true
}

// cancelDelayedAll completes every delayed task with err, closing q first
// if close (CloseNow), and returns how many it completed.
func (q *Queue) cancelDelayedAll(err error, close bool) int {
	q.mu.Lock()
	for q.moved != nil { // a batch of due tasks is being queued: let it land in the scheduler
		moved := q.moved
		q.mu.Unlock()
		<-moved
		q.mu.Lock()
	}
	defer q.mu.Unlock()
	if close {
		q.closed = true
	}
	var rooms []*scheduler.Reservation
	for _, d := range q.delayed.drain() {
		if h := d.r.handle(); !h.settled() {
			rooms = append(rooms, d.res)
			h.finish(err)
		}
	}
	q.dead = 0
	q.armLocked(time.Now()) // stops the timer
	q.mu.Unlock()
	for _, res := range rooms { // with q.mu released: see cancelDelayed
		res.Cancel()
	}
	q.mu.Lock()
	return len(rooms)
}

// delayedCount returns the number of delayed tasks waiting.
func (q *Queue) delayedCount() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.delayed.len() - q.dead
}
