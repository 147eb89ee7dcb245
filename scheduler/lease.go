package scheduler

import (
	"context"
	"sync"
)

// A lease is the lending of the slots that one Await lends, for as long as
// its wait lasts or until the run of the work that waits ends, whichever
// comes first: work that outlives its item (a goroutine the item started
// and did not wait for) is an outsider's from then on and lends nothing, so
// the slots go back to whoever runs the next item on them.
type lease struct {
	mu   sync.Mutex // held while the slots are lent or taken back
	lent bool       // under mu: the slots are lent

	held [maxLendDepth]Slot // the slots lent, nearest target first
	n    int

	// owner is the slot record of the waiting work's run, in whose list the
	// lease is while lent; the list and detached are under owner.s.mu.
	owner      *slotRec
	prev, next *lease
	detached   bool   // the run ended: the lease left the list for ended
	ended      *lease // the next lease that the run's end gives back
}

// begin lends the slots of l for work that holds sl, reporting false, and
// lending nothing, if that work's run has ended.
func (l *lease) begin(sl Slot) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := sl.rec
	r.s.mu.Lock()
	// The run's end bumps gen, then looks at hasLeases; here hasLeases is
	// set, then gen looked at: either the end finds l, or l sees the end.
	r.hasLeases.Store(true)
	if !sl.live() {
		r.s.mu.Unlock()
		return false
	}
	l.owner = r
	l.next = r.leases
	if l.next != nil {
		l.next.prev = l
	}
	r.leases = l
	r.s.mu.Unlock()
	for i := l.n - 1; i >= 0; i-- { // top down, as slots are taken
		h := l.held[i]
		a := h.rec.s
		a.mu.Lock()
		h.rec.lends++
		a.settleLocked(context.Background(), h.rec)
		a.mu.Unlock()
	}
	l.lent = true
	return true
}

// end takes back the slots of l, unless the end of the waiting work's run
// took them already.
func (l *lease) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.lent {
		return
	}
	r := l.owner
	r.s.mu.Lock()
	if !l.detached {
		if l.prev != nil {
			l.prev.next = l.next
		} else {
			r.leases = l.next
		}
		if l.next != nil {
			l.next.prev = l.prev
		}
		l.prev, l.next = nil, nil
	}
	r.s.mu.Unlock()
	l.giveBack()
}

// giveBack takes back the slots of l, top down. It is called with l.mu held.
func (l *lease) giveBack() {
	for i := l.n - 1; i >= 0; i-- {
		h := l.held[i]
		a := h.rec.s
		a.mu.Lock()
		h.rec.lends--
		a.settleLocked(context.Background(), h.rec)
		a.mu.Unlock()
	}
	l.lent = false
}

// takeLeasesLocked takes the leases of the run of r that has ended (its
// gen bumped) out of r's list, for giveBackLeases, which the caller calls
// after it lets go of s.mu and before r serves another run.
func (s *Scheduler) takeLeasesLocked(r *slotRec) *lease {
	var ended *lease
	for l := r.leases; l != nil; l = l.next {
		l.detached = true
		l.ended = ended
		ended = l
	}
	r.leases = nil
	r.hasLeases.Store(false)
	return ended
}

// giveBackLeases ends the leases that takeLeasesLocked took: their waits go
// on as outsiders', and the slots they lent come back.
func giveBackLeases(l *lease) {
	for ; l != nil; l = l.ended {
		l.mu.Lock()
		if l.lent {
			l.giveBack()
		}
		l.mu.Unlock()
	}
}

// endLeases ends the leases of the run of r that has just ended, on the
// goroutine that ran it, without s.mu.
func (s *Scheduler) endLeases(r *slotRec) {
	if !r.hasLeases.Load() {
		return
	}
	s.mu.Lock()
	l := s.takeLeasesLocked(r)
	s.mu.Unlock()
	giveBackLeases(l)
}
