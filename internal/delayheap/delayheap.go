// Package delayheap holds delayed work keyed by a due time in nanoseconds
// and a sequence number: a 4-ary min-heap of entries stored by value (the
// queues' delayed tasks), and a timing wheel backed by that heap (the loom's
// timers and timed coroutine waits).
package delayheap

// An Entry is an item with the time it is due and the sequence number that
// orders items due together.
type Entry[T any] struct {
	Due int64  // when it is due, in nanoseconds on its owner's clock
	Seq uint64 // orders entries due together: the lower first
	V   T
}

func (e *Entry[T]) before(f *Entry[T]) bool {
	if e.Due != f.Due {
		return e.Due < f.Due
	}
	return e.Seq < f.Seq
}

// A Heap is a 4-ary min-heap of entries stored by value, ordered by due
// time and then by sequence number. Four children per node make it shallower
// than a binary heap, with siblings side by side in memory.
//
// Entries do not track their position: removing one is left to its owner,
// who marks it stale (the loom's timers and the queues' delayed tasks do) and
// skips it when it reaches the top, and the heap drops stale entries in bulk
// with Filter. Tracking positions would
// write to every moved item's object, scattered in memory, on each sift; on a
// frame that pops hundreds of entries out of a hundred thousand, those cache
// misses cost more than the heap itself (see the loom's BenchmarkFrameDelayed). Push and
// pop are O(log n) and allocate nothing once the slice has grown.
//
// A Heap is not safe for concurrent use.
type Heap[T any] struct {
	items []Entry[T]
}

// Len returns the number of entries.
func (h *Heap[T]) Len() int { return len(h.items) }

// Top returns the earliest entry; the heap must not be empty.
func (h *Heap[T]) Top() *Entry[T] { return &h.items[0] }

// Push adds v, due at due, ordered by seq among entries due together.
func (h *Heap[T]) Push(due int64, seq uint64, v T) {
	h.items = append(h.items, Entry[T]{Due: due, Seq: seq, V: v})
	h.up(len(h.items) - 1)
}

// Pop removes the earliest entry and returns its item; the heap must not be
// empty.
func (h *Heap[T]) Pop() T {
	v := h.items[0].V
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items[last] = Entry[T]{}
	h.items = h.items[:last]
	if last > 0 {
		h.down(0)
	}
	return v
}

// popEntry removes the earliest entry and returns it; the heap must not be
// empty.
func (h *Heap[T]) popEntry() Entry[T] {
	e := h.items[0]
	h.Pop()
	return e
}

// Filter keeps the entries for which keep reports true and restores the
// heap, in O(n).
func (h *Heap[T]) Filter(keep func(*Entry[T]) bool) {
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

func (h *Heap[T]) up(i int) {
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

func (h *Heap[T]) down(i int) {
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

// Drain removes every entry and returns them, in no particular order.
func (h *Heap[T]) Drain() []Entry[T] {
	items := h.items
	h.items = nil
	return items
}
