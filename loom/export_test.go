package loom

// Stale returns the number of stale timer entries in l's wheel.
func (l *Loom) Stale() (stale, entries int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.timers.stale, l.timers.wheel.Len()
}

// BufferCaps returns the capacities of l's action buffers. It must be called
// between frames, on l's goroutine.
func (l *Loom) BufferCaps() (batch, posted int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return cap(l.batch), cap(l.posted)
}

// ContextWatches returns the number of contexts whose end the coroutine
// passes watch, and of coroutines bound to them. It must be called between
// frames, on l's goroutine.
func (l *Loom) ContextWatches() (watches, coroutines int) {
	for _, w := range l.co.watches.list {
		coroutines += len(w.cs)
	}
	return len(l.co.watches.list), coroutines
}

// MinShrink is the capacity below which action buffers are always kept.
const MinShrink = minShrink
