package scheduler

// Lending. An item of a tree that waits for another item of the same tree
// (a task of one child calling RunSync on a sibling, say) holds slots of the
// targets above both: if every slot of a target were held by such waiters,
// the items they wait for could never start. Root schedulers never meet
// this, since a root's items never need another root's slots. So a waiting
// item lends its slots of the targets above the Scheduler it waits for:
// they count as free while it waits, and it takes them back, top down, when
// its wait is over, before any item queued meanwhile starts (a waiting item
// has started already). Its slots of other Schedulers, its own among them,
// stay held: a serial scheduler stays serial.

// Await calls wait, which blocks until work of s that the caller waits for
// is done, and lends meanwhile the slots that sl holds of the targets above
// s (see WithTarget), so that s's items can run on them: without it, an item
// of a tree that waits for another scheduler of the same tree could hold the
// very slots that scheduler needs. sl is the waiting item's Slot (see Slot);
// the zero Slot lends nothing, as does an item of a root. Await returns once
// wait has returned and the slots are back, which it may wait for.
func (s *Scheduler) Await(sl Slot, wait func()) {
	if s.parent == nil || !sl.live() {
		wait()
		return
	}
	var lent [maxLendDepth]*Scheduler
	n := 0
	for a := s.parent; a != nil && n < len(lent); a = a.parent {
		if _, ok := sl.of(a); !ok {
			continue
		}
		a.mu.Lock()
		a.active--
		a.lent++
		a.spawnLocked()
		a.mu.Unlock()
		lent[n] = a
		n++
	}
	defer func() {
		for i := n - 1; i >= 0; i-- { // top down, as slots are taken
			lent[i].reclaim()
		}
	}()
	wait()
}

// maxLendDepth bounds the targets above a Scheduler that Await lends; deeper
// trees lend the slots of the nearest ones.
const maxLendDepth = 16

// reclaim takes back a lent slot, waiting for one to free if none is.
func (s *Scheduler) reclaim() {
	s.mu.Lock()
	if s.active < s.limit && len(s.returners) == 0 {
		s.active++
		s.lent--
		s.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	s.returners = append(s.returners, ch)
	s.mu.Unlock()
	<-ch // grantLocked counted the slot back in active
	s.mu.Lock()
	s.lent--
	s.mu.Unlock()
}

// grantLocked gives a slot to the oldest item waiting to reclaim one,
// reporting whether one waited. The slot stays counted in active: the caller
// either frees it for this or counts it anew.
func (s *Scheduler) grantLocked() bool {
	if len(s.returners) == 0 {
		return false
	}
	close(s.returners[0])
	s.returners[0] = nil
	s.returners = s.returners[1:]
	if len(s.returners) == 0 {
		s.returners = nil
	}
	return true
}

// freeSlotLocked gives up a slot: to an item waiting to reclaim one, or
// back to the pool of free slots.
func (s *Scheduler) freeSlotLocked() {
	if !s.grantLocked() {
		s.active--
		if s.active <= s.limit && s.cut.Load() {
			s.cut.Store(false)
		}
	}
}
