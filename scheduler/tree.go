package scheduler

// Trees. A child Scheduler, made WithTarget(t), has no worker of its own:
// each of its slots is a turn on one of t's slots. To start a slot, the
// child requests a turn of t (pushTurn): a place in t's list, among t's own
// items, which a worker of t (or, if t is a child itself, a turn of t) takes
// as it would any item. Running it runs one of t's children's turns, chosen
// by priority when it starts (see mux.go): the child's items, in order, on
// that goroutine, which then holds a slot of the child on a slot of t. After
// the child's quantum of items, if the child has more, the turn requests a
// new one at the end of t's list and ends, so that t's other items and
// children get theirs: a sibling waits about one quantum.
//
// The core (scheduler.go, worker.go) knows nothing of this but its two
// hooks: a child's spawnLocked requests a turn instead of starting a
// goroutine, and a target's list holds its children's turns as items. The
// invariant of the tree, under each child's mutex: turns counts the turns the
// child has requested and that have not begun, at most one, each counted in
// active; under the target's mutex, the mux items in its list are exactly its
// children's turns waiting (mux.waiting).
//
// Lock order: a child's mutex before its target's, never the other way.

// defaultQuantum is how many items a turn runs before it lets its target's
// other items and children go first; see WithQuantum.
const defaultQuantum = 16

// drain runs a turn of s, a child: items of s, on the calling goroutine,
// which holds the slot ts of s's target.
func (s *Scheduler) drain(ts Slot) {
	if s.setLabels() {
		defer s.parent.restoreLabels()
	}
	s.mu.Lock()
	s.turns--
	rec, _ := s.takeRecLocked(ts)
	s.spawnLocked() // the next turn, if more may start than this one takes
	switch ran := s.runItemsLocked(rec, s.quantum); {
	case ran < 0:
		// A waiting item took the slot back.
	case ran == s.quantum && s.startableLocked() && !s.heldAbove():
		// The quantum is used up and more may start: this slot of s passes
		// to a turn at the end of the target's list, unless one waits
		// there already.
		s.giveRecLocked(rec)
		if s.turns > 0 {
			s.freeSlotLocked()
		} else {
			s.turns++
			s.parent.pushTurn(s)
		}
	default:
		s.endSlotLocked(rec)
		if ran > 0 || s.heldAbove() {
			s.spawnLocked() // a new turn, if items wait that a held target kept back
		}
		// A turn that could start nothing asks for no other: what held its
		// items back (a barrier, a lent slot, a full limit) spawns anew when
		// it changes. Asking again at once made a worker spin through empty
		// turns until another goroutine moved, which, where goroutines share
		// one thread without preemption (js/wasm), never happened.
	}
	s.unlock()
}

// heldAbove reports whether a target above s is suspended: a turn then ends
// after the item it runs, so that Suspend holds back the whole subtree at
// once, turns that are running included.
func (s *Scheduler) heldAbove() bool {
	for a := s.parent; a != nil; a = a.parent {
		if a.halted.Load() {
			return true
		}
	}
	return false
}

// startableLocked reports whether takeLocked would start an item now.
func (s *Scheduler) startableLocked() bool {
	if s.exclusive || s.suspends > 0 || s.active > s.limit || s.queuedLocked() == 0 {
		return false
	}
	return !isBarrier(s.list.front()) || s.running == 0
}
