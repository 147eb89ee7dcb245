package loom_test

import (
	"math"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// TestClocksSaturate: the frame clocks stop at the end of their range,
// math.MaxInt64 nanoseconds (about 292 years), rather than wrap round to the
// past: a manual clock driven past it, and scaled time at a huge time scale,
// whose frame deltas and fixed steps stay those of a very long frame.
func TestClocksSaturate(t *testing.T) {
	const end = time.Duration(math.MaxInt64)

	l := loom.New(loom.ManualClock())
	l.UpdateDelta(time.Millisecond)
	l.UpdateDelta(end)
	l.UpdateDelta(end)
	if got := l.UnscaledTime(); got != end {
		t.Errorf("UnscaledTime() = %v after UpdateDelta(MaxInt64) twice; want %v", got, end)
	}
	if got := l.Time(); got != end {
		t.Errorf("Time() = %v after UpdateDelta(MaxInt64) twice; want %v", got, end)
	}
	if got := l.UnscaledDeltaTime(); got != 0 {
		t.Errorf("UnscaledDeltaTime() = %v at the end of the clock; want 0", got)
	}
	l.Close()

	steps := 0
	l = loom.New(loom.ManualClock(), loom.WithFixedStep(10*time.Millisecond, func(time.Duration) { steps++ }))
	l.SetTimeScale(1e300)
	l.UpdateDelta(time.Millisecond)
	if got := l.Time(); got != end {
		t.Errorf("Time() = %v after a frame at a time scale of 1e300; want %v", got, end)
	}
	if got := l.DeltaTime(); got != end {
		t.Errorf("DeltaTime() = %v after a frame at a time scale of 1e300; want %v", got, end)
	}
	// A frame feeds at most a third of a second to the fixed steps.
	if steps != 33 {
		t.Errorf("%d fixed steps of 10ms in a frame at a time scale of 1e300; want 33", steps)
	}
	steps = 0
	l.UpdateDelta(time.Millisecond)
	if got := l.Time(); got != end {
		t.Errorf("Time() = %v after a second frame at a time scale of 1e300; want %v", got, end)
	}
	if got := l.DeltaTime(); got != 0 || steps != 0 {
		t.Errorf("DeltaTime() = %v, %d fixed steps at the end of scaled time; want 0 and none", got, steps)
	}
	if i := l.Idle(); i.Timed {
		t.Errorf("Idle() = %+v with nothing waiting", i)
	}
	l.Close()
}
