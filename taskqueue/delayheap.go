package taskqueue

import (
	"time"

	"github.com/taskqueue-go/taskqueue/internal/delayheap"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// waiting is a task waiting for its due time.
type waiting struct {
	due time.Time // with its monotonic reading, which decides when it is due
	r   runner
	res *scheduler.Reservation // its room in the scheduler's list
}

// delayHeap holds a queue's delayed tasks, ordered by due time, then by
// submission order. The due times are keyed as durations since an epoch
// taken when the heap last went from empty to not empty: a difference of two
// readings of the monotonic clock, so that a step of the wall clock (NTP, a
// user changing the time) never reorders them, as it would keys of
// wall-clock nanoseconds. Whether one is due is decided by its time.Time,
// monotonic clock included. It is the
// module's one delay heap (package delayheap), which the loom's timers use
// too. Canceled tasks are not removed at once: their entries stay until they
// reach the top or until compact drops them, which keeps cancellation O(1)
// without a position field in every Handle.
//
// A delayHeap is not safe for concurrent use; its Queue guards it.
type delayHeap struct {
	h     delayheap.Heap[waiting]
	seq   uint64
	epoch time.Time // the origin of the keys; see above
}

func (h *delayHeap) len() int { return h.h.Len() }

// top returns the earliest entry; the heap must not be empty.
func (h *delayHeap) top() *waiting { return &h.h.Top().V }

func (h *delayHeap) push(due time.Time, r runner, res *scheduler.Reservation) {
	if h.h.Len() == 0 {
		h.epoch = time.Now()
	}
	h.seq++
	h.h.Push(int64(due.Sub(h.epoch)), h.seq, waiting{due: due, r: r, res: res})
}

// pop removes and returns the earliest entry; the heap must not be empty.
func (h *delayHeap) pop() waiting { return h.h.Pop() }

// compact drops the entries of tasks that are done.
func (h *delayHeap) compact() {
	h.h.Filter(func(e *delayheap.Entry[waiting]) bool { return !e.V.r.handle().settled() })
}

// drain removes every entry and returns them in no particular order.
func (h *delayHeap) drain() []waiting {
	entries := h.h.Drain()
	ws := make([]waiting, len(entries))
	for i := range entries {
		ws[i] = entries[i].V
	}
	return ws
}
