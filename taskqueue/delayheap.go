package taskqueue

import (
	"time"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// waiting is a task waiting for its due time.
type waiting struct {
	due time.Time
	seq uint64 // submission order, to break ties between equal due times
	r   runner
	res *scheduler.Reservation // its room in the scheduler's list
}

func (d *waiting) before(e *waiting) bool {
	if d.due.Equal(e.due) {
		return d.seq < e.seq
	}
	return d.due.Before(e.due)
}

// delayHeap is a binary min-heap of delayed tasks ordered by due time, then
// by submission order. Canceled tasks are not removed at once: their entries
// stay until they reach the top or until compact drops them, which keeps
// cancellation O(1) without a position field in every Handle.
//
// A delayHeap is not safe for concurrent use; its Queue guards it.
type delayHeap struct {
	items []waiting
	seq   uint64
}

func (h *delayHeap) len() int { return len(h.items) }

// top returns the earliest entry; the heap must not be empty.
func (h *delayHeap) top() *waiting { return &h.items[0] }

func (h *delayHeap) push(due time.Time, r runner, res *scheduler.Reservation) {
	h.seq++
	h.items = append(h.items, waiting{due: due, seq: h.seq, r: r, res: res})
	h.up(len(h.items) - 1)
}

// pop removes and returns the earliest entry; the heap must not be empty.
func (h *delayHeap) pop() waiting {
	d := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items[last] = waiting{} // drop the reference to the task
	h.items = h.items[:last]
	if last > 0 {
		h.down(0)
	}
	return d
}

// compact drops the entries of tasks that are done and restores the heap.
func (h *delayHeap) compact() {
	live := h.items[:0]
	for _, d := range h.items {
		if !d.r.handle().IsDone() {
			live = append(live, d)
		}
	}
	clear(h.items[len(live):])
	h.items = live
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// drain removes every entry and returns them in no particular order.
func (h *delayHeap) drain() []waiting {
	items := h.items
	h.items = nil
	return items
}

func (h *delayHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.items[i].before(&h.items[parent]) {
			return
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

func (h *delayHeap) down(i int) {
	n := len(h.items)
	for {
		least := i
		if l := 2*i + 1; l < n && h.items[l].before(&h.items[least]) {
			least = l
		}
		if r := 2*i + 2; r < n && h.items[r].before(&h.items[least]) {
			least = r
		}
		if least == i {
			return
		}
		h.items[i], h.items[least] = h.items[least], h.items[i]
		i = least
	}
}
