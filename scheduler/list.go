package scheduler

import (
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"
)

// list is the FIFO of queued items.
//
// Items live in segments: arrays that fill from the tail and empty from the
// head, and that are never copied. A segment that has emptied, at the head or
// in the middle, goes back to a pool, so memory follows the items queued now,
// not a burst's peak nor the removals behind a head that does not move.
//
// Each item takes one 8-byte word and a tag byte. The word is the data word
// of the item's interface value; its type word (the itab) is kept once per
// segment, in a small table that the tag indexes. A queue of a million
// functions thus costs about 9 bytes per item where a slice of interfaces
// costs 16. The tag also holds the barrier mark, so marking costs nothing
// once queued.
//
// Every pushed item gets the next ID. A segment holds a run of consecutive
// IDs, so an item is found from its ID by a binary search over the segments
// and an offset in one.
//
// A list is not safe for concurrent use; the Scheduler guards it.
type list struct {
	segs []*segment // in ID order; segs[0] holds the oldest queued item
	next ID         // ID of the next push; 0 until the first
	live int        // items queued and not removed, those claimed excluded

	// A claim is a run of items at the head that a worker took out of the
	// list in one step, to run one after the other without the lock (see
	// claim). Until it ends the claimed segment stays put, and each claimed
	// item goes to whoever swaps its data word first: the worker, to run it,
	// or a removal, which then wins it back before it started.
	claimed            *segment
	claimFrom, claimTo int32
	claimLeft          atomic.Int32 // claimed items not taken yet, by anyone
	// claimNext is the next slot of the claim for its worker: the worker
	// moves it on by compare-and-swap before it takes a slot, and revoke
	// moves it to the end, so that each slot goes to one of them.
	claimNext atomic.Int32
}

type segment struct {
	base ID    // ID of data[0]
	head int32 // index of the oldest slot not yet popped
	n    int32 // slots filled
	live int32 // slots filled, not popped and not removed
	ntab int32 // entries of tabs in use
	last uint8 // the index in tabs of the last item's type
	// data[i] is the data word of item base+i; nil once popped or removed.
	// The slots of a claim are swapped atomically, by its worker without the
	// lock and by removals with it, and read atomically where a claim may be
	// under way; every other access is under the lock, and the mutex orders
	// a slot's plain write before any atomic use of it.
	data []unsafe.Pointer
	// tags[i] indexes tabs with its low bits, and marks a barrier.
	tags []uint8
	tabs [maxTabs]unsafe.Pointer
}

const (
	// minSeg and maxSeg bound a segment's length. A list's first segment
	// is short, so that a queue with a few items holds little; each new
	// one doubles, so that a backlog costs few segments.
	minSeg = 8
	maxSeg = 1024
	// maxTabs is how many item types a segment holds; a ninth type starts
	// a new segment.
	maxTabs    = 8
	tabMask    = maxTabs - 1
	barrierTag = 0x80
)

// pools hold emptied segments by length (minSeg<<i), so that a steady flow
// of items allocates nothing and an idle list holds no segment.
var pools [8]sync.Pool

func poolIndex(n int) int {
	i := 0
	for minSeg<<i < n {
		i++
	}
	return i
}

// newSegment returns a segment of the size class n, a power of two from
// minSeg to maxSeg.
func newSegment(n int, base ID) *segment {
	s, _ := pools[poolIndex(n)].Get().(*segment)
	if s == nil {
		// An array of pointers over 512 bytes carries an 8-byte header in
		// its allocation: one slot less keeps it in its size class instead
		// of the next one, which would cost a ninth more per item.
		c := n
		if n*int(unsafe.Sizeof(unsafe.Pointer(nil))) > 512 {
			c--
		}
		s = &segment{data: make([]unsafe.Pointer, c), tags: make([]uint8, c)}
	}
	s.base = base
	return s
}

// class returns the size class of s (see newSegment).
func (s *segment) class() int { return minSeg << poolIndex(len(s.data)) }

// free gives s back to its pool. Its data words are all nil by then: each was
// cleared when its item was popped or removed.
func (s *segment) free() {
	s.head, s.n, s.live, s.ntab, s.last = 0, 0, 0, 0, 0
	s.tabs = [maxTabs]unsafe.Pointer{}
	pools[poolIndex(s.class())].Put(s)
}

// iface is the layout of an interface value: its type word and data word.
type iface struct {
	tab  unsafe.Pointer
	data unsafe.Pointer
}

func split(t Task) iface { return *(*iface)(unsafe.Pointer(&t)) }

func join(tab, data unsafe.Pointer) (t Task) {
	*(*iface)(unsafe.Pointer(&t)) = iface{tab, data}
	return t
}

// push appends t, which must not be nil, marked as a barrier if barrier is
// true, and returns its ID.
func (l *list) push(t Task, barrier bool) ID {
	if l.next == 0 {
		l.next = 1 // IDs start at 1, so the zero ID never names an item
	}
	w := split(t)
	var seg *segment
	tab := -1
	// Items go on in the tail segment while it has room and holds the IDs up
	// to this one: not after a removal freed the segment that followed it.
	if n := len(l.segs); n > 0 {
		seg = l.segs[n-1]
		if int(seg.n) < len(seg.data) && seg.base+ID(seg.n) == l.next {
			if seg.tabs[seg.last] == w.tab {
				tab = int(seg.last) // the common case: the type of the last item
			} else if tab = seg.tab(w.tab); tab < 0 && seg.n == 0 {
				// An emptied segment, kept: its types can go.
				seg.ntab, seg.tabs = 0, [maxTabs]unsafe.Pointer{}
				tab = seg.tab(w.tab)
			}
		}
	}
	if tab < 0 {
		n := minSeg
		if seg != nil {
			n = min(maxSeg, 2*seg.class())
		}
		seg = newSegment(n, l.next)
		l.segs = append(l.segs, seg)
		tab = seg.tab(w.tab)
	}
	i := seg.n
	seg.data[i] = w.data // not claimed before it is written: see data
	seg.tags[i] = uint8(tab)
	seg.last = uint8(tab)
	if barrier {
		seg.tags[i] |= barrierTag
	}
	seg.n++
	seg.live++
	l.live++
	id := l.next
	l.next++
	return id
}

// tab returns the index in s.tabs of the type word tab, adding it if there is
// room, or -1.
func (s *segment) tab(tab unsafe.Pointer) int {
	for i := int(s.ntab) - 1; i >= 0; i-- {
		if s.tabs[i] == tab {
			return i
		}
	}
	if s.ntab == maxTabs {
		return -1
	}
	s.tabs[s.ntab] = tab
	s.ntab++
	return int(s.ntab) - 1
}

// item returns the item in slot i, which no claim holds.
func (s *segment) item(i int32) Task {
	return join(s.tabs[s.tags[i]&tabMask], s.data[i])
}

// take swaps the data word of slot i for nil and returns the item it held,
// or false if it was taken already.
func (s *segment) take(i int32) (Task, bool) {
	p := atomic.SwapPointer(&s.data[i], nil)
	if p == nil {
		return nil, false
	}
	return join(s.tabs[s.tags[i]&tabMask], p), true
}

// front returns the oldest item and whether it is a barrier, or false if the
// list is empty.
func (l *list) front() (t Task, barrier, ok bool) {
	if l.live == 0 {
		return nil, false, false
	}
	seg := l.segs[0] // trim keeps a live item at the head of the first segment
	return seg.item(seg.head), seg.tags[seg.head]&barrierTag != 0, true
}

// frontID returns the ID of the oldest item; the list must not be empty.
func (l *list) frontID() ID {
	seg := l.segs[0]
	return seg.base + ID(seg.head)
}

// frontIsBarrier reports whether the oldest item is a barrier; the list must
// not be empty.
func (l *list) frontIsBarrier() bool {
	seg := l.segs[0]
	return seg.tags[seg.head]&barrierTag != 0
}

// pop removes the oldest item and returns it; the list must not be empty.
func (l *list) pop() Task {
	seg := l.segs[0]
	i := seg.head
	t := seg.item(i)
	seg.data[i] = nil
	seg.head++
	seg.live--
	l.live--
	if seg.head == seg.n || seg.data[seg.head] == nil {
		l.trim() // a removed item or the end of the segment is next
	}
	return t
}

// find returns the segment and index of the queued item id, or nil.
func (l *list) find(id ID) (*segment, int32) {
	k := sort.Search(len(l.segs), func(k int) bool { return l.segs[k].base > id }) - 1
	if id == 0 || k < 0 {
		return nil, 0
	}
	seg := l.segs[k]
	i := int32(id - seg.base)
	inClaim := seg == l.claimed && i >= l.claimFrom && i < l.claimTo
	if (i < seg.head && !inClaim) || i >= seg.n || atomic.LoadPointer(&seg.data[i]) == nil {
		return nil, 0
	}
	return seg, i
}

// remove removes the item id and returns it and whether it is a barrier, or
// returns false if id is not queued. A segment emptied by the removal is
// freed at once, wherever it is, so that removals cost no memory while the
// head stays put.
func (l *list) remove(id ID) (t Task, barrier, ok bool) {
	seg, i := l.find(id)
	if seg == nil {
		return nil, false, false
	}
	t, ok = seg.take(i)
	if !ok {
		return nil, false, false // a claim's worker took it first: it has started
	}
	barrier = seg.tags[i]&barrierTag != 0
	if seg == l.claimed && i >= l.claimFrom && i < l.claimTo {
		l.claimLeft.Add(-1)
		return t, barrier, true // counted by the claim, not in live
	}
	seg.live--
	l.live--
	if seg.live == 0 && seg != l.segs[0] && seg != l.claimed {
		k := sort.Search(len(l.segs), func(k int) bool { return l.segs[k].base >= seg.base })
		copy(l.segs[k:], l.segs[k+1:])
		l.segs[len(l.segs)-1] = nil
		l.segs = l.segs[:len(l.segs)-1]
		seg.free()
	}
	l.trim()
	return t, barrier, true
}

// trim drops the removed slots at the head, so that the head slot, when there
// is one, holds a live item, and frees the segments that have emptied. The
// last segment is kept when it empties, reset, so that a queue through which
// items pass one at a time does not take and free a segment for each; shrink
// frees it once the queue goes idle.
func (l *list) trim() {
	for len(l.segs) > 0 {
		seg := l.segs[0]
		for seg.head < seg.n && atomic.LoadPointer(&seg.data[seg.head]) == nil {
			seg.head++
		}
		if seg.head < seg.n || seg == l.claimed {
			return // a live item, or a segment a claim still uses
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

// shrink frees the segment an emptied list keeps, so that an idle queue holds
// no memory for items.
func (l *list) shrink() {
	if l.live == 0 && len(l.segs) > 0 && l.claimed == nil {
		l.segs[0].free()
		l.segs = nil
	}
}

// drain removes every item and returns them, oldest first, with their
// barrier marks: those of a claim that its worker has not taken yet, then the
// others.
func (l *list) drain() (ts []Task, barriers []bool) {
	ts = make([]Task, 0, l.live+int(l.claimLeft.Load()))
	barriers = make([]bool, 0, cap(ts))
	l.revoke() // the claimed items not started come back to the head
	for l.live > 0 {
		barriers = append(barriers, l.frontIsBarrier())
		ts = append(ts, l.pop())
	}
	return ts, barriers
}
