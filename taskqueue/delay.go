package taskqueue

import (
	"context"
	"time"
)

// submitAfter holds the task r, whose Handle is h, in the delayed heap until d
// has passed.
func (q *Queue) submitAfter(ctx context.Context, d time.Duration, h *Handle, r runner) {
	if d <= 0 {
		q.submit(ctx, h, r)
		return
	}
	h.ctx, h.q = ctx, q
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
	defer q.mu.Unlock()
	if q.closed {
		res.Cancel()
		q.reject(h, ErrClosed)
		return
	}
	q.delayed.push(due, r, res)
	h.state.Store(&node{kind: delayed, res: res})
	if ctx.Done() != nil {
		// Watch the context while the task waits, so that its end frees the
		// timer and the room without waiting for the due time. The watch
		// takes q.mu, so it cannot act before the task is in the heap.
		h.Done()
	}
	if q.delayed.top().r == r {
		q.armLocked(time.Now())
	}
}

// runDue moves the delayed tasks that have come due to the scheduler, in due
// order. The timer calls it.
func (q *Queue) runDue() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	for q.delayed.len() > 0 && !q.delayed.top().due.After(now) {
		d := q.delayed.pop()
		h := d.r.handle()
		if h.IsDone() {
			q.dead-- // canceled while it waited; its room was given back then
			continue
		}
		h.id.Store(uint64(d.res.Enqueue(d.r)))
	}
	q.armLocked(now)
}

// armLocked drops canceled entries from the top of the heap and sets the
// timer for the earliest task left, or stops it if none is left.
func (q *Queue) armLocked(now time.Time) {
	for q.delayed.len() > 0 && q.delayed.top().r.handle().IsDone() {
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
