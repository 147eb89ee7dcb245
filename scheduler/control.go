package scheduler

import (
	"fmt"
	"runtime"
)

// Suspend stops s, and its subtree, from starting items until Resume: the
// items running go on to their end, and items are still accepted and queued.
// When Suspend returns, no item of s or of a scheduler below it starts until
// Resume, not even in a turn of a child that is running (it ends after its
// item). Suspend and Resume nest: s starts items again once each Suspend has
// had its Resume.
func (s *Scheduler) Suspend() {
	s.mu.Lock()
	s.suspends++
	s.halted.Store(true)
	s.mu.Unlock()
	s.waitTakes()
}

// waitTakes waits for the takes of batch workers that began before halted or
// cut was set: they are a few atomic operations each.
func (s *Scheduler) waitTakes() {
	for s.taking.Load() != 0 {
		runtime.Gosched()
	}
}

// Resume undoes a Suspend. Resume panics if s is not suspended.
func (s *Scheduler) Resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.suspends == 0 {
		panic("scheduler: Resume of a scheduler that is not suspended")
	}
	s.suspends--
	if s.suspends == 0 {
		s.halted.Store(false)
		s.spawnLocked()
	}
}

// SetLimit changes how many items s runs at once. Raising it starts waiting
// items at once; lowering it lets the running items finish, after which no
// more than n run. SetLimit panics if n < 1.
func (s *Scheduler) SetLimit(n int) {
	if n < 1 {
		panic(fmt.Sprintf("scheduler: SetLimit(%d): limit must be positive", n))
	}
	s.mu.Lock()
	s.limit = int32(min(n, maxLimit))
	cut := s.active > s.limit
	s.cut.Store(cut)
	s.spawnLocked()
	s.mu.Unlock()
	if cut {
		s.waitTakes()
	}
}
