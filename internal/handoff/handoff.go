// Package handoff is the state machine of a synchronous call that its caller
// hands to another goroutine, the runner, and waits for: a RunSync that
// waits its turn on a queue's worker, a call to the main thread. The caller
// may stop waiting when its context ends; the runner may find the call
// already given up. Compare-and-swaps on one state word decide, in every
// race, who owns the outcome, so that a function runs at most once, never
// after its caller gave it up before it started, and its outcome (a panic
// above all) reaches exactly one of the two: the caller, or the runner's
// report of what no caller will see.
//
// The same word tells the runner whether its caller sleeps, as a futex
// does: a caller that polls the word (Spin) and sees the delivery returns
// without ever parking, and the runner then wakes nobody; a caller about to
// park says so on the word first (Wait), and the runner, which reads that
// when it delivers, wakes it. Neither side can miss the other: the caller's
// announcement and the runner's delivery are compare-and-swaps on the same
// word, so whichever comes second sees the first.
package handoff

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// The phases of a Call, in the low bits of its state word. It moves from
// pending to running when the runner starts it, then to done when the
// runner delivers its outcome; the caller may move it from pending to
// canceled (the function never runs) or from running to abandoned (the
// function runs on, and its outcome is the runner's to report).
const (
	pending uint32 = iota
	running
	done
	canceled
	abandoned
)

// sleeping is set on a pending or running Call by a caller that parks: the
// runner's Deliver must wake it. Only the caller sets it; done, canceled and
// abandoned never carry it.
const sleeping uint32 = 1 << 3

// A Call is one synchronous call handed over. The caller arms it, hands it
// to the runner, and waits (after a Spin, if it likes); the runner starts
// it, runs the function if Start allowed, and delivers. A Call may be reused
// once Spin or Wait has reported the delivery, or once Start has reported
// false; one given up while running belongs to the runner from then on.
type Call struct {
	state atomic.Uint32
	// watch is set by Arm for a caller whose context can end. Written by the
	// caller before it hands the call over, read by both sides after.
	watch bool
	// A caller that parks is woken through wg, for a wait that watches no
	// context, or through ch, made when it parks, for one that does: a
	// channel belongs to the testing/synctest bubble that made it, a
	// WaitGroup only to the bubble that counts it, so a reused Call keeps
	// no channel (but with KeepChannel), and one that never parks makes
	// none. Written by the
	// caller before it sets sleeping; read by the runner after it saw
	// sleeping.
	wg sync.WaitGroup
	ch chan struct{}
	// keep is set by KeepChannel: ch outlives a wait, for the next.
	keep bool
}

// KeepChannel makes c keep the channel that a wait watching a context
// makes, for the waits of its next uses, so that a Call reused from a pool
// waits without an allocation. Only for a Call that no goroutine of a
// testing/synctest bubble uses: the channel belongs to the bubble of the
// goroutine that made it. A wait leaves the channel empty (the runner sends
// once, and only to a caller that then receives), so a reuse finds it so.
func (c *Call) KeepChannel() { c.keep = true }

// Arm readies c for a caller that will wait with ctx.
func (c *Call) Arm(ctx context.Context) {
	c.state.Store(pending)
	c.watch = ctx.Done() != nil
	if !c.keep {
		c.ch = nil
	}
}

// Start moves c from pending to running, for the runner, and reports
// whether it did: false means the caller gave the call up before it started,
// and the function must not run.
func (c *Call) Start() bool {
	for {
		s := c.state.Load()
		if s&^sleeping != pending {
			return false
		}
		if c.state.CompareAndSwap(s, running|s&sleeping) {
			return true
		}
		// The caller set sleeping, or gave the call up, meanwhile: it does
		// either at most once.
	}
}

// Deliver ends a started call, waking its caller if it sleeps, and reports
// whether the caller will see the outcome: false means the caller left while
// the function ran, and the runner reports whatever must not go unseen.
func (c *Call) Deliver() bool {
	delivered, _ := c.DeliverWoke()
	return delivered
}

// DeliverWoke is Deliver that also reports whether the caller slept and was
// woken: the runtime then runs it on the runner's processor, once that is
// free, unless another one takes it, so that a runner locked to its thread
// that goes on polling for work keeps it waiting.
func (c *Call) DeliverWoke() (delivered, woke bool) {
	delivered, woke = c.finish()
	if woke {
		c.wake()
	}
	return delivered, woke
}

// finish moves c from running to done, reporting whether it did, and
// whether the caller sleeps and must be woken.
func (c *Call) finish() (ok, sleeper bool) {
	for {
		s := c.state.Load()
		if s&^sleeping != running {
			return false, false
		}
		if c.state.CompareAndSwap(s, done) {
			return true, s&sleeping != 0
		}
	}
}

// wake wakes the caller that set sleeping. The runner touches c no more
// after it: the woken caller may reuse c at once.
func (c *Call) wake() {
	if c.watch {
		c.ch <- struct{}{} // the one send on a channel of one slot: it never blocks
	} else {
		c.wg.Done()
	}
}

// Spin polls c for up to d for the delivery, without parking, and reports
// whether it came; if it did, c was delivered and the runner wakes nobody.
// Besides d on the clock, Spin stops after four polls a nanosecond of d,
// more than any machine makes, so that in a testing/synctest bubble, whose
// clock stands still while a goroutine spins, it ends all the same. The
// caller watches no context while it spins: a context that ends is seen by
// the Wait that follows, at most d late.
func (c *Call) Spin(d time.Duration) bool {
	if c.Delivered() {
		return true
	}
	if d <= 0 {
		return false
	}
	// A poll is a load, a compare and a branch, a nanosecond on a 2026
	// virtual machine, a quarter of one at the very least: the clock, read
	// once every 64 polls (a small part of their cost), ends a spin outside a
	// bubble first.
	limit := 4 * int64(d)
	start := time.Now()
	for n := int64(1); n <= limit; n++ {
		if c.Delivered() {
			return true
		}
		if n%64 == 0 && time.Since(start) > d {
			return false
		}
	}
	return false
}

// Wait blocks until the runner delivers (it returns true), or until ctx is
// done and the caller gives the call up (it returns false, and ran reports
// whether the function had started: it then runs on). ctx must be the one
// given to Arm.
func (c *Call) Wait(ctx context.Context) (delivered, ran bool) {
	if c.Delivered() {
		return true, true
	}
	c.prepare()
	if !c.announce() {
		return true, true
	}
	if c.park(ctx) {
		return true, true
	}
	return c.giveUp()
}

// The steps of Wait, apart so that tests can interleave them with the
// runner's one by one.

// prepare readies the caller's wake-up before it announces that it parks.
func (c *Call) prepare() {
	if c.watch {
		if c.ch == nil {
			c.ch = make(chan struct{}, 1)
		}
	} else {
		c.wg.Add(1)
	}
}

// announce sets sleeping, reporting true, unless the runner delivered first:
// it then wakes nobody, and announce takes back what prepare readied and
// reports false.
func (c *Call) announce() bool {
	for {
		s := c.state.Load()
		if s == done {
			if !c.watch {
				c.wg.Done()
				// Wait at a zero count lets go of the testing/synctest
				// bubble that the Add tied wg to, which a Done alone does
				// not, so that c may be reused in another bubble.
				c.wg.Wait()
			}
			return false
		}
		// pending or running: canceled and abandoned are the caller's own
		// moves, made after it parks.
		if c.state.CompareAndSwap(s, s|sleeping) {
			return true
		}
	}
}

// park sleeps until the runner's wake-up (it returns true) or the end of ctx
// (false).
func (c *Call) park(ctx context.Context) bool {
	if !c.watch {
		c.wg.Wait()
		return true
	}
	select {
	case <-c.ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// giveUp gives the call up, after ctx ended, unless the runner delivered
// meanwhile: it then waits for the wake-up on its way, so that the runner is
// done with c when the caller may reuse it.
func (c *Call) giveUp() (delivered, ran bool) {
	if c.state.CompareAndSwap(pending|sleeping, canceled) {
		return false, false
	}
	if c.state.CompareAndSwap(running|sleeping, abandoned) {
		return false, true
	}
	<-c.ch
	return true, true
}

// Pending reports whether c has not started and was not given up.
func (c *Call) Pending() bool { return c.state.Load()&^sleeping == pending }

// Delivered reports whether the runner has delivered the outcome.
func (c *Call) Delivered() bool { return c.state.Load() == done }
