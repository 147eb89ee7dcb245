package scheduler

import "github.com/taskqueue-go/taskqueue/internal/catch"

// spawnLocked starts the slots the queued items need: one for each item that
// may start now and that no slot between items will take, within the limit.
// A root starts a worker goroutine for a slot; a child requests a turn on
// its target (see tree.go).
func (s *Scheduler) spawnLocked() {
	for s.active < s.limit && s.grantLocked() {
		s.active++ // a waiting item takes back its lent slot first
	}
	if s.exclusive || s.suspends > 0 || s.active >= s.limit {
		return
	}
	// Turns may start on slots that waiting items lent; s's own items only
	// on the others (see lend.go).
	turns := int32(s.mux.waitingTurns())
	want := turns
	if s.active+s.lent < s.limit {
		want = int32(min(s.queuedLocked(), maxLimit))
	}
	if s.barrierAtFrontLocked() {
		want = 0
		if s.running == 0 {
			want = 1 // the barrier may start: it runs alone
		}
	}
	// Slots between items take the first. An item whose slot is lent counts in
	// running, not in active: it leaves no slot between items.
	want -= max(s.active-s.running, 0)
	for ; want > 0 && s.active < s.limit; want-- {
		if s.parent != nil {
			if s.turns > 0 {
				// A child keeps at most one turn waiting on its target, so
				// that its siblings wait behind one quantum of it, not one
				// per slot; the turn starts more as it begins.
				return
			}
			s.active++
			s.turns++
			s.parent.pushTurn(s)
			continue
		}
		s.active++
		rec, _ := s.takeRecLocked(Slot{})
		go rec.work()
	}
}

// work is the body of a worker goroutine of a root Scheduler. It holds one
// slot, whose record is rec, runs items until none may start, then gives the
// slot back and returns. It does not linger for new work: on the machines
// measured, a worker that stayed, spinning on another core, made a trickle of
// tasks (one, wait, another) two to three times slower than starting a
// goroutine, which the runtime runs next on the submitter's own processor,
// and it burned a core meant for the submitter (see BenchmarkTrickle).
func (s *Scheduler) work(rec *slotRec) {
	s.setLabels()
	s.mu.Lock()
	if s.runItemsLocked(rec, maxLimit) >= 0 {
		s.endSlotLocked(rec)
	}
	s.unlock()
}

// runItemsLocked runs up to max items of s on the slot rec, one after the
// other, while they may start, and reports how many ran. It is called, and
// returns, with s.mu held; it returns early when a waiting item takes the
// slot back (see Await), having handed the slot over, and reports -1.
func (s *Scheduler) runItemsLocked(rec *slotRec, max int32) int32 {
	n := int32(0)
	for ; n < max; n++ {
		if s.parent != nil && s.heldAbove() {
			break // a suspended target holds back its subtree's running turns too
		}
		if s.batchableLocked() {
			n += s.runBatchLocked(rec) - 1
			if s.grantLocked() {
				s.giveRecLocked(rec)
				return -1
			}
			continue
		}
		t, ok := s.takeLocked()
		if !ok {
			break
		}
		sl := Slot{rec, rec.gen.Load()}
		s.mu.Unlock()
		s.runItem(t, sl, rec)
		s.mu.Lock()
		s.finishLocked(t)
		if s.grantLocked() {
			s.giveRecLocked(rec)
			return -1 // the slot went to the waiting item, still counted in active
		}
	}
	return n
}

// endSlotLocked gives back the slot of rec, which found nothing to start.
func (s *Scheduler) endSlotLocked(rec *slotRec) {
	s.giveRecLocked(rec)
	s.freeSlotLocked()
	s.idleLocked()
}

// takeLocked takes the next item that may start now, counts it as running
// and gives back its room.
func (s *Scheduler) takeLocked() (Task, bool) {
	if s.exclusive || s.suspends > 0 || s.active > s.limit || s.queuedLocked() == 0 {
		// After SetLimit lowered the limit, the slots above it go.
		return nil, false
	}
	if s.active+s.lent > s.limit && s.list.front() != Task(s.mux) {
		// This slot is one a waiting item lent: only a turn of a child may
		// start on it, ahead of s's own items.
		if s.mux.waitingTurns() == 0 {
			return nil, false
		}
		s.list.remove(s.mux.taken())
		s.running++
		s.turnsRun++
		return s.mux, true
	}
	if s.b != nil {
		// What is left of a batch comes first: the head of the queue.
		t, ok := s.b.take()
		s.releaseBatchLocked()
		if ok {
			s.running++
			s.room.release(1)
			return t, true
		}
	}
	if s.barrierAtFrontLocked() {
		if s.running > 0 {
			return nil, false // the last item to finish starts the barrier
		}
		s.exclusive = true
		s.barriers--
	}
	s.waits.startedLocked(s.list.frontID())
	t := s.list.pop()
	s.running++
	if t == Task(s.mux) {
		s.mux.taken()
		s.turnsRun++ // a child's turn holds no room of s
	} else if s.room != nil {
		s.room.release(1)
	}
	return t, true
}

// finishLocked records the end of t, an item that ran on a slot (nil for
// the function of a TryRun).
func (s *Scheduler) finishLocked(t Task) {
	s.running--
	if t != nil && t == Task(s.mux) {
		s.turnsRun--
	} else {
		s.completed++
	}
	if s.exclusive {
		// The barrier is done: the items behind it may start, and the slots
		// that left while it waited must be replaced.
		s.exclusive = false
		s.spawnLocked()
	}
}

// runItem runs t on the slot sl of rec. A panic in t goes to the panic
// handler and the slot carries on. If t calls runtime.Goexit the goroutine
// cannot carry on: the slot is given back, with the accounting of t, and a
// new one takes over if there is work.
func (s *Scheduler) runItem(t Task, sl Slot, rec *slotRec) {
	r := s.region()
	t0 := unbarrier(t)
	if _, safe := t0.(catch.Safe); safe {
		// A task that catches its own panics (those of package taskqueue,
		// a child's turn): no recover here, which keeps a new worker's
		// stack short enough not to grow on its first item.
		normal := false
		defer func() {
			if !normal {
				s.goexited(t, rec, r)
			}
		}()
		t0.Run(sl)
		normal = true
	} else if p := recoverIn(s.name, func() { t0.Run(sl) }, func() { s.goexited(t, rec, r) }); p != nil {
		r.end()
		rec.next()
		s.endLeases(rec)
		s.onPanic(p)
		return
	}
	r.end()
	rec.next()
	s.endLeases(rec)
}

// goexited gives back the slot of rec, whose item t called runtime.Goexit,
// as the goroutine ends.
func (s *Scheduler) goexited(t Task, rec *slotRec, r region) {
	r.end()
	rec.next()
	s.endLeases(rec)
	s.mu.Lock()
	s.completed += rec.batchRan // before the slot goes, and Wait may see s idle
	rec.batchRan = 0
	s.finishLocked(t)
	s.abandonSlotLocked(rec)
	s.unlock()
}

// abandonSlotLocked gives back the slot of rec, whose goroutine is ending
// (an item called runtime.Goexit), and starts what the queued items need.
func (s *Scheduler) abandonSlotLocked(rec *slotRec) {
	s.giveRecLocked(rec)
	s.freeSlotLocked()
	s.spawnLocked()
	s.idleLocked()
}

// barrierAtFrontLocked reports whether the next item to start is a barrier.
func (s *Scheduler) barrierAtFrontLocked() bool {
	return s.barriers > 0 && (s.b == nil || s.b.left.Load() == 0) && isBarrier(s.list.front())
}
