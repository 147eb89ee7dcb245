package scheduler

// list is the FIFO of queued items: a ring buffer indexed by ID.
//
// Every pushed item gets the next ID, and an item's slot is its ID's offset
// from the oldest slot, so lookup and removal by ID are O(1). Removing an item
// from the middle leaves an empty slot (nil) that pop skips; slots are never
// compacted, because compaction would break the ID to slot mapping.
//
// A list is not safe for concurrent use; the Scheduler guards it with its mutex.
type list struct {
	buf  []Task // ring; len is zero or a power of two; nil marks a removed item
	head int    // index of the oldest slot
	n    int    // slots in use, removed ones included
	live int    // items not removed
	base ID     // ID of the item in buf[head]
}

const (
	// minCap is the capacity of a list's first buffer.
	minCap = 16
	// maxIdleCap is the largest buffer an emptied list keeps (64 KiB on
	// 64-bit systems): enough that a steady flow of work does not allocate,
	// small enough that an idle list does not pin a burst's peak.
	maxIdleCap = 4096
)

// push appends t, which must not be nil, and returns its ID.
func (l *list) push(t Task) ID {
	if l.base == 0 {
		l.base = 1 // IDs start at 1, so the zero ID never names an item
	}
	if l.n == len(l.buf) {
		l.grow()
	}
	l.buf[(l.head+l.n)&(len(l.buf)-1)] = t
	id := l.base + ID(l.n)
	l.n++
	l.live++
	return id
}

func (l *list) grow() {
	c := max(minCap, 2*len(l.buf))
	buf := make([]Task, c)
	for i := range l.n {
		buf[i] = l.buf[(l.head+i)&(len(l.buf)-1)]
	}
	l.buf, l.head = buf, 0
}

// front returns the oldest item, or nil if the list is empty.
func (l *list) front() Task {
	if l.live == 0 {
		return nil
	}
	return l.buf[l.head] // trim keeps a live item at the head
}

// pop removes and returns the oldest item, or nil if the list is empty.
func (l *list) pop() Task {
	t := l.front()
	if t == nil {
		return nil
	}
	l.buf[l.head] = nil
	l.live--
	l.trim()
	return t
}

// slot returns the index in buf of the item id, or -1 if id is not queued.
func (l *list) slot(id ID) int {
	if id < l.base || id-l.base >= ID(l.n) {
		return -1
	}
	i := (l.head + int(id-l.base)) & (len(l.buf) - 1)
	if l.buf[i] == nil {
		return -1
	}
	return i
}

// get returns the item id, or nil if it is not queued.
func (l *list) get(id ID) Task {
	if i := l.slot(id); i >= 0 {
		return l.buf[i]
	}
	return nil
}

// remove removes the item id and returns it, or returns nil if id is not queued.
func (l *list) remove(id ID) Task {
	i := l.slot(id)
	if i < 0 {
		return nil
	}
	t := l.buf[i]
	l.buf[i] = nil
	l.live--
	l.trim()
	return t
}

// trim drops removed slots from the head, so that the head slot, when there
// is one, holds a live item. Removed slots further in stay until the head
// passes them: dropping them would let the next push reuse an ID. An emptied
// list gives its buffer back if it grew large, so a burst does not pin its
// peak memory.
func (l *list) trim() {
	for l.n > 0 && l.buf[l.head] == nil {
		l.head = (l.head + 1) & (len(l.buf) - 1)
		l.n--
		l.base++
	}
	if l.n == 0 {
		l.head = 0
		if len(l.buf) > maxIdleCap {
			l.buf = nil
		}
	}
}

// drain removes every item and returns them, oldest first.
func (l *list) drain() []Task {
	ts := make([]Task, 0, l.live)
	for t := l.pop(); t != nil; t = l.pop() {
		ts = append(ts, t)
	}
	return ts
}
