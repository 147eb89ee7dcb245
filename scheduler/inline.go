package scheduler

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
//     It runs whether or not s is suspended or closed: it is part of a
//     running item.
//   - Otherwise, if nothing is queued, no barrier runs, s is neither closed
//     nor suspended and a slot is free, f takes a new slot for its run, as
//     libdispatch runs dispatch_sync on an idle queue. For a child, each
//     target above it must have a slot for it too: one that sl holds, used
//     in its holder's place, or a free one of a target with nothing queued.
//     f gets the Slot of that run, which carries sl on.
//
// Otherwise TryRun does nothing and reports false. A panic in f, or
// runtime.Goexit, goes on up to the caller of TryRun after the slot is given
// back. A function run in an item's place counts in Completed, not in
// Running: the item it runs for is running already.
func (s *Scheduler) TryRun(sl Slot, f func(Slot)) bool {
	s.mustBeMade("TryRun")
	if f == nil {
		panic("scheduler: TryRun with a nil function")
	}
	if _, ok := sl.of(s); ok {
		defer s.completeInPlace()
		f(sl)
		return true
	}
	own, ok := s.acquire(sl)
	if !ok {
		return false
	}
	defer s.release(own)
	f(own)
	return true
}

// completeInPlace counts a function that TryRun ran in an item's place.
func (s *Scheduler) completeInPlace() {
	s.mu.Lock()
	s.books.completed++
	s.mu.Unlock()
}

// maxDepth bounds the levels that TryRun and TryEnqueue lock at once: in a
// deeper tree they report false, and the work goes through the lists.
const maxDepth = 16

// A path is the levels of a tree that TryRun or TryEnqueue hold locked, from
// a Scheduler up, child first, as the lock order of the module asks.
type path struct {
	levels [maxDepth]*Scheduler
	n      int
}

// lock locks a, the next level up, reporting false, with nothing more
// locked, if the path is as deep as it may be.
func (p *path) lock(a *Scheduler) bool {
	if p.n == len(p.levels) {
		return false
	}
	a.mu.Lock()
	p.levels[p.n] = a
	p.n++
	return true
}

// unlock releases every level, the root first. It changes nothing else: the
// callers start by hand the slots they counted.
func (p *path) unlock() {
	for i := p.n - 1; i >= 0; i-- {
		p.levels[i].mu.Unlock()
	}
}

// acquire takes a new slot of s for a TryRun of work that carries sl, if
// admitLocked lets such a function start at once, and returns its Slot. For
// a child it takes a slot of each target above too, up to one that sl
// holds, whose holder's place the function takes. It decides with the path
// locked, so that the slots it finds free are the ones it takes.
func (s *Scheduler) acquire(sl Slot) (Slot, bool) {
	if s.Closed() {
		return Slot{}, false
	}
	var p path
	for a := s; a != nil; a = a.tree.parent {
		if _, held := sl.of(a); held {
			break // the function runs there in the place of sl's holder
		}
		if !p.lock(a) {
			p.unlock()
			return Slot{}, false
		}
		if ok, _ := a.admitLocked(0, false, true, false); !ok {
			p.unlock()
			return Slot{}, false
		}
	}
	up := sl                        // the new slots carry sl on, and the slot it holds above the path
	for i := p.n - 1; i >= 0; i-- { // top down, so that each record links to the slot above
		a := p.levels[i]
		a.slots.active++
		a.slots.running++
		if i > 0 {
			a.slots.turns++ // it runs the work of a child
		}
		a.books.busy = true
		var rec *slotRec
		rec, up = a.takeRecLocked(up)
		rec.acquired = int32(p.n) // read from s's record alone
	}
	p.unlock()
	return up, true
}

// release gives back the slots that acquire took for own, from s up,
// counting the function as a completed item of s, and starts the slots that
// items queued meanwhile need.
func (s *Scheduler) release(own Slot) {
	a, r := s, own.rec
	for n := r.acquired; n > 0; n-- {
		next := r.upRec.Load() // the slot above, before r is given back
		a.mu.Lock()
		r.acquired = 0
		a.giveRecLocked(r)
		a.slots.active--
		a.slots.running--
		if a == s {
			a.books.completed++
		} else {
			a.slots.turns--
		}
		a.unlock()
		a, r = a.tree.parent, next
	}
}

// TryEnqueue queues t only if it can start at once, on a free slot with
// nothing queued before it that waits for one (errgroup's TryGo), reporting
// whether it did. For a child, each target above it must start the turn it
// needs at once too. It never blocks and never waits for room. After Close it
// reports false.
func (s *Scheduler) TryEnqueue(t Task) bool {
	s.mustBeMade("TryEnqueue")
	mustTask("TryEnqueue", t)
	if s.Closed() {
		return false
	}
	// Decide with the path from s to its root locked, so that nothing takes
	// the free slots between the look and the start.
	var p path
	defer p.unlock()
	fresh, ok := s.startsAtOnceLocked(&p, isBarrier(t))
	if !ok {
		return false
	}
	if r := s.cfg.room; r != nil && !r.sem.TryAcquire(1) {
		return false
	}
	s.pushLocked(t)
	for i := 0; i < fresh; i++ {
		a := p.levels[i]
		a.slots.active++
		if a.tree.parent == nil {
			rec, _ := a.takeRecLocked(Slot{})
			go rec.work()
			break
		}
		a.tree.pending++ // with a free slot of the target found above, it begins at once
		a.tree.parent.queueTurnLocked(a)
	}
	return true
}

// startsAtOnceLocked locks p, the path from s up to its root, and reports
// whether an item that joins s's list now would start at once, and how many
// levels, from s up, must start a new slot for it: its own at s, then, for
// a child, the turn that needs on its target.
func (s *Scheduler) startsAtOnceLocked(p *path, barrier bool) (fresh int, ok bool) {
	need := true // the work at this level joins its list: the item at s, then a new turn
	for a := s; a != nil; a = a.tree.parent {
		if !p.lock(a) {
			return 0, false
		}
		pos := int32(a.list.live)
		if !need {
			// The level below takes the item on a slot between items, a
			// turn queued here: every item of this list must start at once.
			pos, barrier = pos-1, false
		}
		admitted, newSlot := a.admitLocked(pos, barrier, false, false)
		// A new slot serves the item only if every item queued before it
		// has one already: those that have none wait, and it would too.
		if !admitted || newSlot && (!need || pos > a.slots.between()) {
			return 0, false
		}
		if need && newSlot {
			fresh++
		}
		need, barrier = newSlot, false
	}
	return fresh, true
}
