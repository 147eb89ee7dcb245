package scheduler

import "context"

// TryRun runs f on the calling goroutine, as an item of s, when s can run it
// at once without breaking its rules, and reports whether it did. sl is the
// Slot of the caller's work (see Slot), or the zero Slot for work that runs
// no item.
//
//   - If sl holds a slot of s (see Holds), f runs in the place of the item
//     that holds it, on its slot, ahead of the items queued: that item waits
//     for f, so the limit and, with a limit of one, exclusivity hold. This is
//     the rule of .NET's TryExecuteTaskInline, which lets a task that waits
//     for work of its own scheduler finish instead of deadlocking. f gets sl.
//   - Otherwise, if nothing is queued, no barrier runs, s is neither closed
//     nor suspended and a slot is free (for a child, on each target above it
//     too: one that sl holds, or a free one), f takes a slot for its run, as
//     libdispatch runs dispatch_sync on an idle queue. f gets the Slot of
//     that run, which carries sl on.
//
// Otherwise TryRun does nothing and reports false. A panic in f, or
// runtime.Goexit, goes on up to the caller of TryRun after the slot is given
// back.
//
// A slot that sl holds may be lent, while other work of its holder waits
// (see Await): TryRun then waits for it to come back before f runs on it.
func (s *Scheduler) TryRun(sl Slot, f func(Slot)) bool {
	ran, _ := s.TryRunContext(context.Background(), sl, f)
	return ran
}

// TryRunContext is TryRun, except that if ctx ends while it waits for a lent
// slot to come back, it runs nothing and returns false and ctx.Err().
func (s *Scheduler) TryRunContext(ctx context.Context, sl Slot, f func(Slot)) (bool, error) {
	if f == nil {
		panic("scheduler: TryRun with a nil function")
	}
	if _, ok := sl.of(s); ok {
		var held [maxLendDepth]Slot
		n := sl.heldFrom(s, held[:])
		if err := use(ctx, held[:n]); err != nil { // f runs on them: they are not lent meanwhile
			return false, err
		}
		defer unuse(held[:n])
		s.mu.Lock()
		s.inPlace++
		s.mu.Unlock()
		defer s.endInPlace()
		f(sl)
		return true, nil
	}
	own, ok, err := s.acquire(ctx, sl)
	if !ok {
		return false, err
	}
	defer s.release(own)
	f(own)
	return true, nil
}

// acquire takes a new slot of s, if s may start an item now, for work that
// carries sl, and returns its Slot. For a child it takes a slot of each
// target above too: the one sl holds, in its holder's place, or a new one.
// It returns ctx.Err() if ctx ended while it waited for a lent slot that sl
// holds to come back.
func (s *Scheduler) acquire(ctx context.Context, sl Slot) (Slot, bool, error) {
	s.mu.Lock()
	if !s.freeLocked(false) || s.Closed() {
		s.mu.Unlock()
		return Slot{}, false, nil
	}
	s.active++
	s.running++
	if s.parent == nil {
		_, own := s.takeRecLocked(sl)
		s.mu.Unlock()
		return own, true, nil
	}
	s.mu.Unlock()
	// A child's slot is a turn on its target's: in the place of the caller's
	// item if sl holds a slot there, else on a new one.
	up, took := sl, false
	var err error
	ok := true
	if _, held := sl.of(s.parent); held {
		var held [maxLendDepth]Slot
		if err = use(ctx, held[:sl.heldFrom(s.parent, held[:])]); err == nil {
			s.parent.mu.Lock()
			s.parent.inPlace++
			s.parent.mu.Unlock()
		}
		ok = err == nil
	} else {
		up, took, err = s.parent.acquire(ctx, sl)
		ok = took
	}
	if !ok {
		s.mu.Lock()
		s.active--
		s.running--
		s.spawnLocked()
		s.idleLocked()
		s.unlock()
		return Slot{}, false, err
	}
	s.mu.Lock()
	rec, own := s.takeRecLocked(up)
	rec.tookUp = took // release gives it back
	s.mu.Unlock()
	return own, true, nil
}

// release gives back the slot own, which acquire took, counting its item as
// completed, and, for a child, what acquire took of the targets above. Items
// queued meanwhile start on new slots.
func (s *Scheduler) release(own Slot) {
	up, tookUp := own.up(), own.rec.tookUp
	own.rec.tookUp = false
	s.mu.Lock()
	s.giveRecLocked(own.rec)
	var leases *lease
	if own.rec.hasLeases.Load() {
		leases = s.takeLeasesLocked(own.rec)
	}
	s.freeSlotLocked() // before finishLocked starts new slots
	s.finishLocked(nil)
	s.spawnLocked()
	s.idleLocked()
	s.unlock()
	giveBackLeases(leases)
	if s.parent == nil {
		return
	}
	if tookUp {
		s.parent.release(up)
	} else {
		var held [maxLendDepth]Slot
		unuse(held[:up.heldFrom(s.parent, held[:])])
		s.parent.endInPlace()
	}
}

func (s *Scheduler) endInPlace() {
	s.mu.Lock()
	s.inPlace--
	s.completed++
	s.idleLocked()
	s.unlock()
}

// freeLocked reports whether an item could start on a new slot of s now,
// ahead of nothing: no item waits without a slot on the way, no barrier runs,
// s is not suspended and a slot is free: for one of s's own items, one that
// no waiting item lent; for a child's turn, any (see lend.go).
func (s *Scheduler) freeLocked(turn bool) bool {
	used := s.active
	if !turn {
		used += s.lent
	}
	return !s.exclusive && s.suspends == 0 && used < s.limit &&
		int32(min(s.queuedLocked(), maxLimit)) <= s.active-s.running && !s.heldAbove()
}

// TryEnqueue queues t only if it can start at once, on a free slot with
// nothing queued before it that waits for one (errgroup's TryGo), reporting
// whether it did. For a child, each target above it must start the turn it
// needs at once too. It never blocks and never waits for room. After Close it
// reports false.
func (s *Scheduler) TryEnqueue(t Task) bool {
	mustTask("TryEnqueue", t)
	// Lock the path from s up to the root, child before target, so that
	// nothing takes the free slots between the look and the start.
	var path [maxLendDepth + 1]*Scheduler
	n := 0
	for a := s; a != nil && n < len(path); a = a.parent {
		a.mu.Lock()
		path[n] = a
		n++
	}
	defer func() {
		for i := n - 1; i >= 1; i-- {
			path[i].mu.Unlock()
		}
	}()
	// need is how many levels, from s up, must start a new slot: the new
	// item's at s, then, for a child, the turn it requests on its target.
	need := 0
	ok := !s.Closed() && (!isBarrier(t) || s.running == 0 && s.queuedLocked() == 0)
	for i := 0; ok && i < n; i++ {
		a := path[i]
		if a.exclusive || a.suspends > 0 || int32(min(a.queuedLocked(), maxLimit)) > a.active-a.running {
			ok = false // a barrier runs, a is held, or items wait without a slot
		} else if need == i && int32(a.queuedLocked()) == a.active-a.running {
			// No slot of a is free between items: the new item, or the new
			// turn from below, needs one (an item of s's own, one that no
			// waiting item lent).
			used := a.active
			if i == 0 {
				used += a.lent
			}
			if ok = used < a.limit; ok {
				need = i + 1
			}
		}
	}
	if ok && s.room != nil {
		ok = s.room.sem.TryAcquire(1)
	}
	if !ok {
		s.mu.Unlock()
		return false
	}
	id := s.list.push(t)
	s.waits.pushedLocked(id)
	if isBarrier(t) {
		s.barriers++
	}
	for i := 0; i < need; i++ {
		a := path[i]
		a.active++
		if a.parent == nil {
			rec, _ := a.takeRecLocked(Slot{})
			go rec.work()
			break
		}
		a.turns++ // with the target's free slot found above, it starts at once
		a.parent.queueTurnLocked(a)
	}
	s.mu.Unlock()
	return true
}
