package scheduler

import "sync/atomic"

// The core. A Scheduler's state under its mutex is its list, its slots, its
// gate and its books; this file holds the one rule that decides whether an
// item may start (admitLocked) and the one place where the consequences of
// a change are drawn (unlock).
//
// Invariants, whenever s.mu is free:
//
//   - active counts the slots held: by worker goroutines (a root), by turns
//     requested of the target or running on it (a child), and by functions
//     that TryRun runs on a new slot. running counts those that run
//     something: an item of s, a child's turn, a TryRun function; turns
//     counts, among them, those that run a child's work. active-running
//     slots are between items: each is about to take the front item, or to
//     go.
//   - Every item that admitLocked would let start has a slot on the way:
//     unlock starts the slots that the queued items need, within the limit
//     (spawnLocked), so no item waits while a slot it may have is free.
//   - A child has at most one turn requested of its target and not begun
//     (tree.pending); the mux items in a target's list are exactly its
//     children's turns that wait (mux.waiting).
//
// Lock order of the module: a taskqueue.Queue's mutex may be held while its
// Scheduler's is taken, never the other way; a child's mutex may be held
// while its target's is taken (TryRun and TryEnqueue lock the path from a
// Scheduler up to its root, child first), never the other way. No user
// function, idle function, panic handler or method of another layer runs
// while a mutex of this package is held: unlock releases s.mu first, then
// requests a turn of the target and calls the idle function.

// slots counts the slots of a Scheduler, under its mutex.
type slots struct {
	limit   int32
	active  int32      // slots held
	running int32      // slots running an item, a turn or a TryRun function
	turns   int32      // of running, those that run a child's work
	recs    []*slotRec // free slot records, kept for the next slots
}

// between returns the slots between items: each about to take the front item
// of the list, or to go.
func (c *slots) between() int32 { return c.active - c.running }

// gate holds back the items of a Scheduler, under its mutex but for holds.
type gate struct {
	suspends  int32 // Suspend calls not yet resumed
	exclusive bool  // a barrier is running: nothing else may start
	barriers  int32 // barriers in the list
	// holds is set while s holds back its subtree: it is suspended, or
	// holds more slots than its limit. unlock sets it; the turns of s's
	// subtree read it without s.mu before they take each item (heldAbove).
	holds atomic.Bool
	// queued counts the barriers ever queued, Requeue's included: written
	// under s.mu, read without it (see Barriers).
	queued atomic.Uint64
}

// admitLocked is the Scheduler's one rule for starting work: it reports
// whether work may start on s now, and whether it needs a new slot to.
//
// pos is the work's place in line: how many queued items start before it,
// 0 for the item at the front of the list, the list's length for an item
// that joins it now. The slots between items take the first items of the
// line; new slots, up to the limit, the next. barrier marks work that must
// run alone. inline marks a function that runs on its caller rather than
// from the list (TryRun): it may start only ahead of nothing, on a new slot.
// turn marks a slot that s holds already and that takes the front item (a
// worker or a child's turn between items): it may not if a target above s
// holds back its subtree, or if s holds more slots than its limit, and then
// the slot goes.
func (s *Scheduler) admitLocked(pos int32, barrier, inline, turn bool) (ok, newSlot bool) {
	if !s.gateOpenLocked(pos, barrier, turn) {
		return false, false
	}
	c := &s.slots
	switch {
	case inline:
		return s.list.live == 0 && c.active < c.limit, true
	case turn:
		return c.active <= c.limit, false
	case pos < min(c.between(), c.between()+c.limit-c.active):
		return true, false // a slot between items takes it
	}
	return pos-c.between() < c.limit-c.active, true
}

// gateOpenLocked is the part of admitLocked that no slot changes: whether
// suspension and barriers let work at pos start.
func (s *Scheduler) gateOpenLocked(pos int32, barrier, turn bool) bool {
	switch {
	case s.gate.exclusive || s.gate.suspends > 0:
		return false
	case turn && s.heldAbove():
		return false
	case barrier:
		return pos == 0 && s.slots.running == 0 // a barrier starts once everything before it is done
	}
	return s.gate.barriers == 0 || pos == 0 // not behind a queued barrier
}

// spawnLocked starts the slots that the queued items need: one for each
// item that admitLocked lets start on a new slot. A root starts a worker
// goroutine for each; a child requests a turn of its target, at most one at
// a time (see tree.go), which unlock sends once s.mu is released.
func (s *Scheduler) spawnLocked() {
	for s.slots.active < s.slots.limit && s.list.live > int(s.slots.between()) && s.tree.pending == 0 {
		pos := s.slots.between()
		if ok, newSlot := s.admitLocked(pos, pos == 0 && isBarrier(s.list.front()), false, false); !ok || !newSlot {
			return
		}
		s.slots.active++
		if s.tree.parent != nil {
			s.tree.pending++
			s.tree.request = true
			return
		}
		rec, _ := s.takeRecLocked(Slot{})
		go rec.work()
	}
}

// unlock ends every critical section that changes s's state: it starts the
// slots the queued items need, updates what the subtree reads of s, wakes
// Wait if s went idle, then releases s.mu, and only then requests a turn of
// the target and calls the idle function.
func (s *Scheduler) unlock() {
	s.spawnLocked()
	if s.tree.parent == nil && s.cfg.onIdle == nil {
		s.unlockRoot() // the common case, with less to settle
		return
	}
	withdrew := s.withdrawTurnLocked()
	hold := s.holdChangeLocked()
	if holds := s.gate.suspends > 0 || s.slots.active > s.slots.limit; holds != s.gate.holds.Load() {
		s.gate.holds.Store(holds) // stored only when it changes: the subtree reads it before each item
	}
	notify := s.idleLocked()
	request := s.tree.request
	s.tree.request = false
	s.mu.Unlock()
	if request {
		s.tree.parent.pushTurn(s)
	}
	if withdrew {
		s.tree.parent.settle()
	}
	if hold != 0 {
		s.holdTargets(hold)
	}
	if notify {
		s.cfg.onIdle()
	}
}

// unlockRoot is unlock for a root with no idle function: it has no turn to
// request or withdraw, no target to hold, and nobody to call.
func (s *Scheduler) unlockRoot() {
	if holds := s.gate.suspends > 0 || s.slots.active > s.slots.limit; holds != s.gate.holds.Load() {
		s.gate.holds.Store(holds)
	}
	if s.books.busy && s.isIdleLocked() {
		s.idleLocked()
	}
	s.mu.Unlock()
}

// settle draws the consequences of a change made to s by another
// Scheduler's unlock (a child withdrew a turn): the slots, the idle signal.
func (s *Scheduler) settle() {
	s.mu.Lock()
	s.unlock()
}

// isIdleLocked reports whether nothing is queued, reserved or running in s
// and its subtree (a child's queued work shows in s as its turn).
func (s *Scheduler) isIdleLocked() bool {
	return s.list.live == 0 && s.slots.running == 0 && s.books.reserved == 0 && s.books.holds == 0
}

// idleLocked wakes Wait if s is idle, frees what an idle s keeps for the
// next items once no slot is left to use it, and reports whether s has just
// gone idle and has an idle function to call.
func (s *Scheduler) idleLocked() bool {
	if !s.isIdleLocked() {
		return false
	}
	if s.books.idle != nil {
		close(s.books.idle)
		s.books.idle = nil
	}
	if s.slots.active == 0 {
		s.list.shrink()
	}
	news := s.books.busy
	s.books.busy = false
	return news && s.cfg.onIdle != nil
}

// takeLocked takes the front item, for a slot of s between items, if
// admitLocked lets it start, and counts it as running.
func (s *Scheduler) takeLocked() (Task, bool) {
	if s.list.live == 0 {
		return nil, false
	}
	front := s.list.front()
	if ok, _ := s.admitLocked(0, isBarrier(front), false, true); !ok {
		return nil, false
	}
	s.waits.startedLocked(s.list.frontID())
	t := s.list.pop()
	s.slots.running++
	if s.tree.isTurn(t) {
		s.slots.turns++
		s.tree.mux.taken()
		return t, true
	}
	if isBarrier(t) {
		s.gate.barriers--
		s.gate.exclusive = true
	}
	if !isCarried(t) { // a carried item holds no room
		s.cfg.room.release(1)
	}
	return t, true
}

// finishLocked records the end of t, an item that ran on a slot of s, and
// reports whether its end lets other items start that could not (it was a
// barrier): unlock must then start their slots.
func (s *Scheduler) finishLocked(t Task) (opened bool) {
	s.slots.running--
	if s.tree.isTurn(t) {
		s.slots.turns--
		return false
	}
	s.books.completed++
	if isBarrier(t) {
		s.gate.exclusive = false
		return true
	}
	return false
}
