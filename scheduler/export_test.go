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
	return s.list.live, int(s.slots.active)
}

// Locked reports whether s's mutex is held now.
func (s *Scheduler) Locked() bool {
	if s.mu.TryLock() {
		s.mu.Unlock()
		return false
	}
	return true
}

// Active returns the number of slots in use: workers, turns and TryRun
// callers.
func (s *Scheduler) Active() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(s.slots.active)
}

// Books returns a description of what is wrong with the counts of s, read
// while its mutex is free, or "": the invariants of admit.go and tree.go.
func (s *Scheduler) Books() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &s.slots
	switch {
	case c.active < 0 || c.running < 0 || c.turns < 0 || s.tree.pending < 0 || s.books.reserved < 0:
		return "a negative count"
	case c.running > c.active:
		return "more slots running than held"
	case c.turns > c.running:
		return "more turns running than slots running"
	case s.tree.mux.waiting() > s.list.live:
		return "more turns waiting than items in the list"
	case s.gate.exclusive && c.running == 0:
		return "a barrier runs on no slot"
	case s.tree.pending > c.between():
		return "more turns pending than slots between items"
	}
	if s.list.live > int(c.between()) && s.tree.pending == 0 {
		pos := c.between()
		if ok, newSlot := s.admitLocked(pos, pos == 0 && isBarrier(s.list.front()), false, false); ok && newSlot {
			return "a queued item may start and no slot is on the way: a lost wake-up"
		}
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
	c := &s.slots
	return fmt.Sprintf("limit %d active %d running %d turns %d pending %d live %d mux %d suspends %d exclusive %v",
		c.limit, c.active, c.running, c.turns, s.tree.pending, s.list.live, s.tree.mux.waiting(), s.gate.suspends, s.gate.exclusive)
}
