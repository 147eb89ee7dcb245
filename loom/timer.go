package loom

import (
	"cmp"
	"reflect"
	"slices"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/delayheap"
)

// A Timer is a delayed action, made by PostAfter or PostAfterScaled.
// It runs once, in the delayed-action phase of the first frame whose time is
// at or past its due time, unless it is stopped first. Timers of PostAfter
// count on unscaled time, which pausing the time scale does not
// hold back; those of PostAfterScaled count on scaled time (Loom.Time), as
// game logic does, and a time scale of 0 holds them back.
//
// A Timer is a Waitable: it is done when it is not waiting any more (it ran,
// or is running, was stopped, or its loom or scope closed), so it bounds a
// wait in WaitAny, and Reset makes it wait again.
//
// A Timer is safe for use by multiple goroutines. Rescheduling an existing
// timer with Reset costs no allocation (TestSteadyFrameAllocatesNothing).
// The zero Timer is not usable: its
// methods panic; timers are made by PostAfter and PostAfterScaled.
type Timer struct {
	l      *Loom
	f      func()
	scope  *Scope // nil for the Loom's own timers
	scaled bool   // it counts on scaled time
	// seq is the sequence number of t's entry in its wheel while t waits,
	// and 0 otherwise. An entry whose seq differs from its timer's is stale:
	// the timer was stopped or rescheduled, and the entry is skipped.
	seq uint64        // under l.mu
	err error         // ErrClosed once its loom or scope closed; under l.mu
	ch  chan struct{} // made by Done, closed when t stops waiting; under l.mu
}

// settled notes that t stopped waiting: it ran, or was stopped or closed.
func (t *Timer) settledLocked() {
	if t.ch != nil {
		close(t.ch)
		t.ch = nil // a Reset waits again, with a new channel
	}
}

// Done returns a channel that is closed once t is not waiting: it ran, was
// stopped, or its loom or scope closed. After Reset, Done returns a new
// channel for the new wait.
func (t *Timer) Done() <-chan struct{} {
	t.mustBeMade()
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	if t.ch == nil {
		t.ch = make(chan struct{})
		if !t.waiting() {
			close(t.ch)
			ch := t.ch
			t.ch = nil
			return ch
		}
	}
	return t.ch
}

func (t *Timer) waiting() bool { return t.seq != 0 }

// live reports whether an entry is its timer's current one.
func live(e *delayheap.Entry[*Timer]) bool { return e.Seq == e.V.seq }

// timers holds the timers of one clock in a timing wheel, keyed by due time
// in nanoseconds, with the count of its stale entries. It is guarded by the
// loom's mutex.
type timers struct {
	wheel delayheap.Wheel[*Timer]
	stale int // entries left by stopped or rescheduled timers
	// sink takes what readAhead reads, so that the reads stay; its value
	// means nothing.
	sink uintptr
}

// pending returns the number of timers waiting in ts.
func (ts *timers) pending() int { return ts.wheel.Len() - ts.stale }

// forget leaves an entry stale, once t was stopped or rescheduled.
func (ts *timers) forget() {
	ts.stale++
	if ts.stale > 64 && ts.stale > ts.wheel.Len()/2 {
		// Stale entries are the majority: drop them, so that the wheel stays
		// within twice the live timers and stopping costs O(1) amortized.
		ts.wheel.Filter(live)
		ts.stale = 0
	}
}

// top returns the earliest live timer's entry, or nil, dropping stale
// entries on the way.
func (ts *timers) top() *delayheap.Entry[*Timer] {
	e, dropped := ts.wheel.Earliest(live)
	ts.stale -= dropped
	return e
}

// readAhead drops the stale entries among the next n collected ones and
// reads the timers and the actions of the others, so that their cache
// misses overlap: on a frame that runs hundreds of timers out of a hundred
// thousand, the timers and the closures of their actions are scattered in
// memory, and each read would otherwise wait alone for memory when its turn
// came (BenchmarkLoomFrame: the call of each action's closure was two
// fifths of the frame).
func (ts *timers) readAhead(n int) {
	ts.stale -= ts.wheel.DropStale(n, live)
	for _, e := range ts.wheel.Next(n) {
		// reflect reads the code pointer of a func value from its
		// closure (the first word, in gc), which brings the closure into
		// the cache for the call. Only speed depends on it: any other
		// layout leaves the call as it was, one miss of its own.
		ts.sink += reflect.ValueOf(e.V.f).Pointer()
	}
}

// front returns the earliest live entry of those collected (see
// delayheap.Wheel.Collect), or nil, dropping stale entries before it.
func (ts *timers) front() *delayheap.Entry[*Timer] {
	for e := ts.wheel.Front(); e != nil; e = ts.wheel.Front() {
		if live(e) {
			return e
		}
		ts.wheel.Pop()
		ts.stale--
	}
	return nil
}

// closeAll ends every waiting timer of ts with ErrClosed and empties it.
func (ts *timers) closeAll() {
	all := ts.wheel.Drain()
	slices.SortFunc(all, func(a, b delayheap.Entry[*Timer]) int { // in due order, as they would have run
		return cmp.Or(cmp.Compare(a.Due, b.Due), cmp.Compare(a.Seq, b.Seq))
	})
	for i := range all {
		if e := &all[i]; live(e) {
			e.V.seq, e.V.err = 0, ErrClosed
			e.V.leaveScopeLocked()
			e.V.settledLocked()
		}
	}
	ts.stale = 0
}

// timersOf returns the timers of t's clock.
func (l *Loom) timersOf(t *Timer) *timers {
	if t.scaled {
		return &l.scaledTimers
	}
	return &l.timers
}

// PostAfter queues f to run in the first frame at least d after now on l's
// clock (unscaled); with d <= 0, in the next frame. A due time past the end
// of the clock's range (math.MaxInt64 nanoseconds, about 292 years) is that
// end, so a d of math.MaxInt64 means no timeout: it runs only if the clock
// reaches that end, which a real clock never does (a ManualClock advanced by
// math.MaxInt64 does). It never blocks. Called in a testing/synctest bubble
// on a loom made outside it, whose clock the bubble's is not, d counts from
// l's current frame, the latest instant known to have passed on l's clock;
// Timer.Reset does the same. With a nil f, the Timer only marks the time: a Waitable that bounds another wait,
// as in yield(WaitAny(handle, l.PostAfter(time.Second, nil))), after which
// FirstDone tells which came first. If l is closed, the returned Timer never
// runs and its Err reports ErrClosed.
func (l *Loom) PostAfter(d time.Duration, f func()) *Timer {
	return l.postAfter(nil, d, false, f)
}

// PostAfterScaled queues f to run in the first frame whose scaled time (see
// Time) is at least d past the current frame's; with d <= 0, in the next
// frame. Scaled time moves only from frame to frame, at the rate of the time
// scale: a time scale of 0 holds f back, 2 brings it twice as soon. As for
// PostAfter, a due time past the end of the clock's range is that end. This is
// how the delayed actions of Unity's Loom helper count; PostAfter counts on
// unscaled time. In a frame, the delayed actions due on scaled time run after
// those due on unscaled time. It never blocks; f may be nil, as for PostAfter. If l is
// closed, the returned Timer never runs and its Err reports ErrClosed.
func (l *Loom) PostAfterScaled(d time.Duration, f func()) *Timer {
	return l.postAfter(nil, d, true, f)
}

// postAfter makes a timer of scope s due after d, on scaled time if scaled.
func (l *Loom) postAfter(s *Scope, d time.Duration, scaled bool, f func()) *Timer {
	l.mustBeMade()
	if f == nil {
		f = nop
	}
	t := &Timer{l: l, f: f, scope: s, scaled: scaled}
	l.mu.Lock()
	if l.closed || (s != nil && s.closed.Load()) {
		t.err = ErrClosed
		l.mu.Unlock()
		return t
	}
	wake := l.scheduleLocked(t, l.dueLocked(t, d))
	l.mu.Unlock()
	wake.send()
	return t
}

// dueLocked returns the time on t's clock d from now, or the clock's end if
// that is past it.
func (l *Loom) dueLocked(t *Timer, d time.Duration) int64 {
	if t.scaled {
		return after(l.scaledNow(), max(int64(d), 0))
	}
	return after(l.nowLocked(), max(int64(d), 0))
}

// scheduleLocked puts t in its wheel due at due, leaving its earlier entry
// stale if it had one, and returns the wake-up to send if t is now the
// earliest of its wheel.
func (l *Loom) scheduleLocked(t *Timer, due int64) wakeup {
	ts := l.timersOf(t)
	if t.waiting() {
		t.seq = 0 // its entry is stale from now on
		ts.forget()
	} else if t.scope != nil {
		t.scope.timers[t] = struct{}{}
	}
	l.seq++
	t.seq = l.seq
	earliest := ts.wheel.Before(due, l.seq)
	ts.wheel.Push(due, l.seq, t)
	if earliest {
		return l.wakeLocked()
	}
	return wakeup{}
}

// unscheduleLocked takes t out of its wheel, leaving its entry stale.
func (l *Loom) unscheduleLocked(t *Timer) {
	t.seq = 0
	t.leaveScopeLocked()
	t.settledLocked()
	l.timersOf(t).forget()
}

// leaveScopeLocked forgets t in its scope, once it left the wheel.
func (t *Timer) leaveScopeLocked() {
	if t.scope != nil {
		delete(t.scope.timers, t)
	}
}

// Stop prevents t from running, reporting whether it did: false if t has
// already run, is running, was stopped, or its loom or scope closed.
func (t *Timer) Stop() bool {
	t.mustBeMade()
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	if !t.waiting() {
		return false
	}
	t.l.unscheduleLocked(t)
	return true
}

// Reset makes t run d from now on its clock (unscaled, or scaled for a timer
// of PostAfterScaled; past the end of the clock's range, at that end, as
// PostAfter), whether it is waiting,
// has run or was stopped, and reports whether it was waiting. A timer reset
// while it runs runs again in a later frame. After its loom or scope closed,
// Reset does nothing and reports false.
func (t *Timer) Reset(d time.Duration) bool {
	t.mustBeMade()
	l := t.l
	l.mu.Lock()
	if t.err != nil || l.closed || (t.scope != nil && t.scope.closed.Load()) {
		// A timer that was not waiting when its loom or scope closed has
		// no error; it must not wait again all the same.
		l.mu.Unlock()
		return false
	}
	waiting := t.waiting()
	wake := l.scheduleLocked(t, l.dueLocked(t, d))
	l.mu.Unlock()
	wake.send()
	return waiting
}

// Err returns ErrClosed if t's loom or scope closed before t ran, and nil
// otherwise.
func (t *Timer) Err() error {
	t.mustBeMade()
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	return t.err
}

// IsDone reports, without blocking, whether t is not waiting any more: it
// has run (or is running), was stopped, or its loom or scope closed. Reset
// makes it wait again.
func (t *Timer) IsDone() bool {
	t.mustBeMade()
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	return !t.waiting()
}

func (t *Timer) mustBeMade() {
	if t.l == nil {
		panic("loom: use of a zero Timer; timers are made by PostAfter and PostAfterScaled")
	}
}
