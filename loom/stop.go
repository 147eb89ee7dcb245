package loom

import (
	"errors"
	"fmt"
	"slices"
)

// A coroutine is stopped by a request from any goroutine (Stop,
// StopAllCoroutines, its Scope's Close, the end of its context), which
// stopAsked, the one test that every begin and resume makes, sees at once,
// and then ended on the loop, its yield reporting false.

// ErrStopped is the error of a coroutine ended by Stop or
// StopAllCoroutines.
var ErrStopped = errors.New("loom: coroutine stopped")

// Stop ends c, reporting whether it had not ended yet: Stops from several
// goroutines before the loop has ended c may each report true. It is safe from any
// goroutine and never runs c's code on the caller: c never resumes after
// Stop returns, but for a resume under way at that moment, and it ends on
// the loop, which makes its yield report false, so that its body returns
// and its defers run, then Err reports ErrStopped: in the current frame, at
// the next step of its coroutine pass, if a frame is running, or at the
// start of the next frame's. A body that stops its own coroutine ends at its
// next yield. A coroutine that has not begun never does.
func (c *Coroutine) Stop() bool {
	if c == nil {
		panic("loom: Stop of a nil *Coroutine")
	}
	c.mustBeMade("Stop")
	return c.l.stopCoroutine(c, ErrStopped)
}

// StopAllCoroutines stops every coroutine of l started before it returns,
// as Stop does for each: those running or waiting, and those that have not
// begun, which then never begin. None of them resumes after it returns, but
// for a resume under way at that moment, not even one whose wait for another
// of them ends as that one stops: its yield reports false. Coroutines started
// after it returns are not stopped, whatever goroutine calls it.
func (l *Loom) StopAllCoroutines() {
	l.mustBeMade()
	l.mu.Lock()
	if id := l.co.ids.Load(); id > l.stopFloor.Load() {
		l.stopFloor.Store(id) // from now on, no coroutine up to id resumes (see stopAsked)
	}
	wake := l.requestLocked()
	l.mu.Unlock()
	wake.send()
}

// stopCoroutine asks the loop to end c with err: see Stop.
func (l *Loom) stopCoroutine(c *Coroutine, err error) bool {
	if c.isDone() {
		return false
	}
	c.stopReq.Store(true) // no resume from now on
	l.mu.Lock()
	l.stopping = append(l.stopping, c)
	wake := l.requestLocked()
	l.mu.Unlock()
	wake.send()
	return true
}

// stopAsked returns the error to end c with if its end was asked, and nil
// otherwise: ErrClosed once its scope closed; ErrStopped once
// StopAllCoroutines, Stop or the end of its context asked for it. It is the
// one test of a stop, which every begin and resume makes, so that no
// coroutine resumes after the call that stops it returns, whichever way it
// was stopped, even before the loop applies the stop: a coroutine that ends
// as the stop is applied wakes those waiting for it, which must not resume
// then.
func (l *Loom) stopAsked(c *Coroutine) error {
	switch {
	case c.scope != nil && c.scope.closed.Load():
		return ErrClosed
	case c.stopReq.Load() || c.id <= l.stopFloor.Load():
		return ErrStopped
	case c.ctxDone != nil:
		select {
		case <-c.ctxDone:
			return ErrStopped
		default:
		}
	}
	return nil
}

// yield returns the yield function c's body receives, which reports false
// once c is stopped and refuses a yield after that.
func (c *Coroutine) yield(yield func(Instruction) bool) func(Instruction) bool {
	return func(in Instruction) bool {
		if c.refused {
			// Without this, Stop would wait forever for a body that
			// ignores the false it was given.
			panic(fmt.Sprintf("loom: coroutine %d yielded after its yield reported false; a body must return once yield reports false", c.id))
		}
		if !yield(in) {
			c.refused = true
			return false
		}
		return true
	}
}

// stopNow ends c with err on the loom's goroutine, reporting whether it had
// not ended.
func (l *Loom) stopNow(c *Coroutine, err error) bool {
	if c.isDone() {
		return false
	}
	if c.running { // c stops itself, or a coroutine it runs stops it: at its next yield
		if c.stopWith == nil {
			c.stopWith = err
		}
		return true
	}
	if c.started {
		c.waitSeq = 0 // leaves its heap, if in one; lists skip ended coroutines
		c.stop()      // yield reports false: the body returns, its defers run
		if c.panicked != nil {
			l.handlePanic(c.panicked)
			err = c.panicked
		}
	}
	l.end(c, err)
	return true
}

// stopAllNow ends every coroutine of l with err.
func (l *Loom) stopAllNow(err error) {
	for _, c := range slices.Clone(l.co.live) {
		l.stopNow(c, err)
	}
}
