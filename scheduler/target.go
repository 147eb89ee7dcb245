package scheduler

import "github.com/taskqueue-go/taskqueue/internal/goid"

// Trees. A child Scheduler, made WithTarget(t), has no worker of its own:
// each of its slots is a turn on one of t's slots. To start a slot, the
// child queues a drainer on t, an item like any other of t's, which a
// worker of t (or, if t is a child itself, a drainer of t) runs: the drainer
// takes the child's items, in order, and runs them on its goroutine, which
// then holds a slot of the child and of each target above it. After the
// child's quantum of items, if the child has more, the drainer queues a new
// drainer at the end of t's list and ends, so that t's other items and
// children get their turn: a sibling waits about one quantum.
//
// Lock order: a child's mutex before its target's, never the other way.

// drainer is a child Scheduler seen as an item of its target: running it
// runs the child's items.
type drainer Scheduler

func (d *drainer) Run() { (*Scheduler)(d).drain() }

// defaultQuantum is how many items a drainer runs before it lets its
// target's other items and children go first; see WithQuantum.
const defaultQuantum = 16

// pushDrainer queues a drainer of c, a child of s that has just counted the
// drainer in its active slots. A drainer is queued whatever the state of s,
// closed or bounded: it carries work that c has accepted.
func (s *Scheduler) pushDrainer(c *Scheduler) {
	s.mu.Lock()
	s.seq++
	s.levelFor(c.prio).push(levelItem{c: c, mark: s.list.next, seq: s.seq})
	s.spawnLocked()
	s.mu.Unlock()
}

// drain runs items of s, a child, on the calling goroutine, which runs a
// drainer of s on a slot of s's target.
func (s *Scheduler) drain() {
	g := goid.Current()
	if s.setLabels() {
		defer s.parent.restoreLabels()
	}
	s.mu.Lock()
	s.waiting--
	tok := s.books.take(g)
	s.spawnLocked() // the next turn, if more may start than the running turns take
	for n := int32(0); ; {
		if n >= s.quantum && s.startableLocked() {
			// The quantum is used up and more may start: this slot of s
			// passes to a turn at the end of the target's list, unless one
			// waits there already.
			s.books.give(tok, g)
			if s.waiting > 0 {
				s.freeSlotLocked()
			} else {
				s.waiting++
				s.parent.pushDrainer(s)
			}
			s.mu.Unlock()
			return
		}
		ran, ok := s.runLocked(min(claimMax, max(1, s.quantum-n)), tok, g)
		if !ok {
			s.books.give(tok, g)
			s.freeSlotLocked()
			s.idleLocked()
			s.unlock()
			return
		}
		n += int32(ran)
		if s.grantLocked() { // a waiting item takes this slot back first
			s.books.give(tok, g)
			s.mu.Unlock()
			return
		}
	}
}

// startableLocked reports whether takeLocked would start an item now.
func (s *Scheduler) startableLocked() bool {
	if s.exclusive || s.suspended || s.active > s.limit || s.queuedLocked() == 0 {
		return false
	}
	if s.levels != nil {
		streak := s.streak
		_, ok := s.pickLocked()
		s.streak = streak // a look, not a start
		return ok
	}
	_, isBarrier, _ := s.list.front()
	return !isBarrier || s.running == 0
}
