package scheduler

import (
	"time"

	"github.com/taskqueue-go/taskqueue/internal/goid"
)

// spawnLocked starts the slots the queued items need: one for each item that
// may start now and that no slot holder will take, within the limit. Holders
// between two items count as takers, since each is about to take one. A
// root starts a worker goroutine for a slot; a child queues a drainer on its
// target.
func (s *Scheduler) spawnLocked() {
	for s.active < s.limit && s.grantLocked() {
		s.active++ // a waiting item takes back its lent slot first
	}
	if s.active >= s.limit || s.exclusive || s.suspended {
		return
	}
	want := int32(min(s.turnsLocked(), maxLimit))
	if s.active+s.lent < s.limit {
		// s's own items may start only on slots not lent (see Await).
		want += int32(min(s.list.live, maxLimit))
	}
	if s.levels == nil && len(s.barriers) > 0 && s.list.frontID() == s.barriers[0] {
		want = 0
		if s.running == 0 {
			want = 1 // the barrier may start; it runs alone
		}
	}
	want -= s.active - s.running
	for ; want > 0 && s.active < s.limit; want-- {
		if s.parent != nil && s.waiting > 0 {
			// A child keeps at most one turn waiting in its target's list,
			// so that its siblings wait behind one quantum of it, not one
			// per slot; the turn starts more as it starts.
			return
		}
		s.active++
		switch {
		case s.parent != nil:
			s.waiting++
			s.parent.pushDrainer(s)
		default:
			go s.work()
		}
	}
}

// work is the body of a worker goroutine of a root Scheduler. It holds one
// slot, runs items until none may start, then gives the slot back and
// returns. It does not linger for new work: on the machines measured, a
// worker that stayed, spinning on another core, made a trickle of tasks
// (one, wait, another) two to three times slower than starting a goroutine,
// which the runtime runs next on the submitter's own processor, and it
// burned a core meant for the submitter (see BenchmarkTrickle).
func (s *Scheduler) work() {
	g := goid.Current()
	s.setLabels()
	s.mu.Lock()
	tok := s.books.take(g)
	for {
		if _, ok := s.runLocked(claimMax, tok, g); !ok {
			s.books.give(tok, g)
			if s.grantLocked() {
				s.mu.Unlock()
				return
			}
			s.active--
			s.idleLocked()
			s.unlock()
			return
		}
		if s.grantLocked() { // a waiting item takes this slot back first
			s.books.give(tok, g)
			s.mu.Unlock()
			return
		}
	}
}

// runLocked runs what may start now on the slot tok, which the calling
// goroutine g holds: a claim of up to max items on a serial Scheduler, or one
// item. It reports how many items ran, or false if none could start. It is
// called, and returns, with s.mu held.
func (s *Scheduler) runLocked(max int32, tok token, g uint64) (int, bool) {
	if s.claimableLocked() {
		c := s.claimLocked(max)
		s.mu.Unlock()
		ran := s.runClaim(c, tok, g)
		s.mu.Lock()
		s.list.unclaim()
		s.running--
		s.completed += uint64(ran)
		return ran, true
	}
	t, ok := s.takeLocked()
	if !ok {
		return 0, false
	}
	s.mu.Unlock()
	s.run(t, tok, g)
	s.mu.Lock()
	s.finishLocked(t)
	return 1, true
}

// takeLocked takes the next item that may start now, counts it as running
// and gives back its room.
func (s *Scheduler) takeLocked() (Task, bool) {
	if s.exclusive || s.suspended || s.active > s.limit {
		return nil, false // after SetLimit lowered the limit, slots above it go
	}
	if s.levels == nil && s.active+s.lent > s.limit {
		return nil, false // own items run only on slots not lent
	}
	from := -1
	if s.levels != nil {
		var ok bool
		if from, ok = s.pickLocked(); !ok {
			return nil, false
		}
	}
	if from >= 0 {
		s.running++
		s.drainRun++
		return (*drainer)(s.levels[from].pop().c), true
	}
	if s.list.live == 0 {
		return nil, false
	}
	if len(s.barriers) > 0 && s.list.frontIsBarrier() {
		if s.running > 0 {
			return nil, false // the last item to finish will start the barrier
		}
		s.exclusive = true
		s.barriers = s.barriers[1:]
	}
	s.waits.startedLocked(s.list.frontID())
	t := s.list.pop()
	s.running++
	if s.room != nil {
		s.room.release(1)
	}
	return t, true
}

// claimMax is the most items a worker of a serial Scheduler takes out of the
// list in one step; see runClaim.
const claimMax = 64

// claimableLocked reports whether the calling worker may claim a run of
// items: s is serial, so that running them one after the other keeps the
// order and the limit, and the item at the head may start.
func (s *Scheduler) claimableLocked() bool {
	return s.limit == 1 && s.active == 1 && s.list.live > 1 && s.levels == nil &&
		!s.suspended && !s.exclusive && len(s.barriers) == 0
}

// A claim is a run of items a worker took out of the list at once.
type claim struct {
	seg     *segment
	to      int32       // the end of the claim in seg
	samples []ID        // the items whose waits are sampled, in order
	queued  []time.Time // when each was queued
	hist    *histogram  // where their waits go
}

// claimLocked claims up to max items for the calling worker and counts the
// claim as one item running.
func (s *Scheduler) claimLocked(max int32) claim {
	seg := s.list.claim(max)
	c := claim{seg: seg, to: s.list.claimTo}
	c.samples, c.queued, c.hist = s.waits.claimedLocked(seg.base+ID(s.list.claimFrom), seg.base+ID(c.to))
	s.running++
	return c
}

// runClaim runs, one after the other, the items of the claim c, which the
// calling worker took out of the list under one lock instead of one lock per
// item. Each item goes to the worker or to a removal (see
// list.nextClaimed): Cancel still stops an item of a claim that has not
// started. Suspend and SetLimit revoke the rest of a claim, and runClaim
// ends when it is used up. It returns how many items ran. A panic in an item
// goes to the panic handler; if an item calls runtime.Goexit, runClaim ends
// the claim and gives the slot back before the worker's goroutine ends.
func (s *Scheduler) runClaim(c claim, tok token, g uint64) (ran int) {
	normal := false
	defer func() {
		if normal {
			return
		}
		s.mu.Lock()
		s.list.unclaim()
		s.running--
		s.completed += uint64(ran)
		s.books.give(tok, g)
		s.freeSlotLocked()
		s.spawnLocked()
		s.idleLocked()
		s.unlock()
	}()
	for {
		t, i, ok := s.list.nextClaimed(c.seg, c.to)
		if !ok {
			break
		}
		for len(c.samples) > 0 && c.samples[0] <= c.seg.base+ID(i) {
			if c.samples[0] == c.seg.base+ID(i) {
				c.hist.record(c.queued[0])
			}
			c.samples, c.queued = c.samples[1:], c.queued[1:]
		}
		s.room.release(1)
		ran++
		s.call(t)
	}
	normal = true
	return ran
}

// call runs t, giving a panic to the panic handler.
func (s *Scheduler) call(t Task) {
	r := s.region()
	defer func() {
		if r != nil {
			r.End()
		}
		if v := recover(); v != nil {
			s.onPanic(s.panicError(v))
		}
	}()
	t.Run()
}

// finishLocked records the end of t, an item that ran on a slot (nil for
// the function of a TryRun).
func (s *Scheduler) finishLocked(t Task) {
	s.running--
	if _, ok := t.(*drainer); ok {
		s.drainRun--
	} else {
		s.completed++
	}
	if s.exclusive {
		// The barrier is done: the items behind it may start, and the
		// slots that left while it waited must be replaced.
		s.exclusive = false
		s.spawnLocked()
	}
}

// run runs t on the calling worker, which holds the slot tok. A panic in t
// goes to the panic handler and the worker carries on. If t calls
// runtime.Goexit the worker cannot carry on: it gives its slot back, with the
// accounting of t, and a new worker takes over if there is work.
func (s *Scheduler) run(t Task, tok token, g uint64) {
	normal := false
	r := s.region()
	defer func() {
		if r != nil {
			r.End()
		}
		if normal {
			return
		}
		if v := recover(); v != nil {
			s.onPanic(s.panicError(v))
			return
		}
		s.mu.Lock()
		s.books.give(tok, g)
		s.freeSlotLocked()
		s.finishLocked(t)
		s.spawnLocked()
		s.idleLocked()
		s.unlock()
	}()
	t.Run()
	normal = true
}
