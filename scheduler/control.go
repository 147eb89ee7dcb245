package scheduler

import "fmt"

// Suspend stops s, and its subtree, from starting items until Resume: the
// items running go on to their end, and items are still accepted and queued.
// Once Suspend has returned, no item of s or of a scheduler below it starts
// until Resume, not even in a turn of a child that is running, which ends
// after its item; only an item that a worker or turn was taking as Suspend
// was called may still begin. Suspend and Resume nest: s starts items again
// once each Suspend has had its Resume.
func (s *Scheduler) Suspend() {
	s.mustBeMade("Suspend")
	s.mu.Lock()
	s.gate.suspends++
	s.unlock()
}

// Resume undoes a Suspend. Resume panics if s is not suspended.
func (s *Scheduler) Resume() {
	s.mustBeMade("Resume")
	s.mu.Lock()
	if s.gate.suspends == 0 {
		s.mu.Unlock()
		panic("scheduler: Resume of a scheduler that is not suspended")
	}
	s.gate.suspends--
	s.unlock()
}

// SetLimit changes how many items s runs at once. Raising it starts waiting
// items at once; lowering it lets the running items finish, after which no
// more than n run: the slots above the limit go as their items end, and, for
// a target, the turns of its children running on them end after their
// item. An item that a worker or turn was taking as SetLimit was called
// counts among the running ones, and may still begin after it returns.
// SetLimit panics if n < 1; a limit above 1<<30 is taken as 1<<30.
func (s *Scheduler) SetLimit(n int) {
	s.mustBeMade("SetLimit")
	if n < 1 {
		panic(fmt.Sprintf("scheduler: SetLimit(%d): limit must be positive", n))
	}
	s.mu.Lock()
	s.slots.limit = int32(min(n, maxLimit))
	s.unlock()
}

// Held reports whether s holds back its items now: it, or a target above
// it, is suspended or holds more slots than its limit after SetLimit
// lowered it. An item that starts work of its own, one piece after another
// (a group's runner, say), looks at it before each piece, so that Suspend
// and SetLimit hold that work back as they hold items. It reads atomics
// only.
func (s *Scheduler) Held() bool {
	s.mustBeMade("Held")
	return s.gate.holds.Load() || s.heldAbove()
}

// Barriers returns how many barriers have been queued on s so far. An item
// that starts work of its own piece by piece (a group's runner) notes it
// when it is queued, and each piece when it is submitted to the item: a
// piece submitted after a barrier that was queued behind the item must not
// start before that barrier has run, so the item hands that piece and the
// rest back to the list (see Requeue), behind the barrier. It reads an
// atomic only.
func (s *Scheduler) Barriers() uint64 {
	s.mustBeMade("Barriers")
	return s.gate.queued.Load()
}
