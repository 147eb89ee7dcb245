package scheduler

import (
	"slices"
	"sync"
	"sync/atomic"
)

// Batches. A worker of a root Scheduler takes a run of items off the head of
// the list at once, a batch, and the workers run them one after the other
// without the lock, each taking the next with a compare-and-swap: one lock
// round trip per run of items instead of one per item, which the submitters,
// who take the lock for each item, feel most. The batch is the head of the
// queue: items start in order from it, at most Limit at once, since each
// worker runs one at a time.
// An item of a batch that has not started is still queued in every way that
// shows: it stays at the head of the Scheduler's queue, ahead of the list;
// a removal (TryDequeue, DequeueAll) or a take under the lock (a second
// worker after SetLimit raised the limit) gets it instead of the batch's
// worker, whichever swaps its state first; Stats counts it as pending;
// Suspend stops the worker before its next item, and what is left stays at
// the head for whoever runs next.
//
// Why the items need no atomics: they are written under the Scheduler's
// mutex when the batch is filled, before anyone can take one, and a slot's
// item is read only by the one who won the slot's state, the worker (which
// filled it) or a holder of the mutex (which the filler released). Nobody
// writes a slot while another may read it: the batch is refilled, under the
// mutex, only once every slot is taken.

// batchMax is the most items a batch holds.
const batchMax = 64

// The states of a slot of a batch.
const (
	slotQueued  uint32 = iota
	slotTaken          // by the worker, or by a take under the lock, to run
	slotRemoved        // by TryDequeue or DequeueAll
)

// A batch is the head of a serial Scheduler's queue, taken off its list.
type batch struct {
	items [batchMax]Task
	ids   [batchMax]ID
	state [batchMax]atomic.Uint32
	n     int          // slots filled; under the Scheduler's mutex
	next  atomic.Int32 // the first slot that may still be queued
	left  atomic.Int32 // slots queued, for Stats and the spawn decisions
	// workers counts the workers that run the batch without the lock,
	// which keeps it from going back to the pool; under the mutex.
	workers int32
}

var batches = sync.Pool{New: func() any { return new(batch) }}

// batchableLocked reports whether the calling worker may run items from a
// batch: s is a root, nothing holds its items back, and a batch has items
// left, or none is filled and more than one item of s's own heads its list.
func (s *Scheduler) batchableLocked() bool {
	if s.parent != nil || s.exclusive || s.suspends > 0 || s.lent > 0 || s.active > s.limit {
		return false
	}
	if s.b != nil {
		return s.b.left.Load() > 0
	}
	return s.list.live > 1 && s.movable(s.list.front())
}

// movable reports whether t may go into a batch: not a barrier, which runs
// alone, nor a child's turn.
func (s *Scheduler) movable(t Task) bool {
	return !isBarrier(t) && t != Task(s.mux)
}

// fillLocked moves up to batchMax items from the head of the list into a new
// batch, stopping before an item that must not move.
func (s *Scheduler) fillLocked() *batch {
	b := batches.Get().(*batch)
	for b.n < batchMax && s.list.live > 0 && s.movable(s.list.front()) {
		id := s.list.frontID()
		s.waits.startedLocked(id)
		b.items[b.n], b.ids[b.n] = s.list.pop(), id
		b.state[b.n].Store(slotQueued)
		b.n++
	}
	b.next.Store(0)
	b.left.Store(int32(b.n))
	s.b = b
	return b
}

// take takes the next queued item of b, for the worker without the lock or
// for a take under it, or returns false if none is left. The take is the
// swap of a slot's state, tried in order from next: a slot is taken only
// once every slot before it was seen taken or removed, which no slot ever
// leaves, so the items of a batch start in order even when several workers
// share it, and no removal finds an item queued behind one that started.
func (b *batch) take() (Task, bool) {
	for i := b.next.Load(); int(i) < b.n; i++ {
		if b.state[i].CompareAndSwap(slotQueued, slotTaken) {
			for j := b.next.Load(); j <= i && !b.next.CompareAndSwap(j, i+1); j = b.next.Load() {
			}
			b.left.Add(-1)
			return b.items[i], true
		}
	}
	return nil, false
}

// remove removes the queued item id of b, reporting whether it did. The
// Scheduler's mutex must be held.
func (b *batch) remove(id ID) bool {
	for i := range b.n {
		if b.ids[i] == id {
			if b.state[i].CompareAndSwap(slotQueued, slotRemoved) {
				b.left.Add(-1)
				return true
			}
			return false
		}
	}
	return false
}

// drain removes every queued item of b and returns them, in order. The
// Scheduler's mutex must be held. It goes from the last slot to the first,
// against the workers, which take from the first: had it gone the other way,
// a worker could take a slot behind the ones it had removed, and an item
// would start while those queued before it were dropped. This way what the
// workers take is a run at the front and what drain removes the rest.
func (b *batch) drain(ts []Task) []Task {
	start := len(ts)
	for i := b.n - 1; i >= 0; i-- {
		if b.state[i].CompareAndSwap(slotQueued, slotRemoved) {
			b.left.Add(-1)
			ts = append(ts, b.items[i])
		}
	}
	slices.Reverse(ts[start:])
	return ts
}

// releaseLocked gives b back to the pool once every slot is taken or
// removed, clearing the items it held.
func (s *Scheduler) releaseBatchLocked() {
	b := s.b
	if b == nil || b.left.Load() > 0 || b.workers > 0 {
		return
	}
	clear(b.items[:b.n])
	b.n = 0
	s.b = nil
	batches.Put(b)
}

// queuedLocked returns the number of items queued: in the list, and in the
// batch at its head.
func (s *Scheduler) queuedLocked() int {
	n := s.list.live
	if s.b != nil {
		n += int(s.b.left.Load())
	}
	return n
}

// runBatchLocked runs items of the batch, filling it first if none is, on
// the slot rec without the lock, until it is used up, s is suspended or its
// limit lowered, and reports how many items ran. It is called, and returns,
// with s.mu held.
func (s *Scheduler) runBatchLocked(rec *slotRec) (ran int32) {
	b := s.b
	if b == nil {
		b = s.fillLocked()
	}
	b.workers++
	s.running++ // a worker in a batch counts as one item running
	s.mu.Unlock()
	normal := false
	defer func() {
		if !normal {
			// An item called runtime.Goexit: goexited counted it and the
			// items before it, and gave the slot back; what is left of
			// the batch stays queued.
			s.mu.Lock()
			b.workers--
			s.releaseBatchLocked()
			s.mu.Unlock()
		}
	}()
	for {
		// Suspend and SetLimit set halted or cut, then wait for taking to
		// be zero: a take either sees the flag or ends before they return.
		s.taking.Add(1)
		if s.halted.Load() || s.cut.Load() {
			s.taking.Add(-1)
			break
		}
		t, ok := b.take()
		s.taking.Add(-1)
		if !ok {
			break
		}
		s.room.release(1)
		rec.batchRan = uint64(ran)
		s.runItem(t, Slot{rec, rec.gen.Load()}, rec)
		ran++
	}
	rec.batchRan = 0
	normal = true
	s.mu.Lock()
	b.workers--
	s.running--
	s.completed += uint64(ran)
	s.releaseBatchLocked()
	return ran
}
