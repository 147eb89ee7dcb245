package loom

import (
	"time"

	"github.com/taskqueue-go/taskqueue/internal/delayheap"
)

// A Timer is a delayed action, made by PostAfter or PostAt. It runs once, in
// the delayed-action phase of the first frame whose unscaled time is at or
// past its due time, unless it is stopped first. Timers count on unscaled
// time: pausing the time scale does not hold them back.
//
// A Timer is safe for use by multiple goroutines. Rescheduling an existing
// timer with Reset costs no allocation.
type Timer struct {
	l     *Loom
	f     func()
	scope *Scope // nil for the Loom's own timers
	// seq is the sequence number of t's entry in l.delayed while t waits,
	// and 0 otherwise. An entry whose seq differs from its timer's is stale:
	// the timer was stopped or rescheduled, and the entry is skipped.
	seq uint64 // under l.mu
	err error  // ErrClosed once its loom or scope closed; under l.mu
}

func (t *Timer) waiting() bool { return t.seq != 0 }

// live reports whether a heap entry is its timer's current one.
func live(e *delayheap.Entry[*Timer]) bool { return e.Seq == e.V.seq }

// PostAfter queues f to run in the first frame at least d after now on l's
// clock (see Now); with d <= 0, in the next frame. It never blocks. If l is
// closed, the returned Timer never runs and its Err reports ErrClosed.
func (l *Loom) PostAfter(d time.Duration, f func()) *Timer {
	return l.postAt(nil, d, time.Time{}, f)
}

// PostAt queues f to run in the first frame whose time, on l's clock, is at
// or past at (see Now). It is PostAfter with the delay at.Sub(l.Now()).
func (l *Loom) PostAt(at time.Time, f func()) *Timer {
	if at.IsZero() {
		panic("loom: PostAt with the zero time")
	}
	return l.postAt(nil, 0, at, f)
}

// postAt makes a timer of scope s due after d, or at at if at is not zero.
func (l *Loom) postAt(s *Scope, d time.Duration, at time.Time, f func()) *Timer {
	if f == nil {
		panic("loom: PostAfter or PostAt with a nil function")
	}
	t := &Timer{l: l, f: f, scope: s}
	l.mu.Lock()
	if l.closed || (s != nil && s.closed.Load()) {
		t.err = ErrClosed
		l.mu.Unlock()
		return t
	}
	wake := l.scheduleLocked(t, l.dueLocked(d, at))
	l.mu.Unlock()
	wake.send()
	return t
}

// dueLocked returns the loom time d from now, or of the instant at.
func (l *Loom) dueLocked(d time.Duration, at time.Time) int64 {
	if !at.IsZero() {
		return int64(at.Sub(l.epoch))
	}
	return l.nowLocked() + max(int64(d), 0)
}

// scheduleLocked puts t in the heap due at due, leaving its earlier entry
// stale if it had one, and returns the wake-up to send if t is now the
// earliest.
func (l *Loom) scheduleLocked(t *Timer, due int64) wakeup {
	if t.waiting() {
		l.stale++
	} else if t.scope != nil {
		t.scope.timers[t] = struct{}{}
	}
	l.seq++
	t.seq = l.seq
	l.delayed.Push(due, l.seq, t)
	l.compactLocked()
	if top := l.delayed.Top(); top.V == t && live(top) {
		return l.wakeLocked()
	}
	return wakeup{}
}

// unscheduleLocked takes t out of the heap, leaving its entry stale.
func (l *Loom) unscheduleLocked(t *Timer) {
	t.seq = 0
	t.leaveScopeLocked()
	l.stale++
	l.compactLocked()
}

// compactLocked drops the stale entries once they are the majority, so that
// the heap stays within twice the live timers and stopping costs O(1)
// amortized.
func (l *Loom) compactLocked() {
	if l.stale > 64 && l.stale > l.delayed.Len()/2 {
		l.delayed.Filter(live)
		l.stale = 0
	}
}

// topLocked drops stale entries from the top of the heap and returns the
// earliest live one, or nil.
func (l *Loom) topLocked() *delayheap.Entry[*Timer] {
	for l.delayed.Len() > 0 {
		if e := l.delayed.Top(); live(e) {
			return e
		}
		l.delayed.Pop()
		l.stale--
	}
	return nil
}

// leaveScopeLocked forgets t in its scope, once it left the heap.
func (t *Timer) leaveScopeLocked() {
	if t.scope != nil {
		delete(t.scope.timers, t)
	}
}

// Stop prevents t from running, reporting whether it did: false if t has
// already run, is running, was stopped, or its loom or scope closed.
func (t *Timer) Stop() bool {
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	if !t.waiting() {
		return false
	}
	t.l.unscheduleLocked(t)
	return true
}

// Reset makes t run d from now on its loom's clock, whether it is waiting,
// has run or was stopped, and reports whether it was waiting. A timer reset
// while it runs runs again in a later frame. After its loom or scope closed,
// Reset does nothing and reports false.
func (t *Timer) Reset(d time.Duration) bool {
	l := t.l
	l.mu.Lock()
	if t.err != nil {
		l.mu.Unlock()
		return false
	}
	waiting := t.waiting()
	wake := l.scheduleLocked(t, l.dueLocked(d, time.Time{}))
	l.mu.Unlock()
	wake.send()
	return waiting
}

// Err returns ErrClosed if t's loom or scope closed before t ran, and nil
// otherwise.
func (t *Timer) Err() error {
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	return t.err
}

// IsDone reports, without blocking, whether t is not waiting any more: it
// has run (or is running), was stopped, or its loom or scope closed. Reset
// makes it wait again.
func (t *Timer) IsDone() bool {
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	return !t.waiting()
}
