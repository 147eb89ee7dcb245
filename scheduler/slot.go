package scheduler

import "sync/atomic"

// A Slot is the right to run one item of a Scheduler at a time, as held by
// the item that runs on it. A worker holds a slot while it runs items; the
// item it runs gets the Slot as the argument of Run, valid until Run returns.
// Work done for the item carries it (the taskqueue package puts it in the
// context its tasks receive) and gives it to TryRun and Holds, which
// is how a Scheduler knows the item's own work without asking which
// goroutine calls: the Go runtime gives goroutines no identity, and work for
// one item often runs on several (an iter.Pull body the item drives, a
// helper goroutine it waits for).
//
// A Slot also names the slots held by whoever runs its item: a child's item
// runs on a turn of a slot of its target (see WithTarget), and a function
// that TryRun ran on the calling goroutine runs for the caller, whose Slot
// it carries on. So a nested call finds every slot its work holds.
//
// The zero Slot holds nothing. A Slot is a small value, copied freely; once
// its item has returned it holds nothing either, whoever kept a copy.
type Slot struct {
	rec *slotRec
	gen uint64 // the item's run on rec: rec.gen while the item runs
}

// A slotRec is the record of one slot held, kept by its Scheduler and reused
// from run to run: gen tells the runs apart, so that a Slot of an item that
// has returned never matches the next run's.
type slotRec struct {
	s   *Scheduler
	gen atomic.Uint64 // the current run; bumped at the end of each
	// upRec and upGen are the Slot of whoever runs the items of this slot:
	// for a child's slot, the slot of its target that the turn runs on; for
	// TryRun, the caller's. They are set when the record is taken, before
	// any Slot of the new run exists, and read by holders of a Slot of it.
	// A holder of a Slot of an earlier run (work that outlived its item) may
	// read them while they change: they are atomics, and up checks gen
	// again after reading them, so such a reader sees its run has ended.
	upRec atomic.Pointer[slotRec]
	upGen atomic.Uint64
	// acquired is, for a slot that TryRun took, how many levels of the
	// tree it took slots of, this one included, which it gives back
	// together; owned by that TryRun.
	acquired int32
	// work is the body of a worker goroutine on this slot, made once with
	// the record: a go statement with a function value and no arguments
	// allocates nothing, so a worker starts without an allocation.
	work func()
}

// live reports whether the item of sl is still running.
func (sl Slot) live() bool {
	return sl.rec != nil && sl.rec.gen.Load() == sl.gen
}

// up returns the Slot of whoever runs sl's item, or the zero Slot if sl's
// item has returned.
func (sl Slot) up() Slot {
	r := sl.rec
	up := Slot{r.upRec.Load(), r.upGen.Load()}
	if r.gen.Load() != sl.gen {
		return Slot{} // r went on to another run while we read
	}
	return up
}

// of returns the slot of s that sl holds, itself or through the slots that
// run it (see Slot), or false if it holds none.
func (sl Slot) of(s *Scheduler) (Slot, bool) {
	for ; sl.live(); sl = sl.up() {
		if sl.rec.s == s {
			return sl, true
		}
	}
	return Slot{}, false
}

// Holds reports whether the work that carries sl holds a slot of s: sl is the
// slot of a running item of s, or of an item run on one (a child's item on a
// turn of its target's slot, a function that TryRun ran in the place of an
// item of s). Such work must not wait for an item queued behind its own on a
// serial scheduler: that item cannot start before the holder's ends. TryRun
// runs it in the holder's place instead.
func (s *Scheduler) Holds(sl Slot) bool {
	_, ok := sl.of(s)
	return ok
}

// takeRecLocked returns a slot record of s for a new run with up as its
// up-link, and the Slot of that run.
func (s *Scheduler) takeRecLocked(up Slot) (*slotRec, Slot) {
	var r *slotRec
	if n := len(s.slots.recs); n > 0 {
		r = s.slots.recs[n-1]
		s.slots.recs[n-1] = nil
		s.slots.recs = s.slots.recs[:n-1]
	} else {
		r = &slotRec{s: s}
		r.work = func() { s.work(r) }
	}
	// A kept record's up-link is the zero Slot (see giveRecLocked): a new
	// run with none, the common case, stores nothing.
	if up.rec != nil {
		r.upRec.Store(up.rec)
		r.upGen.Store(up.gen)
	}
	return r, Slot{r, r.gen.Load()}
}

// next ends the run of rec's current item: a Slot of it holds nothing from
// now on. It returns the Slot of the next run on rec.
func (r *slotRec) next() Slot {
	return Slot{r, r.gen.Add(1)}
}

// giveRecLocked ends the current run of r and keeps r for a later slot.
func (s *Scheduler) giveRecLocked(r *slotRec) {
	r.gen.Add(1)
	if r.upRec.Load() != nil {
		r.upRec.Store(nil)
		r.upGen.Store(0)
	}
	if len(s.slots.recs) < keptRecs {
		s.slots.recs = append(s.slots.recs, r)
	}
}

// keptRecs is how many free slot records a Scheduler keeps for its next
// slots; more are left to the garbage collector.
const keptRecs = 8
