package loom

import (
	"cmp"
	"slices"
)

// CoroutineInfo describes a live coroutine, for hunting coroutines that
// never end.
type CoroutineInfo struct {
	// Coroutine is the coroutine's handle.
	Coroutine *Coroutine
	// State is "queued" for a coroutine started that has not begun (see
	// Loom.StartCoroutine), "running" for the one whose body runs now (the
	// caller of Coroutines, or one that started it), and "waiting" for one
	// waiting on an Instruction, including one whose yield of WaitFor began
	// the coroutine that runs now.
	State   string
	Wait    string // what a waiting coroutine waits for, as "WaitForSeconds(1s)" or "WaitFor(coroutine #3)", the third started
	Started int64  // the frame in which it started; 0 if queued
	Scoped  bool   // it was started through a Scope
}

// Coroutines returns a snapshot of l's coroutines that have not ended,
// in the order they were started, for hunting coroutines that never end. It reads what only
// the loop changes, so it is called on the loop: from an action or a
// coroutine, or from the loop's goroutine between frames (from another
// goroutine, post a function that calls it). It costs an allocation for the
// slice, one more while coroutines wait to begin, and up to two for the
// text of each wait that names a value (TestCoroutinesSnapshot).
func (l *Loom) Coroutines() []CoroutineInfo {
	l.mustBeMade()
	l.mu.Lock()
	// The coroutines not begun: those started since the pass, and those the
	// pass under way has yet to begin (the loop's own, as is this call).
	queued := make([]*Coroutine, 0, len(l.incoming)+len(l.co.starting))
	queued = append(append(queued, l.incoming...), l.co.starting...)
	l.mu.Unlock()
	infos := make([]CoroutineInfo, 0, len(l.co.live)+len(queued))
	for _, c := range queued {
		if !c.isDone() && !c.started {
			infos = append(infos, CoroutineInfo{Coroutine: c, State: "queued", Scoped: c.scope != nil})
		}
	}
	for _, c := range l.co.live {
		info := CoroutineInfo{Coroutine: c, State: "waiting", Wait: c.wait.describe(), Started: c.frame, Scoped: c.scope != nil}
		if c.running {
			info.State, info.Wait = "running", ""
		}
		infos = append(infos, info)
	}
	slices.SortFunc(infos, func(a, b CoroutineInfo) int { return cmp.Compare(a.Coroutine.id, b.Coroutine.id) })
	return infos
}
