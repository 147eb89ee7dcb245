package scheduler

// Priorities. A target's list holds its children's turns as items (see
// tree.go), all the same value: the target's mux. Which child a turn goes to
// is decided when it starts, not when it was queued: the oldest turn of the
// highest priority, except that, while turns of lower priorities wait, every
// shareEvery-th start goes to the one of them that has waited longest. So the
// highest priority is served first and the lowest is never starved, and the
// target's own items and barriers keep their places in its list: priorities
// order the children among themselves.

// shareEvery is how often, in starts, a lower priority gets its turn while a
// higher one is busy.
const shareEvery = 8

// A mux holds the turns of a target's children that wait for a slot of the
// target, under the target's mutex. Its invariant: waiting turns, over all
// levels, equal the mux items in the target's list.
type mux struct {
	s      *Scheduler // the target
	levels []*level   // by priority, highest first
	streak int32      // starts in a row from the highest level while a lower one waited
	seq    uint64     // orders the turns of all levels
	// ids are the IDs of the mux items in the target's list, oldest first:
	// they leave it at its front, as turns start, or at the end of ids, as
	// a child withdraws a turn it no longer needs (see withdrawTurnLocked).
	ids  []ID
	head int
}

// A level is a FIFO of the children's turns of one priority.
type level struct {
	prio  int32
	turns []turn // FIFO from head
	head  int
}

// A turn is a child's request for a slot of its target.
type turn struct {
	c   *Scheduler
	seq uint64
}

// CatchesPanics marks a turn as a task whose items catch their own panics.
func (m *mux) CatchesPanics() {}

// Run runs the turn that the target's slot sl goes to.
func (m *mux) Run(sl Slot) {
	m.s.mu.Lock()
	c := m.pickLocked()
	m.s.mu.Unlock()
	c.drain(sl)
}

// waiting returns the number of turns waiting in the target's list; m may
// be nil. (A turn taken from the list stays in its level until the mux item
// that took it picks it.)
func (m *mux) waiting() int {
	if m == nil {
		return 0
	}
	return len(m.ids) - m.head
}

// pushed notes the ID of a mux item just pushed on the target's list.
func (m *mux) pushed(id ID) { m.ids = append(m.ids, id) }

// taken notes that the oldest mux item left the target's list, at its front.
func (m *mux) taken() {
	m.head++
	if m.head == len(m.ids) {
		m.ids, m.head = m.ids[:0], 0
		if cap(m.ids) > maxIdleLevel {
			m.ids = nil
		}
	}
}

// withdraw takes a turn of c that waits back out of m's levels and one mux
// item out of the target's list l, reporting false if c has none waiting
// (the turn was taken meanwhile, and will run).
func (m *mux) withdraw(c *Scheduler, l *list) bool {
	if m == nil || m.waiting() == 0 {
		return false
	}
	lv := m.levelFor(c.tree.prio)
	for i := len(lv.turns) - 1; i >= lv.head; i-- {
		if lv.turns[i].c == c {
			lv.turns = append(lv.turns[:i], lv.turns[i+1:]...)
			id := m.ids[len(m.ids)-1]
			m.ids = m.ids[:len(m.ids)-1]
			l.remove(id) // mux items are all alike: which one goes does not matter
			return true
		}
	}
	return false
}

// add puts a turn of c in its level, for a mux item that the caller queues.
func (m *mux) add(c *Scheduler) {
	m.seq++
	lv := m.levelFor(c.tree.prio)
	lv.turns = append(lv.turns, turn{c, m.seq})
}

// levelFor returns m's level of priority prio, making it if needed.
func (m *mux) levelFor(prio int32) *level {
	i := 0
	for ; i < len(m.levels); i++ {
		if m.levels[i].prio == prio {
			return m.levels[i]
		}
		if m.levels[i].prio < prio {
			break
		}
	}
	lv := &level{prio: prio}
	m.levels = append(m.levels, nil)
	copy(m.levels[i+1:], m.levels[i:])
	m.levels[i] = lv
	return lv
}

// pickLocked takes, by the rules above, the turn that starts now. There is
// one: a mux item was taken from the list.
func (m *mux) pickLocked() *Scheduler {
	var high, low *level // the first level with a turn; the one of the oldest lower turn
	for _, lv := range m.levels {
		if lv.head == len(lv.turns) {
			continue
		}
		switch {
		case high == nil:
			high = lv
		case low == nil || lv.turns[lv.head].seq < low.turns[low.head].seq:
			low = lv
		}
	}
	from := high
	switch {
	case low == nil:
		m.streak = 0
	case m.streak >= shareEvery-1:
		m.streak = 0
		from = low
	default:
		m.streak++
	}
	return from.pop()
}

// maxIdleLevel is the most turns an emptied level keeps room for.
const maxIdleLevel = 256

func (lv *level) pop() *Scheduler {
	c := lv.turns[lv.head].c
	lv.turns[lv.head] = turn{}
	lv.head++
	if lv.head == len(lv.turns) {
		lv.turns, lv.head = lv.turns[:0], 0
		if cap(lv.turns) > maxIdleLevel {
			lv.turns = nil // a burst's peak is not kept
		}
	}
	return c
}
