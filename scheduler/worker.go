package scheduler

import "github.com/taskqueue-go/taskqueue/internal/catch"

// work is the body of a worker goroutine of a root Scheduler. It holds one
// slot, whose record is rec, runs items while admitLocked lets the front one
// start, then gives the slot back and returns. It does not linger for new
// work: on the machines measured, a worker that stayed, spinning on another
// core, made a trickle of tasks (one, wait, another) two to three times
// slower than starting a goroutine, which the runtime runs next on the
// submitter's own processor, and it burned a core meant for the submitter.
func (s *Scheduler) work(rec *slotRec) {
	s.setLabels()
	s.mu.Lock()
	s.runItemsLocked(rec, maxLimit)
	s.endSlotLocked(rec)
	s.unlock()
}

// runItemsLocked runs up to max items of s on the slot rec, one after the
// other, while they may start, and reports how many ran. It is called, and
// returns, with s.mu held.
func (s *Scheduler) runItemsLocked(rec *slotRec, max int32) int32 {
	opened := true // the first take follows changes of others: unlock settles them
	n := int32(0)
	for ; n < max; n++ {
		t, ok := s.takeLocked()
		if !ok {
			break
		}
		if opened {
			s.unlock() // a barrier's end lets the items behind it start: on slots unlock starts
		} else {
			// An item ended and the next started: nothing else may start
			// that could not before, s is not idle, and neither its slots
			// nor its gate changed, so there is nothing for unlock to do.
			s.mu.Unlock()
		}
		s.runItem(t, rec)
		s.mu.Lock()
		opened = s.finishLocked(t)
	}
	return n
}

// endSlotLocked gives back the slot of rec, which takes no more items.
func (s *Scheduler) endSlotLocked(rec *slotRec) {
	s.giveRecLocked(rec)
	s.slots.active--
}

// runItem runs t on the slot of rec. A panic in t goes to the panic handler
// and the slot carries on. If t calls runtime.Goexit the goroutine cannot
// carry on: the slot is given back, with the accounting of t, and unlock
// starts a new one if there is work.
func (s *Scheduler) runItem(t Task, rec *slotRec) {
	r := s.region()
	if f, ok := t.(Func); ok { // the common item, a plain function: no Slot, no marks
		s.runFunc(f, t, rec, r)
		return
	}
	sl := Slot{rec, rec.gen.Load()}
	t0 := unwrap(t)
	if _, safe := t0.(catch.Safe); safe {
		// A task that catches its own panics (those of package taskqueue,
		// a child's turn): no recover here, which keeps a new worker's
		// stack short enough not to grow on its first item.
		normal := false
		defer func() {
			if !normal {
				s.goexited(t, rec, r)
			}
		}()
		t0.Run(sl)
		normal = true
	} else if p := recoverIn(s.cfg.name, func() { t0.Run(sl) }, func() {
		if s.cfg.onGoexit != nil {
			s.cfg.onGoexit() // counted before the slot goes, and s may go idle
		}
		s.goexited(t, rec, r)
	}); p != nil {
		r.end()
		rec.next()
		s.report(p, t, rec)
		return
	}
	r.end()
	rec.next()
}

// runFunc is runItem for an item that is a Func. A Func gets no Slot, so
// its run leaves none behind to end (rec's gen stays).
func (s *Scheduler) runFunc(f Func, t Task, rec *slotRec, r region) {
	if p := recoverIn(s.cfg.name, f, func() {
		if s.cfg.onGoexit != nil {
			s.cfg.onGoexit()
		}
		s.goexited(t, rec, r)
	}); p != nil {
		r.end()
		s.report(p, t, rec)
		return
	}
	r.end()
}

// report gives p, the panic of t, to the panic handler. A handler that
// calls runtime.Goexit (testing.T.FailNow does) ends the worker's goroutine:
// the slot of rec is given back first, as for an item that calls it. A
// handler must not panic: that panic goes on, not recovered.
func (s *Scheduler) report(p *PanicError, t Task, rec *slotRec) {
	c := catch.Call(func() { s.cfg.onPanic(p) }, func() {
		s.mu.Lock()
		s.finishLocked(t)
		s.endSlotLocked(rec)
		s.unlock()
	})
	if c != nil {
		panic(c.Value)
	}
}

// goexited gives back the slot of rec, whose item t called runtime.Goexit,
// as the goroutine ends. For a child, the turn that ran t ends with it, on
// a goroutine that ends too: the target's side of it is the target's
// worker's own, which goexited in turn.
func (s *Scheduler) goexited(t Task, rec *slotRec, r region) {
	r.end()
	rec.next()
	s.mu.Lock()
	s.finishLocked(t)
	s.endSlotLocked(rec)
	s.unlock()
}
