package taskqueue

import (
	"log/slog"
	"slices"
	"time"
)

// A Wait is a RunSync call waiting for its turn on a busy queue, as Waits
// reports it.
type Wait struct {
	// Queue is the queue the call waits for.
	Queue *Queue
	// Since is when the call began to wait.
	Since time.Time
	// Holds lists those of the queues given to Waits of which the waiting
	// call's context holds a slot: it was made, with its context, by a task
	// of theirs, which waits too.
	Holds []*Queue
}

// Waits returns the RunSync calls now waiting for their turn on the given
// queues, oldest first, with the queues among them whose slots each waiting
// call holds through its context. It is for finding why a program hangs: a
// task of queue A waiting for B while a task of B waits for A shows as two
// Waits, each holding the queue the other waits for. RunSync calls that run
// on their caller (on an idle queue, or in the place of the caller's task)
// never wait and never show. A queue given twice counts once.
func Waits(queues ...*Queue) []Wait {
	var ws []Wait
	queues = uniq(queues)
	for _, q := range queues {
		q.mu.Lock()
		for c := q.waits; c != nil; c = c.next {
			w := Wait{Queue: q, Since: c.since}
			for _, h := range queues {
				if holds(c.tc.Context, h.s) {
					w.Holds = append(w.Holds, h)
				}
			}
			ws = append(ws, w)
		}
		q.mu.Unlock()
	}
	slices.SortStableFunc(ws, func(a, b Wait) int { return a.Since.Compare(b.Since) })
	return ws
}

// uniq returns qs without repeats, in the order of their first place.
func uniq(qs []*Queue) []*Queue {
	var out []*Queue
	for _, q := range qs {
		if !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	return out
}

// addWait puts c, whose caller is about to wait, in q's list of waits, and
// arms the watch for slow waits.
func (q *Queue) addWait(c *syncCall) {
	c.since, c.progress = time.Now(), q.s.Stats().Completed
	q.mu.Lock()
	c.prev, c.next = nil, q.waits
	if q.waits != nil {
		q.waits.prev = c
	}
	q.waits = c
	if q.slow == nil {
		q.slow = time.AfterFunc(slowWaitAfter, q.checkSlow)
	}
	q.mu.Unlock()
}

// removeWait takes c out of q's list of waits, and stops the watch for slow
// waits once none is left.
func (q *Queue) removeWait(c *syncCall) {
	q.mu.Lock()
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		q.waits = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	}
	c.prev, c.next = nil, nil
	if q.waits == nil && q.slow != nil {
		q.slow.Stop()
		q.slow = nil // a queue idle in one synctest bubble keeps no timer for the next
	}
	q.mu.Unlock()
}

// checkSlow warns, once per call, of each RunSync that has waited
// slowWaitAfter while no task of its queue ended, and watches on while calls
// wait.
func (q *Queue) checkSlow() {
	now := time.Now()
	progress := q.s.Stats().Completed
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.slow == nil {
		return
	}
	next := slowWaitAfter
	for c := q.waits; c != nil; c = c.next {
		waited := now.Sub(c.since)
		if waited < slowWaitAfter {
			next = min(next, slowWaitAfter-waited)
			continue
		}
		if !c.warned && progress == c.progress {
			c.warned = true
			slog.Warn("taskqueue: a RunSync has waited behind a task that is still running, which may be its caller "+
				"(a call from inside a task must pass on the context the task received) "+
				"or wait for it (two tasks that RunSync on each other's serial queues: taskqueue.Waits lists the waits)",
				"queue", q.name, "waited", waited)
		}
	}
	q.slow.Reset(next)
}
