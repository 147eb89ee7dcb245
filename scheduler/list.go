package scheduler

import (
	"sort"
	"sync"
)

// list is the FIFO of a Scheduler's queued items. It is not safe for
// concurrent use; its Scheduler's mutex guards it.
//
// Items live in segments: arrays that fill from the tail and empty from the
// head, and that are never copied. A segment that empties, at the head or in
// the middle, goes back to a pool, so memory follows the items queued now,
// not a burst's peak nor the removals behind a head that does not move.
//
// A segment holds either functions (Func items, one word each: a queue of a
// million plain functions costs about 8 bytes an item) or Tasks (two words,
// an interface value); a Func pushed on a segment of Tasks goes in as a Task,
// so kinds change only from one segment to the next, and a mix of kinds costs
// at most one short segment per change.
//
// Every pushed item gets the next ID. A segment holds a run of consecutive
// IDs, so an item is found from its ID by a binary search over the segments
// and an offset in one.
//
// Invariants, after every method: live counts the items not popped or
// removed; the first segment's head slot holds a live item when live > 0
// (trim keeps it so); a segment with no live item is freed unless it is the
// only one.
type list struct {
	segs []*segment // in ID order; segs[0] holds the oldest queued item
	next ID         // ID of the next push; 0 until the first
	live int        // items queued and not removed
}

type segment struct {
	base  ID       // ID of slot 0
	head  int      // index of the oldest slot not yet popped
	n     int      // slots filled
	live  int      // slots filled, not popped and not removed
	fns   []func() // the items of a segment of functions; nil in one of Tasks
	tasks []Task   // the items of a segment of Tasks; nil in one of functions
}

const (
	// minSeg and maxSeg bound a segment's length: a list's first segment is
	// short, so that a queue with a few items holds little, and each new one
	// doubles, so that a backlog costs few segments.
	minSeg = 8
	maxSeg = 1024
	// classes is the number of segment lengths, minSeg<<0 to maxSeg.
	classes = 8
)

// pools hold emptied segments by kind (0: functions, 1: Tasks) and length, so
// that a steady flow of items allocates nothing.
var pools [2][classes]sync.Pool

func class(n int) int {
	i := 0
	for minSeg<<i < n {
		i++
	}
	return i
}

// newSegment returns an empty segment of length class minSeg<<c for items of
// the given kind, based at ID base.
func newSegment(c int, tasks bool, base ID) *segment {
	kind := 0
	if tasks {
		kind = 1
	}
	s, _ := pools[kind][c].Get().(*segment)
	if s == nil {
		// An array of pointers over 512 bytes carries an 8-byte header in its
		// allocation: one slot less keeps it in its size class rather than
		// the next, which would cost a ninth more per item.
		n := minSeg << c
		s = &segment{}
		if tasks {
			if n*16 > 512 {
				n--
			}
			s.tasks = make([]Task, n)
		} else {
			if n*8 > 512 {
				n--
			}
			s.fns = make([]func(), n)
		}
	}
	s.base = base
	return s
}

func (s *segment) cap() int {
	if s.tasks != nil {
		return len(s.tasks)
	}
	return len(s.fns)
}

// class returns the length class of s.
func (s *segment) class() int { return class(s.cap()) }

// free gives s back to its pool. Its slots are all cleared by then.
func (s *segment) free() {
	s.head, s.n, s.live = 0, 0, 0
	kind := 0
	if s.tasks != nil {
		kind = 1
	}
	pools[kind][s.class()].Put(s)
}

// at returns the item in slot i, or nil if it was popped or removed.
func (s *segment) at(i int) Task {
	if s.tasks != nil {
		return s.tasks[i]
	}
	if f := s.fns[i]; f != nil {
		return Func(f)
	}
	return nil
}

// clear empties slot i.
func (s *segment) clear(i int) {
	if s.tasks != nil {
		s.tasks[i] = nil
	} else {
		s.fns[i] = nil
	}
}

func (s *segment) empty(i int) bool {
	if s.tasks != nil {
		return s.tasks[i] == nil
	}
	return s.fns[i] == nil
}

// put stores t in the next slot of s, which has room, reporting false if a
// segment of functions cannot hold it.
func (s *segment) put(t Task) bool {
	if s.tasks != nil {
		s.tasks[s.n] = t
	} else if f, ok := t.(Func); ok {
		s.fns[s.n] = f
	} else {
		return false
	}
	s.n++
	s.live++
	return true
}

// push appends t, which must not be nil, and returns its ID.
func (l *list) push(t Task) ID {
	if l.next == 0 {
		l.next = 1 // IDs start at 1, so the zero ID never names an item
	}
	// Items go on in the tail segment while it has room and holds the IDs up
	// to this one: not after a removal freed the segment that followed it.
	var tail *segment
	if k := len(l.segs); k > 0 {
		tail = l.segs[k-1]
		if tail.n == tail.cap() || tail.base+ID(tail.n) != l.next {
			tail = nil
		}
	}
	if tail == nil || !tail.put(t) {
		c := 0
		if k := len(l.segs); k > 0 {
			last := l.segs[k-1]
			c = min(last.class()+1, classes-1)
			if last.n == 0 {
				// The emptied segment trim keeps holds the other kind: it
				// gives way, so that the first segment never lies empty.
				c = last.class()
				l.segs[k-1] = nil
				l.segs = l.segs[:k-1]
				last.free()
			}
		}
		_, isFunc := t.(Func)
		tail = newSegment(c, !isFunc, l.next)
		l.segs = append(l.segs, tail)
		tail.put(t)
	}
	l.live++
	id := l.next
	l.next++
	return id
}

// front returns the oldest item, or nil if the list is empty.
func (l *list) front() Task {
	if l.live == 0 {
		return nil
	}
	seg := l.segs[0]
	return seg.at(seg.head)
}

// frontID returns the ID of the oldest item; the list must not be empty.
func (l *list) frontID() ID {
	seg := l.segs[0]
	return seg.base + ID(seg.head)
}

// pop removes the oldest item and returns it; the list must not be empty.
func (l *list) pop() Task {
	seg := l.segs[0]
	t := seg.at(seg.head)
	seg.clear(seg.head)
	seg.head++
	seg.live--
	l.live--
	l.trim()
	return t
}

// find returns the segment and index of the queued item id, or nil.
func (l *list) find(id ID) (*segment, int) {
	k := sort.Search(len(l.segs), func(k int) bool { return l.segs[k].base > id }) - 1
	if id == 0 || k < 0 {
		return nil, 0
	}
	seg := l.segs[k]
	i := int(id - seg.base)
	if i < seg.head || i >= seg.n || seg.empty(i) {
		return nil, 0
	}
	return seg, i
}

// remove removes the item id and returns it, or nil if id is not queued. A
// segment emptied by the removal is freed at once, wherever it is, so that
// removals cost no memory while the head stays put.
func (l *list) remove(id ID) Task {
	seg, i := l.find(id)
	if seg == nil {
		return nil
	}
	t := seg.at(i)
	seg.clear(i)
	seg.live--
	l.live--
	if seg.live == 0 && seg != l.segs[0] {
		k := sort.Search(len(l.segs), func(k int) bool { return l.segs[k].base >= seg.base })
		copy(l.segs[k:], l.segs[k+1:])
		l.segs[len(l.segs)-1] = nil
		l.segs = l.segs[:len(l.segs)-1]
		seg.free()
	}
	l.trim()
	return t
}

// trim drops the emptied slots at the head, so that the head slot, when there
// is one, holds a live item, and frees the segments that have emptied. The
// last segment is kept when it empties, reset, so that a queue through which
// items pass one at a time does not take and free a segment for each; shrink
// frees it once the queue goes idle.
func (l *list) trim() {
	for len(l.segs) > 0 {
		seg := l.segs[0]
		for seg.head < seg.n && seg.empty(seg.head) {
			seg.head++
		}
		if seg.head < seg.n {
			return
		}
		if len(l.segs) == 1 {
			seg.base, seg.head, seg.n = l.next, 0, 0
			return
		}
		l.segs[0] = nil
		l.segs = l.segs[1:]
		seg.free()
	}
}

// shrink frees the segment an emptied list keeps, so that an idle queue
// holds no memory for items. A short slice of segments is kept, emptied: a
// queue that goes idle after each task (a submit, a wait, another) would
// otherwise allocate it again for the next.
func (l *list) shrink() {
	if l.live == 0 && len(l.segs) > 0 {
		l.segs[0].free()
		clear(l.segs)
		l.segs = l.segs[:0]
		if cap(l.segs) > keptSegs {
			l.segs = nil
		}
	}
}

// keptSegs is the longest slice of segments that shrink keeps.
const keptSegs = 4

// drain removes every item and returns them, oldest first.
func (l *list) drain() []Task {
	ts := make([]Task, 0, l.live)
	for l.live > 0 {
		ts = append(ts, l.pop())
	}
	return ts
}
