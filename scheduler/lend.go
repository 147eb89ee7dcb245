package scheduler

import "github.com/taskqueue-go/taskqueue/internal/goid"

// Lending. An item of a tree that waits for another item of the same tree
// (a task of one child calling RunSync on a sibling, say) holds slots of the
// targets above both: if every slot of a target were held by such waiters,
// the items they wait for could never start. Root queues never meet this,
// since a root's items never need another root's slots. So a waiting item
// lends its slots of the targets above the Scheduler it waits for: they
// count as free while it waits, and it takes them back, top down, when its
// wait is over, before any item queued meanwhile (a waiting item has
// started already). Its slots of other Schedulers, its own among them, stay
// held: a serial queue stays serial.

// Await calls wait, which blocks until work of s that the caller waits for
// is done, and lends meanwhile the slots the caller holds of the targets
// above s (see WithTarget), so that s's items can run on them: without it, an
// item of a tree that waits for another queue of the same tree could hold
// the very slots that queue needs. Await returns once wait has returned and
// the caller has its slots back, which it may wait for. A caller that holds
// no slot of a target of s, as any caller on a root, lends nothing.
func (s *Scheduler) Await(wait func()) {
	if s.parent == nil {
		wait()
		return
	}
	g := goid.Current()
	var lent [maxLendDepth]*Scheduler
	n := 0
	for a := s.parent; a != nil && n < len(lent); a = a.parent {
		a.mu.Lock()
		if a.books.holds(g) {
			a.active--
			a.lent++
			a.spawnLocked()
			lent[n] = a
			n++
		}
		a.mu.Unlock()
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

// reclaim takes back a slot lent by the calling goroutine, waiting for one
// to free if none is.
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

// grantLocked gives a slot to the oldest goroutine waiting to reclaim one,
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

// freeSlotLocked gives up a slot: to a goroutine waiting to reclaim one, or
// back to the pool of free slots.
func (s *Scheduler) freeSlotLocked() {
	if !s.grantLocked() {
		s.active--
	}
}
