package loom_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
)

func TestTimeScale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := loom.New(loom.ManualClock())
		l.UpdateDelta(time.Second)
		l.SetTimeScale(0.5)
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
		if l.Time() != 1500*time.Millisecond {
			t.Errorf("Time() = %v while paused; want 1.5s", l.Time())
		}
		for _, s := range []float64{-1, 1 / zero(), zero() / zero()} {
			if got := testkit.PanicMessage(func() { l.SetTimeScale(s) }); !strings.HasPrefix(got, "loom: SetTimeScale") {
				t.Errorf("SetTimeScale(%v) panicked with %q", s, got)
			}
		}
	})
}

func zero() float64 { return 0 }

func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := loom.New()
		var r recorder
		l.Update()
		l.Post(r.note("posted before Close"))
		tm := l.PostAfter(time.Hour, r.note("never"))
		l.Close()
		l.Close()
		r.expect(t, "Close", "posted before Close")
		if tm.Err() != loom.ErrClosed || tm.Stop() || tm.Reset(time.Second) {
			t.Errorf("timer after Close: Err %v; want ErrClosed, and Stop and Reset false", tm.Err())
		}
		if err := l.Post(func() {}); err != loom.ErrClosed {
			t.Errorf("Post after Close = %v; want ErrClosed", err)
		}
		if err := l.PostAfter(time.Second, func() {}).Err(); err != loom.ErrClosed {
			t.Errorf("PostAfter after Close: Err() = %v; want ErrClosed", err)
		}
		if err := l.RunAsync(func() {}); err != loom.ErrClosed {
			t.Errorf("RunAsync after Close = %v; want ErrClosed", err)
		}
		l.Update() // does nothing
		if l.Frame() != 1 {
			t.Errorf("Frame() = %d after Close; want 1", l.Frame())
		}

		// Close during a frame, from an action: the frame's work goes on,
		// the loom closes as the frame ends, and posts fail at once.
		var r2 recorder
		l2 := loom.New()
		c := l2.StartCoroutine(func(yield func(loom.Instruction) bool) {
			defer r2.note("coroutine defer")()
			for yield(loom.NextFrame()) {
				r2.note("coroutine resumed")()
			}
		})
		l2.Update()
		var postErr error
		l2.Post(func() {
			l2.Close()
			postErr = l2.Post(func() {})
		})
		l2.Post(r2.note("the next action of the frame"))
		l2.Update()
		r2.expect(t, "the closing frame", "the next action of the frame", "coroutine resumed", "coroutine defer")
		if postErr != loom.ErrClosed || !errors.Is(c.Err(), loom.ErrClosed) {
			t.Errorf("during the closing frame: Post = %v, the coroutine's Err = %v; want ErrClosed, ErrClosed", postErr, c.Err())
		}
		l2.Update() // does nothing
		if l2.Frame() != 2 {
			t.Errorf("Frame() = %d after the closing frame; want 2", l2.Frame())
		}
	})
}

func TestScope(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := loom.New()
		var r recorder
		s := l.NewScope()
		s.Post(r.note("scoped action"))
		s.PostAfter(time.Second, r.note("scoped timer"))
		at := s.PostAfter(time.Minute, r.note("scoped at"))
		l.Post(r.note("loom action"))
		l.PostAfter(time.Second, r.note("loom timer"))
		l.Update()
		r.expect(t, "frame 1", "scoped action", "loom action")
		s.Post(r.note("dropped by Close"))
		s.Close()
		if at.Err() != loom.ErrClosed {
			t.Errorf("Err() = %v; want ErrClosed", at.Err())
		}
		if err := s.Post(func() {}); err != loom.ErrClosed {
			t.Errorf("Post on a closed scope = %v; want ErrClosed", err)
		}
		if err := s.PostAfter(0, func() {}).Err(); err != loom.ErrClosed {
			t.Errorf("PostAfter on a closed scope: Err() = %v; want ErrClosed", err)
		}
		time.Sleep(time.Minute)
		l.Update()
		r.expect(t, "after Close", "loom timer")
		if i := l.Idle(); i.Now || i.Timed {
			t.Errorf("Idle() = %+v; want nothing pending", i)
		}
	})
}

func TestWakeOncePerBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		l := loom.New(loom.WithWakeFunc(func() { calls.Add(1) }))
		wake := l.Idle().Wake
		for range 10 {
			l.Post(func() {})
		}
		if got := calls.Load(); got != 1 {
			t.Errorf("wake function called %d times for one batch; want 1", got)
		}
		select {
		case <-wake:
		default:
			t.Fatal("no value on the wake channel")
		}
		select {
		case <-wake:
			t.Fatal("two values on the wake channel for one batch")
		default:
		}
		l.Update()
		l.PostAfter(time.Hour, func() {}) // a new earliest timer wakes too
		if got := calls.Load(); got != 2 {
			t.Errorf("wake function called %d times; want 2", got)
		}
		<-wake
		l.PostAfter(2*time.Hour, func() {}) // not the earliest: no wake-up
		if got := calls.Load(); got != 2 {
			t.Errorf("wake function called %d times; want 2", got)
		}
		if i := l.Idle(); i.Now || !i.Timed || i.Delay != time.Hour {
			t.Errorf("Idle() = %+v; want a timer due in 1h", i)
		}
	})
}

func TestRunAsyncIsBoundedAndNeverBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p panics
		l := loom.New(loom.WithPanicHandler(p.Add))
		var running, peak atomic.Int32
		gate := make(chan struct{})
		for range 20 {
			if err := l.RunAsync(func() {
				n := running.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				<-gate
				running.Add(-1)
			}); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if got := running.Load(); got != 8 {
			t.Errorf("%d background functions run at once; want 8", got)
		}
		l.RunAsync(func() { panic("in the background") })
		close(gate)
		if err := l.WaitBackground(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := peak.Load(); got != 8 {
			t.Errorf("peak %d; want 8", got)
		}
		if got := p.Take(); len(got) != 1 || got[0].Value != "in the background" {
			t.Errorf("handler got %v", got)
		}
		l2 := loom.New(loom.WithBackgroundLimit(2))
		l2.RunAsync(func() {})
		if got := testkit.PanicMessage(func() { l2.Configure(loom.WithBackgroundLimit(3)) }); got != "loom: WithBackgroundLimit given to Configure after the first RunAsync" {
			t.Errorf("late WithBackgroundLimit panicked with %q", got)
		}
		l2.WaitBackground(t.Context())
	})
}

// TestRenderGoroutine runs a loom on a goroutine locked to its own OS thread,
// paced by a ticker, the way a render thread would.
func TestRenderGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := loom.New()
		var frames atomic.Int32
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			tick := time.NewTicker(time.Second / 60)
			defer tick.Stop()
			for range 60 {
				<-tick.C
				l.Update()
			}
			l.Close()
			close(done)
		}()
		for i := range 120 {
			l.Post(func() { frames.Add(1) })
			if i%2 == 1 {
				time.Sleep(time.Second / 60)
			}
		}
		<-done
		if got := l.Frame(); got != 60 {
			t.Errorf("Frame() = %d; want 60 in one second", got)
		}
		if got := frames.Load(); got != 120 {
			t.Errorf("%d actions ran; want 120 (the last ones run by Close)", got)
		}
	})
}

func TestOptionPanics(t *testing.T) {
	l := loom.New()
	for _, c := range []struct {
		f    func()
		want string
	}{
		{func() { l.Post(nil) }, "loom: Post(nil)"},
		{func() { l.RunAsync(nil) }, "loom: RunAsync(nil)"},
	} {
		if got := testkit.PanicMessage(c.f); got != c.want {
			t.Errorf("panicked with %q; want %q", got, c.want)
		}
	}
}

func TestWaitBackgroundWithoutRunner(t *testing.T) {
	if err := loom.New().WaitBackground(context.Background()); err != nil {
		t.Errorf("WaitBackground = %v; want nil", err)
	}
}

// TestZeroValuesPanicWithAMessage: the zero Loom and Scope are not
// usable, as documented, and say which constructor makes them.
func TestZeroValuesPanicWithAMessage(t *testing.T) {
	var l loom.Loom
	var s loom.Scope
	for _, c := range []struct {
		f    func()
		want string
	}{
		{func() { s.Post(func() {}) }, "loom: use of a zero Scope; make one with Loom.NewScope"},
		{func() { s.Close() }, "loom: use of a zero Scope; make one with Loom.NewScope"},
	} {
		if got := testkit.PanicMessage(c.f); got != c.want {
			t.Errorf("panicked with %q; want %q", got, c.want)
		}
	}
	if got := testkit.PanicMessage(func() { l.Post(func() {}) }); !strings.Contains(got, "zero Loom") {
		t.Errorf("Post on the zero Loom panicked with %q; want a message about the zero Loom", got)
	}
}

// TestZeroLoomPanicsEverywhere: every method of the zero Loom that does work
// panics with the same message, as documented.
func TestZeroLoomPanicsEverywhere(t *testing.T) {
	var l loom.Loom
	const want = "loom: use of a zero Loom; make one with New"
	for name, f := range map[string]func(){
		"PostAfter":       func() { l.PostAfter(time.Second, nil) },
		"PostAfterScaled": func() { l.PostAfterScaled(time.Second, nil) },
		"Idle":            func() { l.Idle() },
		"NewScope":        func() { l.NewScope() },
		"RunAsync":        func() { l.RunAsync(func() {}) },
		"SetTimeScale":    func() { l.SetTimeScale(1) },
		"Configure":       func() { l.Configure() },
		"Update":          func() { l.Update() },
		"UpdateDelta":     func() { l.UpdateDelta(time.Millisecond) },
	} {
		if got := testkit.PanicMessage(f); got != want {
			t.Errorf("%s on the zero Loom panicked with %q; want %q", name, got, want)
		}
	}
}
