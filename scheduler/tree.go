package scheduler

// Trees. A child Scheduler, made WithTarget(t), has no worker of its own:
// each of its slots is a turn on one of t's slots. To start a slot, the
// child requests a turn of t: a place in t's list, among t's own items,
// which a worker of t (or, if t is a child itself, a turn of t) takes as it
// would any item. Running it runs one of t's children's turns, chosen by
// priority when it starts (the mux): the child's items, in order, on that
// goroutine, which then holds a slot of the child on a slot of t. After the
// child's quantum of items, if the child has more, the turn requests a new
// one at the end of t's list and ends, so that t's other items and children
// get theirs: a sibling waits about one quantum.
//
// The tree uses the core through three points: a child's spawnLocked
// requests a turn instead of starting a goroutine (unlock sends it, once the
// child's mutex is released); a target's list holds its children's turns
// as items, all the same value, its mux; and admitLocked stops a running
// turn before its next item while a target above holds its subtree back
// (heldAbove). Everything else of a tree is here and in mux.go.
//
// Invariants: under a child's mutex, pending counts the turns it has
// requested and that have not begun, at most one, each counted in its
// active slots; under a target's mutex, the mux items in its list are
// exactly its children's turns that wait (mux.queued), and each level of
// the mux holds one entry per turn queued or taken and not yet picked.

// defaultQuantum is how many items a turn runs before it lets its target's
// other items and children go first; see WithQuantum.
const defaultQuantum = 16

// tree is a Scheduler's place in a tree of schedulers.
type tree struct {
	parent  *Scheduler // the target whose slots s runs on; nil for a root
	prio    int32      // the priority of s's turns on its target
	quantum int32      // the items a turn of s runs before its siblings get theirs

	// As a child, under s.mu.
	pending int32 // turns requested of the target and not begun: 0 or 1
	request bool  // a turn to request once s.mu is released (see unlock)

	// As a target, under s.mu.
	mux *mux // the turns of s's children that wait in s's list; nil until a child had one

	// holding is set, under s.mu, while s counts as work on each target
	// above it, as a reservation does (books.reserved), because it is
	// suspended with items queued: they request no turn meanwhile, and the
	// targets must not look idle.
	holding bool
}

// isTurn reports whether x, an item of s's list, is a turn of a child.
func (t *tree) isTurn(x Task) bool {
	return t.mux != nil && x == Task(t.mux)
}

// requeueTurnLocked puts back at the end of l a turn that DequeueAll took
// out with the items around it: turns are the children's work, not s's.
// They are all the same value, so order among them is kept; which child
// runs is decided by the mux when a turn starts.
func (t *tree) requeueTurnLocked(l *list) {
	t.mux.pushed(l.push(t.mux))
}

// pushTurn queues a turn of c, a child of s that has counted it in its
// active slots and released its own mutex. A turn is queued whatever the
// state of s, closed or bounded: it carries work that c has accepted.
func (s *Scheduler) pushTurn(c *Scheduler) {
	s.mu.Lock()
	s.queueTurnLocked(c)
	s.unlock()
}

// queueTurnLocked queues a turn of c in s's list; unlock starts the slot it
// needs.
func (s *Scheduler) queueTurnLocked(c *Scheduler) {
	m := s.tree.mux
	if m == nil {
		m = &mux{s: s}
		s.tree.mux = m
	}
	m.add(c)
	m.pushed(s.list.push(m))
	s.books.busy = true
}

// drain runs a turn of s, a child: items of s, on the calling goroutine,
// which holds the slot ts of s's target.
func (s *Scheduler) drain(ts Slot) {
	if s.setLabels() {
		defer s.tree.parent.restoreLabels()
	}
	s.mu.Lock()
	s.tree.pending--
	rec, _ := s.takeRecLocked(ts)
	ran := s.runItemsLocked(rec, s.tree.quantum)
	if ran == s.tree.quantum && s.tree.pending == 0 && s.startableLocked() {
		// The quantum is used up and more may start: this slot of s passes
		// to a turn at the end of the target's list.
		s.giveRecLocked(rec)
		s.tree.pending++
		s.tree.request = true
	} else {
		// A turn that stops early asks for no other here: what held its
		// items back (a barrier, a full limit, a suspended target) lets
		// spawnLocked request one when it changes. Asking again at once
		// would make a worker spin through empty turns until another
		// goroutine moved, which, where goroutines share one thread
		// without preemption (js/wasm), never happens.
		s.endSlotLocked(rec)
	}
	s.unlock()
}

// startableLocked reports whether a slot of s between items would take the
// front item now.
func (s *Scheduler) startableLocked() bool {
	if s.list.live == 0 {
		return false
	}
	ok, _ := s.admitLocked(0, isBarrier(s.list.front()), false, true)
	return ok
}

// heldAbove reports whether a target above s holds back its subtree (see
// gate.holds): a turn of s then ends before its next item, so that Suspend
// and SetLimit of a target hold back the turns running below it too.
func (s *Scheduler) heldAbove() bool {
	for a := s.tree.parent; a != nil; a = a.tree.parent {
		if a.gate.holds.Load() {
			return true
		}
	}
	return false
}

// withdrawTurnLocked takes back the turn that s, a child, requested and that
// no item needs any more (they were removed, or a running turn took them),
// if it still waits in the target's list, and reports whether it did: such
// a turn would keep the target, and whoever waits for it to be idle, busy
// for nothing. It locks the target while s.mu is held, as the lock order
// allows (child first); unlock then settles the target.
func (s *Scheduler) withdrawTurnLocked() bool {
	t := s.tree.parent
	if t == nil || s.tree.pending == 0 || s.list.live > 0 {
		return false
	}
	t.mu.Lock()
	ok := t.tree.mux.withdraw(s, &t.list)
	t.mu.Unlock()
	if ok {
		s.tree.pending--
		s.slots.active--
	}
	return ok
}

// holdChangeLocked reports how s's hold on its targets (see tree.holding)
// must change: +1, -1, or 0.
func (s *Scheduler) holdChangeLocked() int32 {
	want := s.tree.parent != nil && s.gate.suspends > 0 && s.list.live > 0
	if want == s.tree.holding {
		return 0
	}
	s.tree.holding = want
	if want {
		return 1
	}
	return -1
}

// holdTargets adds delta to the work that each target above s counts for
// its subtree, with s.mu released, one target at a time.
func (s *Scheduler) holdTargets(delta int32) {
	for a := s.tree.parent; a != nil; a = a.tree.parent {
		a.mu.Lock()
		a.books.reserved += delta
		a.books.busy = true
		a.unlock()
	}
}
