// Package handoff is the state machine of a synchronous call that its caller
// hands to another goroutine, the runner, and waits for: a RunSync that
// waits its turn on a queue's worker, a call to the main thread. The caller
// may stop waiting when its context ends; the runner may find the call
// already given up. Compare-and-swaps on one state word decide, in every
// race, who owns the outcome, so that a function runs at most once, never
// after its caller gave it up before it started, and its outcome (a panic
// above all) reaches exactly one of the two: the caller, or the runner's
// report of what no caller will see.
package handoff

import (
	"context"
	"sync"
	"sync/atomic"
)

// The states of a Call. It moves from pending to running when the runner
// starts it, then to done when the runner delivers its outcome; the caller
// may move it from pending to canceled (the function never runs) or from
// running to abandoned (the function runs on, and its outcome is the
// runner's to report).
const (
	pending uint32 = iota
	running
	done
	canceled
	abandoned
)

// A Call is one synchronous call handed over. The caller arms it, hands it
// to the runner, and waits; the runner starts it, runs the function if Start
// allowed, and delivers. A Call may be reused once Wait has returned true, or
// once Start has reported false; one given up while running belongs to the
// runner from then on.
type Call struct {
	state atomic.Uint32
	// The caller is woken through wg, for a wait that watches no context,
	// or through ch, made by Arm for one that does: a channel belongs to the
	// testing/synctest bubble that made it, a WaitGroup only to the bubble
	// that counts it, so a reused Call keeps no channel.
	wg sync.WaitGroup
	ch chan struct{}
}

// Arm readies c for a caller that will wait with ctx.
func (c *Call) Arm(ctx context.Context) {
	c.state.Store(pending)
	if ctx.Done() != nil {
		c.ch = make(chan struct{}, 1)
	} else {
		c.ch = nil
		c.wg.Add(1)
	}
}

// Start moves c from pending to running, for the runner, and reports
// whether it did: false means the caller gave the call up before it started,
// and the function must not run.
func (c *Call) Start() bool {
	return c.state.CompareAndSwap(pending, running)
}

// Deliver ends a started call and wakes its caller, reporting whether the
// caller will see the outcome: false means the caller left while the
// function ran, and the runner reports whatever must not go unseen.
func (c *Call) Deliver() bool {
	if !c.state.CompareAndSwap(running, done) {
		return false
	}
	if c.ch != nil {
		c.ch <- struct{}{}
	} else {
		c.wg.Done()
	}
	return true
}

// Wait blocks until the runner delivers (it returns true), or until ctx is
// done and the caller gives the call up (it returns false, and ran reports
// whether the function had started: it then runs on). ctx must be the one
// given to Arm.
func (c *Call) Wait(ctx context.Context) (delivered, ran bool) {
	if c.ch == nil {
		c.wg.Wait()
		return true, true
	}
	select {
	case <-c.ch:
		return true, true
	case <-ctx.Done():
	}
	if c.state.CompareAndSwap(pending, canceled) {
		return false, false
	}
	if c.state.CompareAndSwap(running, abandoned) {
		return false, true
	}
	<-c.ch // delivered meanwhile
	return true, true
}

// Pending reports whether c has not started and was not given up.
func (c *Call) Pending() bool { return c.state.Load() == pending }

// Delivered reports whether the runner has delivered the outcome, for a
// caller that spins before it waits.
func (c *Call) Delivered() bool { return c.state.Load() == done }
