package loom_test

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// TestRealClock: a loom made with New reads the real clock, which starts
// when New returns: each frame's unscaled time is the time since then, its
// delta the time since the previous frame, and Frame counts the frames.
func TestRealClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := loom.New()
		defer l.Close()
		if l.Frame() != 0 || l.UnscaledTime() != 0 || l.Time() != 0 || l.TimeScale() != 1 {
			t.Errorf("before the first frame: Frame %d, UnscaledTime %v, Time %v, TimeScale %v; want 0, 0, 0, 1",
				l.Frame(), l.UnscaledTime(), l.Time(), l.TimeScale())
		}
		time.Sleep(time.Second)
		l.Update()
		time.Sleep(20 * time.Millisecond)
		l.Update()
		if l.Frame() != 2 || l.UnscaledTime() != 1020*time.Millisecond || l.Time() != 1020*time.Millisecond {
			t.Errorf("Frame %d, UnscaledTime %v, Time %v; want 2, 1.02s, 1.02s", l.Frame(), l.UnscaledTime(), l.Time())
		}
		if l.UnscaledDeltaTime() != 20*time.Millisecond || l.DeltaTime() != 20*time.Millisecond {
			t.Errorf("UnscaledDeltaTime %v, DeltaTime %v; want 20ms, 20ms", l.UnscaledDeltaTime(), l.DeltaTime())
		}
		var during int64
		l.Post(func() { during = l.Frame() })
		l.Update()
		if during != 3 {
			t.Errorf("Frame() during the third frame = %d; want 3", during)
		}
	})
}

// TestTimeScale: scaled time moves at the time scale, set from the next
// frame on; 0 pauses it, while unscaled time, and the delayed actions that
// count on it, go on. A negative, infinite or NaN scale panics.
func TestTimeScale(t *testing.T) {
	l, _ := testLoom(t)
	l.UpdateDelta(time.Second)
	l.SetTimeScale(0.5)
	if l.TimeScale() != 0.5 {
		t.Errorf("TimeScale() = %v; want 0.5", l.TimeScale())
	}
	l.UpdateDelta(time.Second)
	if l.Time() != 1500*time.Millisecond || l.UnscaledTime() != 2*time.Second {
		t.Errorf("Time() = %v, UnscaledTime() = %v; want 1.5s, 2s", l.Time(), l.UnscaledTime())
	}
	if l.DeltaTime() != 500*time.Millisecond || l.UnscaledDeltaTime() != time.Second {
		t.Errorf("DeltaTime() = %v, UnscaledDeltaTime() = %v; want 500ms, 1s", l.DeltaTime(), l.UnscaledDeltaTime())
	}
	l.SetTimeScale(0)
	var r recorder
	l.PostAfter(time.Second, r.note("timers use unscaled time"))
	l.UpdateDelta(time.Second)
	r.expect(t, "paused", "timers use unscaled time")
	if l.Time() != 1500*time.Millisecond || l.DeltaTime() != 0 {
		t.Errorf("Time() = %v, DeltaTime() = %v while paused; want 1.5s, 0", l.Time(), l.DeltaTime())
	}
	const want = "loom: SetTimeScale: the scale must be a finite number >= 0"
	checkMisuse(t,
		misuse{func() { l.SetTimeScale(-1) }, want},
		misuse{func() { l.SetTimeScale(math.Inf(1)) }, want},
		misuse{func() { l.SetTimeScale(math.NaN()) }, want},
	)
	if l.TimeScale() != 0 {
		t.Errorf("TimeScale() = %v after the refused scales; want 0, as it was", l.TimeScale())
	}
}

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
