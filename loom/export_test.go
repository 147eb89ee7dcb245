package loom

// Heap exposes delayHeap to the model test, with int items.
type Heap struct{ h delayHeap[int] }

func (h *Heap) Len() int                          { return h.h.len() }
func (h *Heap) Push(due int64, seq uint64, v int) { h.h.push(due, seq, v) }
func (h *Heap) Pop() int                          { return h.h.pop() }
func (h *Heap) Top() (due int64, seq uint64, v int) {
	e := h.h.top()
	return e.due, e.seq, e.v
}

// Filter keeps the items for which keep reports true.
func (h *Heap) Filter(keep func(v int) bool) {
	h.h.filter(func(e *entry[int]) bool { return keep(e.v) })
}

// Stale returns the number of stale timer entries in l's heap.
func (l *Loom) Stale() (stale, entries int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stale, l.delayed.len()
}

// BufferCaps returns the capacities of l's action buffers. It must be called
// between frames, on l's goroutine.
func (l *Loom) BufferCaps() (batch, posted int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return cap(l.batch), cap(l.posted)
}

// MinShrink is the capacity below which action buffers are always kept.
const MinShrink = minShrink
