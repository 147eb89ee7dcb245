package loom

import (
	"cmp"
	"slices"
)

// CoroutineInfo describes a live coroutine, for hunting coroutines that
// never end.
type CoroutineInfo struct {
	ID uint64
	// State is "queued" for a coroutine started that has not begun (see
	// Loom.StartCoroutine), "running" for the one whose body runs now (the
	// caller of Coroutines, or one that started it), and "waiting" for one
	// waiting on an Instruction.
	State   string
	Wait    Instruction // what a waiting coroutine waits for
	Started int64       // the frame in which it started; 0 if queued
	Scoped  bool        // it was started through a Scope
}

// Coroutines returns a snapshot of l's coroutines that have not ended,
// ordered by ID, for hunting coroutines that never end. It reads what only
// the loop changes, so it is called on the loop: from an action or a
// coroutine, or from the loop's goroutine between frames (from another
// goroutine, post a function that calls it). It costs one allocation per
// call.
func (l *Loom) Coroutines() []CoroutineInfo {
	l.mustBeMade()
	l.mu.Lock()
	queued := slices.Clone(l.incoming)
	l.mu.Unlock()
	infos := make([]CoroutineInfo, 0, len(l.co.live)+len(queued))
	for _, c := range queued {
		if !c.isDone() {
			infos = append(infos, CoroutineInfo{ID: c.id, State: "queued", Scoped: c.scope != nil})
		}
	}
	for _, c := range l.co.live {
		info := CoroutineInfo{ID: c.id, State: "waiting", Wait: c.wait, Started: c.frame, Scoped: c.scope != nil}
		if c.running {
			info.State, info.Wait = "running", Instruction{}
		}
		infos = append(infos, info)
	}
	slices.SortFunc(infos, func(a, b CoroutineInfo) int { return cmp.Compare(a.ID, b.ID) })
	return infos
}
