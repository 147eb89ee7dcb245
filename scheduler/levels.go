package scheduler

// Priorities. A child Scheduler made WithPriority(p) queues its drainers
// (its turns on its target's slots, see target.go) in its target's level for
// priority p; the target's own items, in its list, have priority 0. A
// target starts the oldest item of its highest priority, except that, while
// items of lower priorities wait, every shareEvery-th start goes to the one
// of them that has waited longest: the highest priority is served first, and
// the lowest is never starved. Between the list and the turns of priority 0,
// the oldest goes first.
//
// While a barrier is queued, the items queued before it start (by the same
// rule), then it starts alone once they have finished, then the others: a
// barrier's promise does not bend to priorities.

// shareEvery is how often, in starts, a lower priority gets its turn while a
// higher one is busy.
const shareEvery = 8

// A level is a FIFO of the drainers of one priority.
type level struct {
	prio  int32
	items []levelItem // FIFO from head
	head  int
}

// A levelItem is a child's drainer. mark and seq order it against the items
// of the list and of other levels: it is younger than the list's items with
// IDs below mark, older than the others, and seq breaks ties between levels.
type levelItem struct {
	c    *Scheduler
	mark ID
	seq  uint64
}

// maxIdleLevel is the most turns an emptied level keeps room for.
const maxIdleLevel = 256

func (lv *level) len() int { return len(lv.items) - lv.head }

func (lv *level) push(it levelItem) { lv.items = append(lv.items, it) }

func (lv *level) pop() levelItem {
	it := lv.items[lv.head]
	lv.items[lv.head] = levelItem{}
	lv.head++
	if lv.head == len(lv.items) {
		lv.items, lv.head = lv.items[:0], 0
		if cap(lv.items) > maxIdleLevel {
			lv.items = nil // a burst's peak is not kept
		}
	}
	return it
}

// levelFor returns s's level of priority prio, making it if needed.
func (s *Scheduler) levelFor(prio int32) *level {
	i := 0
	for ; i < len(s.levels); i++ {
		if s.levels[i].prio == prio {
			return s.levels[i]
		}
		if s.levels[i].prio < prio {
			break
		}
	}
	lv := &level{prio: prio}
	s.levels = append(s.levels, nil)
	copy(s.levels[i+1:], s.levels[i:])
	s.levels[i] = lv
	return lv
}

// queuedLocked returns the number of items waiting in s's list and levels.
func (s *Scheduler) queuedLocked() int { return s.list.live + s.turnsLocked() }

// turnsLocked returns the number of children's turns waiting in s's levels.
func (s *Scheduler) turnsLocked() int {
	n := 0
	for _, lv := range s.levels {
		n += lv.len()
	}
	return n
}

// age is the order of an item among those queued on a Scheduler: smaller is
// older.
type age struct {
	id  ID     // the item's ID, or a drainer's mark
	seq uint64 // the list's items are younger than the drainers of equal mark
}

func (a age) before(b age) bool {
	return a.id < b.id || (a.id == b.id && a.seq < b.seq)
}

// candidate is the front item of a level, the list being level -1.
type candidate struct {
	lv   int // index in levels, or -1 for the list
	prio int32
	age  age
}

// pickLocked chooses, by the rules above, which level starts an item next,
// for a Scheduler with levels. It returns -1 for the list, a level index, or
// false if nothing may start now.
func (s *Scheduler) pickLocked() (int, bool) {
	var cands [8]candidate
	cs := cands[:0]
	// s's own items run only on slots not lent (see Await); the caller's
	// slot is counted in active.
	if s.list.live > 0 && s.active+s.lent <= s.limit {
		cs = append(cs, candidate{-1, 0, age{s.list.frontID(), ^uint64(0)}})
	}
	for i, lv := range s.levels {
		if lv.len() > 0 {
			it := lv.items[lv.head]
			cs = append(cs, candidate{i, lv.prio, age{it.mark, it.seq}})
		}
	}
	if len(cs) == 0 {
		return 0, false
	}
	if len(s.barriers) > 0 {
		// The items older than the oldest barrier go first, by the
		// priority rule; the barrier itself when they have all finished.
		b := age{s.barriers[0], ^uint64(0)}
		older := cs[:0]
		for _, c := range cs {
			if c.age.before(b) {
				older = append(older, c)
			}
		}
		if len(older) == 0 {
			if s.running > 0 {
				return 0, false // the barrier waits for the items before it
			}
			return -1, true // the barrier: the list's front
		}
		cs = older
	}
	high := cs[0]
	for _, c := range cs[1:] {
		if c.prio > high.prio || (c.prio == high.prio && c.age.before(high.age)) {
			high = c
		}
	}
	var low *candidate // the oldest of the lower priorities
	for i := range cs {
		if cs[i].prio < high.prio && (low == nil || cs[i].age.before(low.age)) {
			low = &cs[i]
		}
	}
	switch {
	case low == nil:
		s.streak = 0
	case s.streak >= shareEvery-1:
		s.streak = 0
		return low.lv, true
	default:
		s.streak++
	}
	return high.lv, true
}
