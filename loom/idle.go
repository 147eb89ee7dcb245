package loom

import "time"

// Idle tells a loop that sleeps between frames when the loom next has work.
type Idle struct {
	// Now is true when posted actions wait (or actions carried over by the
	// budget): the next frame should run at once.
	Now bool
	// Frames is true when coroutines wait for frames or poll a condition, so
	// frames should keep coming at the loop's own pace.
	Frames bool
	// Timed is true when a delayed action or a timed coroutine wait is
	// pending (on scaled time, only while the time scale is above zero,
	// since none comes due while it is paused); Delay is then the time until
	// the earliest one is due, zero or negative if it is due already.
	Timed bool
	Delay time.Duration
	// Wake receives a value when work arrives for the loom after the frame
	// or the Idle call before it, once for all that arrives until the next
	// (see WithWakeFunc): a loop that sleeps selects on it. It is the same
	// channel on every call.
	Wake <-chan struct{}
}

// Idle reports when l next has work, for a loop that sleeps between frames
// (mainthread.Run is one): it runs a frame at once if Now, within Delay if
// Timed, at its pace if Frames, and otherwise sleeps until woken (see
// Idle.Wake and WithWakeFunc). Call it from the loop's goroutine, between
// frames. What it reports covers the work that arrived before the call:
// work that arrives after it wakes the loop, as after a frame, so that a
// loop woken without running a frame (by a timer that became the earliest,
// say) asks Idle again and sleeps without missing what comes next.
func (l *Loom) Idle() Idle {
	l.mustBeMade()
	l.mu.Lock()
	defer l.mu.Unlock()
	i := Idle{Now: len(l.posted) > 0 || l.next < len(l.batch) || l.requests.Load(), Wake: l.wakeChLocked()}
	l.signaled = false // the loop has seen the work so far: what comes next wakes it
	if e := l.timers.top(); e != nil {
		i.timed(time.Duration(e.Due - l.nowLocked()))
	}
	if scale := l.TimeScale(); scale > 0 {
		if e := l.scaledTimers.top(); e != nil {
			i.timed(time.Duration(clamp(float64(e.Due-l.scaledNow()) / scale)))
		}
	}
	l.co.idle(l, &i)
	return i
}

// timed records a timed wait due in d, if it is the earliest so far.
func (i *Idle) timed(d time.Duration) {
	if !i.Timed || d < i.Delay {
		i.Timed, i.Delay = true, d
	}
}
