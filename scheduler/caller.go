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
//   - Otherwise, if nothing is queued, no barrier runs, s is neither closed
//     nor suspended and a slot is free (for a child, on each target above it
//     too), f takes a slot for its run, as libdispatch runs dispatch_sync on
//     an idle queue. A caller that holds a slot of a target of s, running an
//     item of a sibling of s say, runs f on that slot.
//
// Otherwise TryRun does nothing and reports false. A panic in f, or
// runtime.Goexit, goes on up to the caller of TryRun after the slot is given
// back. A goroutine never holds two slots of one Scheduler: f runs on the
// slot the caller holds, if it holds one.
func (s *Scheduler) TryRun(f func()) bool {
	if f == nil {
		panic("scheduler: TryRun(nil)")
	}
	return s.tryRun(goid.Current(), f)
}

func (s *Scheduler) tryRun(g uint64, f func()) bool {
	s.mu.Lock()
	if s.books.holds(g) {
		s.nested++
		s.mu.Unlock()
		defer s.endNested()
		f()
		return true
	}
	if s.exclusive || s.suspended || s.active+s.lent >= s.limit || s.queuedLocked() > 0 || s.Closed() {
		s.mu.Unlock()
		return false
	}
	s.active++
	s.running++
	tok := s.books.take(g)
	s.mu.Unlock()
	if s.parent == nil {
		defer s.release(tok, g, true)
		f()
		return true
	}
	// A child's slot is a turn on its target's: f runs as an item of the
	// target, in the caller's place if the caller holds a slot there.
	ran := false
	ok := s.parent.tryRun(g, func() {
		ran = true
		defer s.release(tok, g, true)
		f()
	})
	if !ok && !ran {
		s.release(tok, g, false)
	}
	return ok
}

// release gives back the slot tok, which tryRun took for g, counting its
// item as completed if it ran. Items queued meanwhile start on new slots.
func (s *Scheduler) release(tok token, g uint64, ran bool) {
	s.mu.Lock()
	s.books.give(tok, g)
	s.freeSlotLocked() // before finishLocked starts new slots
	if ran {
		s.finishLocked(nil)
	} else {
		s.running--
	}
	s.spawnLocked()
	s.idleLocked()
	s.unlock()
}

func (s *Scheduler) endNested() {
	s.mu.Lock()
	s.nested--
	s.completed++
	s.idleLocked()
	s.unlock()
}
