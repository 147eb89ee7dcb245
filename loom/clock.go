package loom

import (
	"math"
	"time"
)

// after returns the instant d after t on a clock of nanoseconds (t, d >= 0), or the
// clock's end, math.MaxInt64 (about 292 years), if that instant is past it:
// math.MaxInt64, the natural "no timeout", must not wrap round to a time
// already passed. Every due time of the loom, and each clock's step from
// frame to frame, is computed with it.
func after(t, d int64) int64 {
	if d > math.MaxInt64-t {
		return math.MaxInt64
	}
	return t + d
}

// clamp converts f, a number of nanoseconds or of frames, to int64,
// holding it within the range of int64 (a time scale makes floats that Go's
// conversion to int64 would leave undefined past it).
func clamp(f float64) int64 {
	switch {
	case f >= math.MaxInt64: // float64(math.MaxInt64) is 2^63, already out of range
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// now returns l's clock: the real clock, or the clock that UpdateDelta drives.
// A reading of the real clock earlier than the current frame's is not of
// l's clock: it was taken in a testing/synctest bubble, whose clock is its
// own (it starts in 2000), on a loom made outside it. l's current frame is
// then the latest instant known to have passed on l's clock.
func (l *Loom) nowLocked() int64 {
	if l.manual {
		return l.clock
	}
	return max(int64(time.Since(l.epoch)), l.unscaled.Load())
}

// Frame returns the number of frames run so far; during a frame, that frame's
// number, counting from 1.
func (l *Loom) Frame() int64 { return l.frame.Load() }

// Time returns the scaled time of the current frame: the sum of the frames'
// deltas, each multiplied by the time scale in force (Unity's Time.time).
// Like unscaled time, it stops at the end of its range, math.MaxInt64
// nanoseconds (about 292 years), rather than wrap.
func (l *Loom) Time() time.Duration { return time.Duration(l.scaled.Load()) }

// UnscaledTime returns the time of the current frame since New, unaffected
// by the time scale (Unity's Time.unscaledTime).
func (l *Loom) UnscaledTime() time.Duration { return time.Duration(l.unscaled.Load()) }

// DeltaTime returns the scaled time between the previous frame and the
// current one (Unity's Time.deltaTime).
func (l *Loom) DeltaTime() time.Duration { return time.Duration(l.delta.Load()) }

// UnscaledDeltaTime returns the time between the previous frame and the
// current one, unaffected by the time scale.
func (l *Loom) UnscaledDeltaTime() time.Duration { return time.Duration(l.udelta.Load()) }

// TimeScale returns the rate at which scaled time passes: 1 by default, 0
// when paused.
func (l *Loom) TimeScale() float64 { return math.Float64frombits(l.scale.Load()) }

// SetTimeScale sets the rate at which scaled time passes from the next frame
// on: 0 pauses it, and with it the coroutines waiting with WaitForSeconds.
// Delayed actions and WaitForSecondsRealtime use unscaled time and go on.
// SetTimeScale panics if s is negative, infinite or NaN.
func (l *Loom) SetTimeScale(s float64) {
	l.mustBeMade()
	if s < 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		panic("loom: SetTimeScale: the scale must be a finite number >= 0")
	}
	l.scale.Store(math.Float64bits(s))
}
