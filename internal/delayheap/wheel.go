package delayheap

import (
	"cmp"
	"math/bits"
	"slices"
)

const (
	// tickShift sets the width of a slot of a Wheel: 2^20 ns, about 1 ms,
	// so that a frame of a 60 Hz loop crosses about 16 slots and a slot
	// holds what falls due within one frame or less.
	tickShift = 20
	// nSlots is the number of slots of a Wheel: with ticks of about 1 ms,
	// the slots cover the next half second, where most waits of a game
	// end; later entries wait in a heap until they come within reach.
	nSlots   = 512
	slotMask = nSlots - 1
)

// A Wheel holds entries keyed by due time and sequence number, as a Heap
// does, for an owner that takes them in order as its clock moves: a timing
// wheel of nSlots slots, one per tick of about 1 ms, backed by a Heap for
// entries due past the slots' reach, and a sorted run of the entries already
// collected from the slots.
//
// Pushing an entry appends it to its slot, and collecting the entries due
// at an instant sorts each slot it empties, in slot order: taking n due
// entries costs O(n log k) for slots of k entries, against O(n log N) for a
// heap of N entries whose deep levels miss the cache. Entries due past the
// slots move into them once, as the clock comes within reach.
//
// The order is the Heap's: by due time, then by sequence number. Like a
// Heap, a Wheel leaves removal to its owner, who marks entries stale, skips
// them when they come first, and drops them in bulk with Filter.
//
// The zero Wheel is empty and ready to use; its slots are made by the first
// Push that needs them. A Wheel is not safe for concurrent use.
type Wheel[T any] struct {
	ready    []Entry[T]   // collected entries, of ticks before cur, sorted; ready[head:] held
	head     int          // index in ready of the earliest entry
	cur      int64        // the first tick not collected: slots hold ticks cur to cur+nSlots-1
	slots    [][]Entry[T] // by tick modulo nSlots, unsorted; made by the first Push to a slot
	spare    [][]Entry[T] // the empty buffers of slots collected, for the slots filled next
	occupied [nSlots / 64]uint64
	unsorted [nSlots / 64]uint64 // slots whose entries came out of order
	inSlots  int                 // entries in the slots
	peak     int                 // about the most entries a recent Collect took (halves each time)
	far      Heap[T]             // entries of ticks cur+nSlots and later
}

func tick(due int64) int64 { return due >> tickShift }

func compareEntries[T any](a, b Entry[T]) int {
	if c := cmp.Compare(a.Due, b.Due); c != 0 {
		return c
	}
	return cmp.Compare(a.Seq, b.Seq)
}

// Len returns the number of entries.
func (w *Wheel[T]) Len() int { return len(w.ready) - w.head + w.inSlots + w.far.Len() }

// Push adds v, due at due, ordered by seq among entries due together.
func (w *Wheel[T]) Push(due int64, seq uint64, v T) {
	w.push(Entry[T]{Due: due, Seq: seq, V: v})
}

func (w *Wheel[T]) push(e Entry[T]) {
	switch tk := tick(e.Due); {
	case tk < w.cur:
		// Due in a tick already collected: its place is in the sorted run,
		// most often at its end (a wait of zero, made during a frame).
		run := w.ready[w.head:]
		i, _ := slices.BinarySearchFunc(run, e, compareEntries[T])
		w.ready = slices.Insert(w.ready, w.head+i, e)
	case tk < w.cur+nSlots:
		if w.slots == nil {
			w.slots = make([][]Entry[T], nSlots)
		}
		i := int(tk & slotMask)
		if cap(w.slots[i]) == 0 && len(w.spare) > 0 {
			w.slots[i] = w.spare[len(w.spare)-1]
			w.spare = w.spare[:len(w.spare)-1]
		}
		if s := w.slots[i]; len(s) == cap(s) {
			// Double, rather than append's quarter for large slices: a
			// buffer goes round the slots, and one that fits the largest
			// slot ends the allocations of a steady load sooner.
			w.slots[i] = slices.Grow(s, max(cap(s), 8))
		}
		if s := w.slots[i]; len(s) > 0 && compareEntries(s[len(s)-1], e) > 0 {
			w.unsorted[i>>6] |= 1 << (i & 63)
		}
		w.slots[i] = append(w.slots[i], e)
		w.occupied[i>>6] |= 1 << (i & 63)
		w.inSlots++
	default:
		w.far.Push(e.Due, e.Seq, e.V)
	}
}

// firstTick returns the tick of the earliest occupied slot; the slots must
// not be empty.
func (w *Wheel[T]) firstTick() int64 {
	start := int(w.cur & slotMask)
	for off := 0; off < nSlots; {
		i := (start + off) & slotMask
		if b := w.occupied[i>>6] >> (i & 63); b != 0 {
			// Bits of this word before start, met again after wrapping
			// around, were clear when the first word was read.
			return w.cur + int64(off+bits.TrailingZeros64(b))
		}
		off += 64 - i&63
	}
	panic("delayheap: Wheel slots counted but not found")
}

// Collect moves every entry due at or before now into the run that Front
// and Pop read, in order. Entries due later in now's tick of about 1 ms come
// along: Front shows them too, and its caller compares their due time with
// now.
func (w *Wheel[T]) Collect(now int64) {
	target := tick(now) + 1
	if target <= w.cur {
		return
	}
	if w.head > 0 && w.head >= len(w.ready)/2 {
		n := copy(w.ready, w.ready[w.head:])
		clear(w.ready[n:])
		w.ready, w.head = w.ready[:n], 0
	}
	if len(w.ready) == 0 && cap(w.ready) > 1024 && cap(w.ready) > 4*w.peak {
		w.ready = nil // a burst has passed: let its buffer go
	}
	n := len(w.ready)
	for w.inSlots > 0 {
		tk := w.firstTick()
		if tk >= target {
			break
		}
		w.collectSlot(int(tk & slotMask))
	}
	w.cur = target
	for w.far.Len() > 0 && tick(w.far.Top().Due) < w.cur+nSlots {
		// Far entries come in order, after every slot's: those of ticks
		// already passed extend the sorted run.
		w.push(w.far.popEntry())
	}
	w.peak = max(len(w.ready)-n, w.peak/2)
}

// collectSlot appends the entries of slot i, sorted, to the run. Most
// slots need no sort: their entries came in order, as those of timers that
// re-arm with the same delay do, and Push noted whether they did, at the
// cost of one comparison with an entry still in the cache.
func (w *Wheel[T]) collectSlot(i int) {
	s := w.slots[i]
	if w.unsorted[i>>6]&(1<<(i&63)) != 0 {
		slices.SortFunc(s, compareEntries[T])
	}
	w.ready = append(w.ready, s...)
	w.inSlots -= len(s)
	clear(s)
	if cap(s) <= 1024 || len(s) >= cap(s)/4 { // else a flood has passed: let its buffer go
		w.spare = append(w.spare, s[:0])
	}
	w.slots[i] = nil
	w.vacate(i)
}

// vacate marks slot i empty.
func (w *Wheel[T]) vacate(i int) {
	w.occupied[i>>6] &^= 1 << (i & 63)
	w.unsorted[i>>6] &^= 1 << (i & 63)
}

// Front returns the earliest entry collected and not yet popped, or nil.
// Entries due at an instant are collected by Collect.
func (w *Wheel[T]) Front() *Entry[T] {
	if w.head == len(w.ready) {
		return nil
	}
	return &w.ready[w.head]
}

// Pop removes the entry Front returns and returns its item; Front must not
// have returned nil.
func (w *Wheel[T]) Pop() T {
	e := &w.ready[w.head]
	v := e.V
	*e = Entry[T]{}
	w.head++
	if w.head == len(w.ready) {
		w.ready, w.head = w.ready[:0], 0
	}
	return v
}

// DropStale drops the entries for which live reports false among the first
// n collected ones (all of them, if fewer), keeping the others in order, and
// returns how many it dropped. The owner of entries that point to objects
// scattered in memory sweeps a window of them ahead of taking them one by
// one: the reads of the window do not wait for each other, so their cache
// misses overlap, and the objects are in the cache when their turn comes.
func (w *Wheel[T]) DropStale(n int, live func(*Entry[T]) bool) int {
	run := w.ready[w.head:min(w.head+n, len(w.ready))]
	k := len(run) // run[k:] holds the kept entries
	for i := len(run) - 1; i >= 0; i-- {
		if live(&run[i]) {
			k--
			run[k] = run[i]
		}
	}
	clear(run[:k])
	w.head += k
	if w.head == len(w.ready) {
		w.ready, w.head = w.ready[:0], 0
	}
	return k
}

// Next returns the first n collected entries (all of them, if fewer), in
// order, for its caller to read and not to change.
func (w *Wheel[T]) Next(n int) []Entry[T] {
	return w.ready[w.head:min(w.head+n, len(w.ready))]
}

// Earliest returns the earliest entry for which live reports true, or nil,
// and the number of other entries it dropped on the way: those that come
// before it, and the others of its slot. It moves nothing to the run.
func (w *Wheel[T]) Earliest(live func(*Entry[T]) bool) (e *Entry[T], dropped int) {
	for e := w.Front(); e != nil; e = w.Front() {
		if live(e) {
			return e, dropped
		}
		w.Pop()
		dropped++
	}
	for w.inSlots > 0 {
		i := int(w.firstTick() & slotMask)
		s := w.slots[i]
		kept := s[:0]
		least := -1
		for j := range s {
			if !live(&s[j]) {
				continue
			}
			kept = append(kept, s[j])
			if k := len(kept) - 1; least < 0 || compareEntries(kept[k], kept[least]) < 0 {
				least = k
			}
		}
		clear(s[len(kept):])
		dropped += len(s) - len(kept)
		w.inSlots -= len(s) - len(kept)
		w.slots[i] = kept
		if least >= 0 {
			return &kept[least], dropped
		}
		w.vacate(i)
	}
	for w.far.Len() > 0 {
		if e := w.far.Top(); live(e) {
			return e, dropped
		}
		w.far.Pop()
		dropped++
	}
	return nil, dropped
}

// Before reports whether an entry due at due with sequence number seq
// would come before every entry of w, stale ones included.
func (w *Wheel[T]) Before(due int64, seq uint64) bool {
	e := Entry[T]{Due: due, Seq: seq}
	if f := w.Front(); f != nil {
		return compareEntries(e, *f) < 0
	}
	if w.inSlots > 0 {
		first := w.firstTick()
		if tk := tick(due); tk != first {
			return tk < first
		}
		for _, f := range w.slots[first&slotMask] {
			if compareEntries(f, e) <= 0 {
				return false
			}
		}
		return true
	}
	if w.far.Len() > 0 {
		return compareEntries(e, *w.far.Top()) < 0
	}
	return true
}

// Filter keeps the entries for which keep reports true, in O(n).
func (w *Wheel[T]) Filter(keep func(*Entry[T]) bool) {
	run := w.ready[:w.head]
	for i := w.head; i < len(w.ready); i++ {
		if keep(&w.ready[i]) {
			run = append(run, w.ready[i])
		}
	}
	clear(w.ready[len(run):])
	w.ready = w.ready[:len(run)]
	for i, s := range w.slots {
		if len(s) == 0 {
			continue
		}
		kept := s[:0]
		for j := range s {
			if keep(&s[j]) {
				kept = append(kept, s[j])
			}
		}
		clear(s[len(kept):])
		w.inSlots -= len(s) - len(kept)
		w.slots[i] = kept
		if len(kept) == 0 {
			w.vacate(i)
		}
	}
	w.far.Filter(keep)
}

// Drain removes every entry and returns them, in no particular order.
func (w *Wheel[T]) Drain() []Entry[T] {
	all := slices.Clone(w.ready[w.head:])
	for _, s := range w.slots {
		all = append(all, s...)
	}
	all = append(all, w.far.Drain()...)
	*w = Wheel[T]{cur: w.cur, peak: w.peak}
	return all
}
