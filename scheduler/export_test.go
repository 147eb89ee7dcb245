package scheduler

import "fmt"

// List exposes the list type to the model tests.
type List struct{ l list }

func (l *List) Push(t Task) ID { return l.l.push(t) }

func (l *List) Pop() Task {
	if l.l.live == 0 {
		return nil
	}
	return l.l.pop()
}

func (l *List) Front() Task { return l.l.front() }

func (l *List) Get(id ID) Task {
	if seg, i := l.l.find(id); seg != nil {
		return seg.at(i)
	}
	return nil
}

func (l *List) Remove(id ID) Task { return l.l.remove(id) }

func (l *List) Drain() []Task { return l.l.drain() }

func (l *List) Len() int { return l.l.live }
func (l *List) Shrink()  { l.l.shrink() }

// Cap returns the number of item slots the list's segments hold.
func (l *List) Cap() int {
	n := 0
	for _, seg := range l.l.segs {
		n += seg.cap()
	}
	return n
}

// Segments returns the number of segments the list holds.
func (l *List) Segments() int { return len(l.l.segs) }

// Check returns a description of what is wrong with the list's invariants,
// or "".
func (l *List) Check() string {
	live := 0
	for k, seg := range l.l.segs {
		if seg.head > seg.n || seg.n > seg.cap() {
			return "a segment's head or fill is out of range"
		}
		n := 0
		for i := seg.head; i < seg.n; i++ {
			if !seg.empty(i) {
				n++
			}
		}
		if n != seg.live {
			return "a segment's live count is wrong"
		}
		if k > 0 && seg.base != l.l.segs[k-1].base+ID(l.l.segs[k-1].n) && seg.base <= l.l.segs[k-1].base {
			return "segments out of ID order"
		}
		if k == 0 && seg.live > 0 && seg.empty(seg.head) {
			return "the first segment's head slot is empty"
		}
		if seg.live == 0 && len(l.l.segs) > 1 {
			return "an emptied segment is kept beside others"
		}
		live += n
	}
	if live != l.l.live {
		return "the list's live count is wrong"
	}
	return ""
}

// Snapshot returns the queued items and the slots in use, read together.
func (s *Scheduler) Snapshot() (pending, active int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.list.live, int(s.active)
}

// Active returns the number of slots in use: workers, turns and TryRun
// callers.
func (s *Scheduler) Active() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(s.active)
}

// Books returns a description of what is wrong with the slot counts of s, or
// "".
func (s *Scheduler) Books() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.active < 0 || s.running < 0 || s.lent < 0 || s.inPlace < 0:
		return "a negative count"
	case s.running > s.active+s.lent && s.running-s.turnsRun > s.active+s.lent:
		return "more items running than slots held"
	case s.turns < 0 || s.turns > s.active:
		return "turns out of range"
	case s.mux.waitingTurns() > s.list.live:
		return "more turns waiting than items in the list"
	}
	return ""
}

// MaxSeg is the most items a segment of the list holds.
const MaxSeg = maxSeg

// Bytes returns the bytes of item slots the list's segments hold.
func (l *List) Bytes() int {
	n := 0
	for _, seg := range l.l.segs {
		if seg.tasks != nil {
			n += 16 * len(seg.tasks)
		} else {
			n += 8 * len(seg.fns)
		}
	}
	return n
}

// Counts returns s's slot counts, for debugging tests.
func (s *Scheduler) Counts() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("active %d running %d inPlace %d turnsRun %d lent %d turns %d live %d mux %d", s.active, s.running, s.inPlace, s.turnsRun, s.lent, s.turns, s.list.live, s.mux.waitingTurns())
}

// HeldSlot is the record of a slot of s that a Slot holds, kept for the
// lending model test after the Slot's run ends.
type HeldSlot struct{ r *slotRec }

// Held returns the record of the slot of s that sl holds, or the zero
// HeldSlot.
func (s *Scheduler) Held(sl Slot) HeldSlot {
	if h, ok := sl.of(s); ok {
		return HeldSlot{h.rec}
	}
	return HeldSlot{}
}

// LendState returns the lending state of h (see settleLocked) and the lent
// count of its Scheduler, read under the Scheduler's lock.
func (h HeldSlot) LendState() (lends, uses int32, lentOut, moving bool, lent int32) {
	s := h.r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return h.r.lends, h.r.uses, h.r.lentOut, h.r.moving != nil, s.lent
}
