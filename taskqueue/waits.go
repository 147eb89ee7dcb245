package taskqueue

import (
	"slices"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/goid"
)

// A Wait is a RunSync call waiting for its turn on a busy queue, as Waits
// reports it.
type Wait struct {
	// Queue is the queue the call waits for.
	Queue *Queue
	// Goroutine is the ID of the waiting goroutine, as stack traces print it.
	Goroutine uint64
	// Since is when the call began to wait.
	Since time.Time
	// Holds lists those of the queues given to Waits of which the waiting
	// goroutine holds a slot: it runs one of their tasks, which waits too.
	Holds []*Queue
}

// Waits returns the RunSync calls now waiting for their turn on the given
// queues, oldest first, with the queues among them whose slots each waiting
// goroutine holds. It is for finding why a program hangs: a task of queue A
// waiting for B while a task of B waits for A shows as two Waits, each
// holding the queue the other waits for. RunSync calls that run on their
// caller (on an idle queue, or from the queue's own task) never wait and
// never show.
func Waits(queues ...*Queue) []Wait {
	var ws []Wait
	for _, q := range queues {
		q.mu.Lock()
		for c := q.waits; c != nil; c = c.next {
			ws = append(ws, Wait{Queue: q, Goroutine: c.g, Since: c.since})
		}
		q.mu.Unlock()
	}
	for i := range ws {
		for _, q := range queues {
			if slices.Contains(q.s.Holders(), ws[i].Goroutine) {
				ws[i].Holds = append(ws[i].Holds, q)
			}
		}
	}
	slices.SortStableFunc(ws, func(a, b Wait) int { return a.Since.Compare(b.Since) })
	return ws
}

// addWait puts c, whose caller is about to wait, in q's list of waits.
func (q *Queue) addWait(c *syncCall) {
	c.g, c.since = goid.Current(), time.Now()
	q.mu.Lock()
	c.prev, c.next = nil, q.waits
	if q.waits != nil {
		q.waits.prev = c
	}
	q.waits = c
	q.mu.Unlock()
}

// removeWait takes c out of q's list of waits.
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
	q.mu.Unlock()
}
