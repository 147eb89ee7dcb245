package taskqueue

import (
	"context"
	"time"
)

// Stats describes the state of a queue and what it has done.
type Stats struct {
	Queued    int    // tasks waiting for their turn
	Delayed   int    // tasks waiting for their due time
	Running   int    // tasks running now
	Completed uint64 // tasks that ran to the end, returning or panicking
	Panicked  uint64 // tasks that panicked (counted in Completed too)
	Canceled  uint64 // tasks that were accepted and never ran
	Rejected  uint64 // submissions refused: queue closed or full, or context done
}

// Stats returns the state of q. Its fields are read one after the other, not
// at one instant: while tasks run they may disagree by the tasks in flight,
// and they add up exactly once q is idle.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	delayed := q.delayed.len() - q.dead
	q.mu.Unlock()
	skipped := q.skipped.Load() // before Completed, which counts the skipped tasks
	s := q.s.Stats()
	return Stats{
		Queued:    s.Pending,
		Delayed:   delayed,
		Running:   s.Running,
		Completed: max(s.Completed, skipped) - skipped,
		Panicked:  q.panicked.Load(),
		Canceled:  q.canceled.Load(),
		Rejected:  q.rejected.Load(),
	}
}

// Close is shorthand for Shutdown(context.Background()): it stops q from
// accepting tasks and waits until every task it accepted has run.
func (q *Queue) Close() error {
	return q.Shutdown(context.Background())
}

// Shutdown stops q from accepting tasks, then waits until every task it
// accepted has run: the queued ones, and the delayed ones when they come due.
// Submissions made after Shutdown has begun fail with ErrClosed, those made
// by q's own tasks included, except RunSync from one of q's tasks, which runs
// in the task's place and adds no work. If ctx is done first, Shutdown returns ctx.Err();
// the tasks still run. Shutdown may be called more than once, and after
// CloseNow, to wait for the tasks that were running. Shutdown panics on the
// default queues, which are shared, and when called from one of q's own
// tasks (use CloseNow there, or Close from another goroutine).
func (q *Queue) Shutdown(ctx context.Context) error {
	q.mustNotBeDefault("Shutdown")
	if q.s.Holds() {
		panic("taskqueue: Shutdown called from one of the queue's own tasks, which would wait for itself")
	}
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.s.Close()
	// The delayed tasks hold reservations in the scheduler, which counts
	// them as work to wait for until they come due and run.
	return q.s.Wait(ctx)
}

// CloseNow stops q from accepting tasks and cancels every task that has not
// started, delayed ones included: their handles complete with ErrClosed, and
// tasks submitted with Go are dropped. It returns how many tasks it canceled.
// Running tasks go on; Shutdown waits for them. CloseNow panics on the default
// queues, which are shared.
func (q *Queue) CloseNow() int {
	q.mustNotBeDefault("CloseNow")
	q.mu.Lock()
	q.closed = true
	n := 0
	for _, d := range q.delayed.drain() {
		if h := d.r.handle(); !h.IsDone() {
			d.res.Cancel()
			h.finish(ErrClosed)
			n++
		}
	}
	q.dead = 0
	q.armLocked(time.Now()) // stops the timer
	q.mu.Unlock()
	q.s.Close()
	for _, t := range q.s.DequeueAll() {
		switch t := t.(type) {
		case runner:
			t.handle().finish(ErrClosed)
		case *syncCall:
			t.close()
		}
		n++
	}
	q.canceled.Add(uint64(n))
	return n
}

func (q *Queue) mustNotBeDefault(call string) {
	if q.isDefault {
		panic("taskqueue: " + call + " of a default queue, which is shared")
	}
}
