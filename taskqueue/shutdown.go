package taskqueue

import (
	"context"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// Close is shorthand for Shutdown(context.Background()): it stops q from
// accepting tasks and waits until every task it accepted has run.
func (q *Queue) Close() error {
	return q.Shutdown(context.Background())
}

// Shutdown stops q from accepting tasks, then waits until every task it
// accepted has run: the queued ones, and the delayed ones when they come due.
// Submissions made after Shutdown has begun fail with ErrClosed, those made
// by q's own tasks included, except RunSync from one of q's tasks, which runs
// in the task's place and adds no work. If ctx is done first, Shutdown
// returns ctx.Err(); the tasks still run. Shutdown may be called more than
// once, and after CloseNow, to wait for the tasks that were running.
//
// Shutdown panics on the default queues, which are shared, and when called
// from one of q's own tasks, or a task of a queue that targets q, with that
// task's context or one derived from it: it would wait for itself (use
// CloseNow there, or Close from another goroutine). A task is told by its
// context, as RunSync tells it: with another context, such as
// context.Background(), the call cannot be told from an outsider's and
// waits, for itself, until that context is done. A Shutdown that panics for
// waiting for itself has closed q (and the queues that target it) first, as
// Close would: it panics only instead of the wait.
func (q *Queue) Shutdown(ctx context.Context) error {
	mustCtx("Shutdown", ctx)
	q.mustNotBeDefault("Shutdown")
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.s.Close()
	if q.s.Wait(doneCtx) == nil {
		return nil // idle: nothing to wait for, and no wait to judge
	}
	// The delayed tasks hold reservations in the scheduler, which counts
	// them as work to wait for until they come due and run.
	return await(ctx, "Shutdown", waited{q: q, all: true}, func() error { return q.s.Wait(ctx) })
}

// CloseNow stops q from accepting tasks and cancels every task that has not
// started, delayed ones included: their handles complete with ErrClosed, and
// tasks submitted with Go are dropped. It returns how many tasks it canceled.
// Running tasks go on; Shutdown waits for them. The queues that target q
// (its children and the lanes of a Keyed) are closed to new tasks, as by
// Close, and run what they had accepted: CloseNow on each cancels theirs.
// A continuation (see Then) of a task that CloseNow cancels ends with that
// task's error, as Then says, and counts in Stats as canceled, but not in
// the count CloseNow returns: that counts the tasks CloseNow took out of q
// itself. CloseNow panics on the default queues, which are shared.
func (q *Queue) CloseNow() int {
	q.mustNotBeDefault("CloseNow")
	return q.cancelPending(ErrClosed, true)
}

// cancelPending completes with err every task of q that has not started,
// and returns how many: closing q first, for CloseNow, or not, for a
// keyed lane's CancelKey.
func (q *Queue) cancelPending(err error, close bool) int {
	if close {
		q.closedNow.Store(true)
	}
	hold := q.s.Hold() // q is not idle until what it cancels is counted
	defer hold.Release()
	n := q.cancelDelayedAll(err, close)
	var queued []scheduler.Task
	if close {
		queued = q.s.CloseNow()
	} else {
		queued = q.s.DequeueAll()
	}
	dropped, members := 0, 0 // members of groups count themselves as canceled
	for _, t := range queued {
		switch t := t.(type) {
		case runner:
			t.handle().finish(err)
		case *syncCall:
			if !t.close(err) {
				// Its caller gave it up and counted it, as skipped by the
				// worker that was to find it: no worker will now.
				q.skipped.Add(^uint64(0))
				continue
			}
		case *groupRunner:
			// The members it leaves are canceled, and counted, with it if it
			// was the group's last runner; otherwise below, with the
			// group's, or by a runner still at work.
			members += t.drop(ErrClosed)
			continue
		}
		dropped++
	}
	q.canceled.Add(uint64(n + dropped))
	// The members waiting in groups, which no queued task stands for while
	// their runners run.
	q.mu.Lock()
	groups := make([]*Group, 0, len(q.groups))
	for g := range q.groups {
		groups = append(groups, g)
	}
	q.mu.Unlock()
	for _, g := range groups {
		members += g.cancelWaiting(err)
	}
	return n + dropped + members
}

// doneCtx is a context that is done: a Wait with it only looks.
var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func (q *Queue) mustNotBeDefault(call string) {
	q.mustBeMade()
	if q.isDefault {
		panic("taskqueue: " + call + " of a default queue, which is shared")
	}
}
