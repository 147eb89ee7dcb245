package loom

// entry is an item with the time it is due (nanoseconds on one of the loom's
// clocks) and the sequence number that orders items due together.
type entry[T any] struct {
	due int64
	seq uint64
	v   T
}

func (e *entry[T]) before(f *entry[T]) bool {
	if e.due != f.due {
		return e.due < f.due
	}
	return e.seq < f.seq
}

// delayHeap is a 4-ary min-heap of entries stored by value, ordered by due
// time and then by sequence number. Four children per node make it shallower
// than a binary heap, with siblings side by side in memory.
//
// Entries do not track their position: removing one is left to its owner,
// who marks it stale (see Timer) and skips it when it reaches the top, and
// the heap drops stale entries in bulk with filter. Tracking positions would
// write to every moved item's object, scattered in memory, on each sift; on a
// frame that pops hundreds of entries out of a hundred thousand, those cache
// misses cost more than the heap itself (see BenchmarkFrameDelayed). Push and
// pop are O(log n) and allocate nothing once the slice has grown.
//
// A delayHeap is not safe for concurrent use.
type delayHeap[T any] struct {
	items []entry[T]
}

func (h *delayHeap[T]) len() int { return len(h.items) }

// top returns the earliest entry; the heap must not be empty.
func (h *delayHeap[T]) top() *entry[T] { return &h.items[0] }

func (h *delayHeap[T]) push(due int64, seq uint64, v T) {
	h.items = append(h.items, entry[T]{due: due, seq: seq, v: v})
	h.up(len(h.items) - 1)
}

// pop removes the earliest entry and returns its item; the heap must not be
// empty.
func (h *delayHeap[T]) pop() T {
	v := h.items[0].v
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items[last] = entry[T]{}
	h.items = h.items[:last]
	if last > 0 {
		h.down(0)
	}
	return v
}

// filter keeps the entries for which keep reports true and restores the
// heap, in O(n).
func (h *delayHeap[T]) filter(keep func(*entry[T]) bool) {
	kept := h.items[:0]
	for i := range h.items {
		if keep(&h.items[i]) {
			kept = append(kept, h.items[i])
		}
	}
	clear(h.items[len(kept):])
	h.items = kept
	if n := len(h.items); n > 1 {
		for i := (n - 2) / 4; i >= 0; i-- { // the last parent down to the root
			h.down(i)
		}
	}
}

func (h *delayHeap[T]) up(i int) {
	e := h.items[i]
	for i > 0 {
		p := (i - 1) / 4
		if !e.before(&h.items[p]) {
			break
		}
		h.items[i] = h.items[p]
		i = p
	}
	h.items[i] = e
}

func (h *delayHeap[T]) down(i int) {
	n := len(h.items)
	e := h.items[i]
	for {
		first := 4*i + 1
		if first >= n {
			break
		}
		least := first
		for c := first + 1; c < min(first+4, n); c++ {
			if h.items[c].before(&h.items[least]) {
				least = c
			}
		}
		if !h.items[least].before(&e) {
			break
		}
		h.items[i] = h.items[least]
		i = least
	}
	h.items[i] = e
}
