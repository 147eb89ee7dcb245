package scheduler

import (
	"context"
	"slices"
)

// Lending. An item of a tree that waits for another item of the same tree
// (a task of one child calling RunSync on a sibling, say) holds slots of the
// targets above both: if every slot of a target were held by such waiters,
// the items they wait for could never start. Root schedulers never meet
// this, since a root's items never need another root's slots. So a waiting
// item lends its slots of the targets above the Scheduler it waits for:
// they count as free while it waits, and it takes them back, top down, when
// its wait is over, before any item queued meanwhile starts (a waiting item
// has started already). Its slots of other Schedulers, its own among them,
// stay held: a serial scheduler stays serial.

// Await calls wait, which blocks until work of s that the caller waits for
// is done, and lends meanwhile the slots that sl holds of the targets above
// s (see WithTarget), so that s's items can run on them: without it, an item
// of a tree that waits for another scheduler of the same tree could hold the
// very slots that scheduler needs. sl is the waiting item's Slot (see Slot);
// the zero Slot lends nothing, as does an item of a root. Await returns once
// wait has returned and the slots are back, which it may wait for.
//
// Several goroutines may wait for one item at once (goroutines it starts and
// waits for): its slot is lent once, while any of them waits, and taken back
// when the last one is done. A function that TryRun runs in the item's place
// meanwhile takes the slot back for its run: a slot is lent only while
// nothing runs on it. If the item's run ends while a wait goes on (the wait
// of a goroutine that it started and did not wait for), its slots come back
// at once, and the wait goes on as an outsider's, lending nothing.
func (s *Scheduler) Await(sl Slot, wait func()) {
	if s.parent == nil || !sl.live() {
		wait()
		return
	}
	var held [maxLendDepth]Slot
	n := sl.heldFrom(s.parent, held[:])
	if n == 0 {
		wait()
		return
	}
	l := &lease{held: held, n: n}
	if !l.begin(sl) {
		wait()
		return
	}
	defer l.end()
	wait()
}

// heldFrom stores in held the slots that sl holds of a and of the targets
// above it, nearest first, as many as held has room for, and returns how
// many it stored.
func (sl Slot) heldFrom(a *Scheduler, held []Slot) int {
	n := 0
	for ; a != nil && n < len(held); a = a.parent {
		if h, ok := sl.of(a); ok {
			held[n] = h
			n++
		}
	}
	return n
}

// use marks the slots in held, which work running in place takes for its
// run (see TryRun), as used, taking them back, top down, if they are lent.
// If ctx ends while it waits for one to come back, use undoes what it did
// and returns ctx.Err().
func use(ctx context.Context, held []Slot) error {
	for i := len(held) - 1; i >= 0; i-- {
		r := held[i].rec
		r.s.mu.Lock()
		r.uses++
		if err := r.s.settleLocked(ctx, r); err != nil {
			r.uses--
			r.s.settleLocked(context.Background(), r) // lent again, if it had come back
			r.s.mu.Unlock()
			unuse(held[i+1:])
			return err
		}
		r.s.mu.Unlock()
	}
	return nil
}

// unuse ends the use of the slots in held: lent again if work that holds
// them still waits.
func unuse(held []Slot) {
	for _, h := range held {
		r := h.rec
		r.s.mu.Lock()
		r.uses--
		r.s.settleLocked(context.Background(), r)
		r.s.mu.Unlock()
	}
}

// settleLocked brings r, a slot of s, to the state its holder's work asks
// for: lent while some of it waits (lends) and none of it runs on r (uses),
// held otherwise. It is called, and returns, with s.mu held; taking a slot
// back may have to wait for one to free, without the lock, and whoever comes
// meanwhile waits for that to end before looking again. If ctx ends while it
// waits, it returns ctx.Err(), with r as it found it or lent still.
func (s *Scheduler) settleLocked(ctx context.Context, r *slotRec) error {
	for {
		want := r.lends > 0 && r.uses == 0
		switch {
		case r.moving != nil:
			ch := r.moving
			s.mu.Unlock()
			var err error
			select {
			case <-ch:
			case <-ctx.Done():
				err = ctx.Err()
			}
			s.mu.Lock()
			if err != nil {
				return err
			}
		case want && !r.lentOut:
			r.lentOut = true
			s.active--
			s.lent++
			s.spawnLocked()
		case !want && r.lentOut:
			ch := make(chan struct{})
			r.moving = ch
			s.mu.Unlock()
			err := s.reclaim(ctx)
			s.mu.Lock()
			if err == nil {
				r.lentOut = false
			}
			r.moving = nil
			close(ch)
			if err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// maxLendDepth bounds the targets above a Scheduler that Await lends; deeper
// trees lend the slots of the nearest ones.
const maxLendDepth = 16

// reclaim takes back a lent slot, waiting for one to free if none is. If
// ctx ends first, it takes none and returns ctx.Err().
func (s *Scheduler) reclaim(ctx context.Context) error {
	s.mu.Lock()
	if s.active < s.limit && len(s.returners) == 0 {
		s.active++
		s.lent--
		s.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	s.returners = append(s.returners, ch)
	s.mu.Unlock()
	select {
	case <-ch: // grantLocked counted the slot back in active
	case <-ctx.Done():
		s.mu.Lock()
		if i := slices.Index(s.returners, ch); i >= 0 {
			s.returners = slices.Delete(s.returners, i, i+1)
			s.mu.Unlock()
			return ctx.Err()
		}
		s.mu.Unlock() // granted meanwhile: the slot is back all the same
	}
	s.mu.Lock()
	s.lent--
	// The slot came from an item that ended: the room it leaves for s's
	// own items, which a lent slot does not serve, needs a worker.
	s.spawnLocked()
	s.mu.Unlock()
	return nil
}

// grantLocked gives a slot to the oldest item waiting to reclaim one,
// reporting whether one waited. The slot stays counted in active: the caller
// either frees it for this or counts it anew.
func (s *Scheduler) grantLocked() bool {
	if len(s.returners) == 0 {
		return false
	}
	close(s.returners[0])
	s.returners[0] = nil
	s.returners = s.returners[1:]
	if len(s.returners) == 0 {
		s.returners = nil
	}
	return true
}

// freeSlotLocked gives up a slot: to an item waiting to reclaim one, or
// back to the pool of free slots.
func (s *Scheduler) freeSlotLocked() {
	if !s.grantLocked() {
		s.active--
		if s.active <= s.limit && s.cut.Load() {
			s.cut.Store(false)
		}
	}
}
