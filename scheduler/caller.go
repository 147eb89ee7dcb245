package scheduler

import "github.com/taskqueue-go/taskqueue/internal/goid"

// TryRun runs f on the calling goroutine, as an item of s, when s can run it
// at once without breaking its rules, and reports whether it did:
//
//   - If the caller is running an item of s (see Holds), f runs in that
//     item's place, on its slot, ahead of the items queued: the caller waits
//     for f, so the limit and, with a limit of one, exclusivity hold. This is
//     the rule of .NET's TryExecuteTaskInline, which lets a task that waits for
//     work of its own scheduler finish instead of deadlocking.
//   - Otherwise, if nothing is queued, no barrier runs and a slot is free
//     (and s is not closed), f takes a slot for its run, as libdispatch runs
//     dispatch_sync on an idle queue.
//
// Otherwise TryRun does nothing and reports false. A panic in f, or
// runtime.Goexit, goes on up to the caller of TryRun after the slot is given
// back. A goroutine holds at most one slot of s: f runs on the slot the
// caller holds, if it holds one.
func (s *Scheduler) TryRun(f func()) bool {
	if f == nil {
		panic("scheduler: TryRun(nil)")
	}
	g := goid.Current()
	s.mu.Lock()
	if s.books.holds(g) {
		s.nested++
		s.mu.Unlock()
		defer s.endNested()
		f()
		return true
	}
	if s.closed || s.exclusive || s.active >= s.limit || s.list.live > 0 {
		s.mu.Unlock()
		return false
	}
	s.active++
	s.running++
	tok := s.books.take(g)
	s.mu.Unlock()
	defer s.release(tok, g)
	f()
	return true
}

// release gives back the slot tok, which TryRun took for g, counting its item
// as completed. Items queued meanwhile start on new workers.
func (s *Scheduler) release(tok token, g uint64) {
	s.mu.Lock()
	s.books.give(tok, g)
	s.active-- // the slot is free before finishLocked starts new workers
	s.finishLocked()
	s.spawnLocked()
	s.idleLocked()
	s.mu.Unlock()
}

func (s *Scheduler) endNested() {
	s.mu.Lock()
	s.nested--
	s.completed++
	s.idleLocked()
	s.mu.Unlock()
}
