package loom_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

type eventLog struct {
	mu sync.Mutex
	s  []string
}

func (l *eventLog) add(format string, a ...any) {
	l.mu.Lock()
	l.s = append(l.s, fmt.Sprintf(format, a...))
	l.mu.Unlock()
}
func (l *eventLog) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := strings.Join(l.s, " ")
	l.s = nil
	return r
}

// Stop from another goroutine racing with frames: at most one resume after Stop
// returns, defers run once, Err is ErrStopped.
func TestOutsideStopRacesFrames(t *testing.T) {
	for round := range 200 {
		l := loom.New(loom.ManualClock())
		var resumes, defers atomic.Int32
		var began atomic.Bool
		c := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			began.Store(true)
			defer defers.Add(1)
			for yield(loom.NextFrame()) {
				resumes.Add(1)
			}
		})
		stopped := make(chan int32)
		go func() {
			for range round % 7 {
				// let some frames pass
			}
			c.Stop()
			stopped <- resumes.Load()
		}()
		var at int32
	loop:
		for {
			select {
			case at = <-stopped:
				break loop
			default:
				l.UpdateDelta(time.Millisecond)
				runtime.Gosched() // lets the stopper run where goroutines share one thread (js/wasm)
			}
		}
		for range 3 {
			l.UpdateDelta(time.Millisecond)
		}
		if r := resumes.Load(); r > at+1 {
			t.Fatalf("round %d: %d resumes after Stop returned (at %d)", round, r-at, at)
		}
		wantDefers := int32(0)
		if began.Load() {
			wantDefers = 1
		}
		if defers.Load() != wantDefers || !errors.Is(c.Err(), loom.ErrStopped) || !c.IsDone() {
			t.Fatalf("round %d: defers %d, Err %v", round, defers.Load(), c.Err())
		}
		if c.Stop() {
			t.Fatalf("second Stop reported true")
		}
		l.Close()
	}
}

// StopAllCoroutines from another goroutine stops every coroutine started before
// it returns, those not begun included, which never begin.
func TestOutsideStopAllFromOtherGoroutine(t *testing.T) {
	l := loom.New(loom.ManualClock())
	var began atomic.Int32
	var cs []*loom.Coroutine
	done := make(chan struct{})
	go func() {
		for range 50 {
			cs = append(cs, l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				began.Add(1)
				for yield(loom.NextFrame()) {
				}
			}))
		}
		l.StopAllCoroutines()
		close(done)
	}()
	<-done
	l.UpdateDelta(time.Millisecond)
	l.UpdateDelta(time.Millisecond)
	if began.Load() != 0 {
		t.Errorf("%d coroutines stopped before they began ran anyway", began.Load())
	}
	for i, c := range cs {
		if !c.IsDone() || !errors.Is(c.Err(), loom.ErrStopped) {
			t.Fatalf("coroutine %d: done %v err %v", i, c.IsDone(), c.Err())
		}
	}
	// Started after StopAll returned: runs.
	c := l.StartCoroutine(func(yield func(loom.Instruction) bool) { began.Add(1) })
	l.UpdateDelta(time.Millisecond)
	if !c.IsDone() || c.Err() != nil || began.Load() != 1 {
		t.Errorf("coroutine started after StopAll: done %v err %v began %d", c.IsDone(), c.Err(), began.Load())
	}
	l.Close()
}

// StopAllCoroutines called from a coroutine also stops the coroutines started in
// that frame, and the caller itself.
func TestOutsideStopAllFromCoroutine(t *testing.T) {
	l := loom.New(loom.ManualClock())
	var lg eventLog
	var inner *loom.Coroutine
	self := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		defer lg.add("selfDefer")
		inner = l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			lg.add("innerBegan")
			yield(loom.NextFrame())
		})
		l.StopAllCoroutines()
		if yield(loom.NextFrame()) {
			lg.add("selfResumed")
		}
	})
	l.UpdateDelta(time.Millisecond)
	l.UpdateDelta(time.Millisecond)
	if got := lg.take(); got != "selfDefer" {
		t.Errorf("log %q, want selfDefer only", got)
	}
	if !errors.Is(self.Err(), loom.ErrStopped) || !errors.Is(inner.Err(), loom.ErrStopped) {
		t.Errorf("self %v inner %v", self.Err(), inner.Err())
	}
	l.Close()
}

// Frame and time waits resume exactly when documented, with the time scale.
func TestOutsideWaitTiming(t *testing.T) {
	l := loom.New(loom.ManualClock())
	var lg eventLog
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		lg.add("f%d", l.Frame())
		yield(loom.WaitForFrames(3))
		lg.add("frames3@%d", l.Frame())
		yield(loom.WaitForFrames(0))
		lg.add("frames0@%d", l.Frame())
		yield(loom.WaitForSeconds(30 * time.Millisecond))
		lg.add("secs@%d", l.Frame())
		yield(loom.WaitForSecondsRealtime(20 * time.Millisecond))
		lg.add("real@%d", l.Frame())
	})
	for range 20 {
		if l.Frame() == 6 {
			l.SetTimeScale(0) // from frame 7 scaled time stops
		}
		if l.Frame() == 9 {
			l.SetTimeScale(1)
		}
		l.UpdateDelta(10 * time.Millisecond)
	}
	// f1 at frame 1; frames3 at 4; frames0 at 5; seconds from frame 5 (scaled
	// 50ms): frame 6 = 60, frames 7,8,9 paused (scale 0 from 7), so 70 at frame 10,
	// 80 at 11: resume at 11 (>= 80). Realtime 20ms from 11: frame 13.
	if got, want := lg.take(), "f1 frames3@4 frames0@5 secs@11 real@13"; got != want {
		t.Errorf("waits resumed %q, want %q", got, want)
	}
	l.Close()
}

// WaitFor a coroutine started in the same pass begins it at once and resumes the
// waiter in the pass in which it ends; WaitFor an ended one resumes next frame.
func TestOutsideNestedCoroutineTiming(t *testing.T) {
	l := loom.New(loom.ManualClock())
	var lg eventLog
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		lg.add("outer@%d", l.Frame())
		inner := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			lg.add("inner@%d", l.Frame())
			yield(loom.NextFrame())
			lg.add("innerEnd@%d", l.Frame())
		})
		yield(loom.WaitFor(inner))
		lg.add("outerResumed@%d", l.Frame())
		yield(loom.WaitFor(inner))
		lg.add("again@%d", l.Frame())
	})
	for range 4 {
		l.UpdateDelta(time.Millisecond)
	}
	if got, want := lg.take(), "outer@1 inner@1 innerEnd@2 outerResumed@2 again@3"; got != want {
		t.Errorf("nesting %q, want %q", got, want)
	}
	l.Close()
}

// WaitForFixedUpdate on a loom without fixed steps ends the coroutine with a
// *PanicError reported to the handler.
func TestOutsideWaitForFixedUpdateWithoutSteps(t *testing.T) {
	var panics panics
	l := loom.New(loom.ManualClock(), loom.WithPanicHandler(panics.Add))
	var deferred atomic.Bool
	c := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		defer deferred.Store(true)
		yield(loom.WaitForFixedUpdate())
	})
	l.UpdateDelta(time.Millisecond)
	l.UpdateDelta(time.Millisecond)
	var pe *loom.PanicError
	if !errors.As(c.Err(), &pe) || panics.Len() != 1 || !deferred.Load() {
		t.Errorf("Err %v, handler %d, defer ran %v", c.Err(), panics.Len(), deferred.Load())
	}
	l.Close()
}

// StartCoroutineContext with a done context stops it before it begins; a context
// ending later stops it with ErrStopped, defers run.
func TestOutsideCoroutineContext(t *testing.T) {
	l := loom.New(loom.ManualClock())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var began atomic.Bool
	c := l.StartCoroutineContext(ctx, func(yield func(loom.Instruction) bool) { began.Store(true) })
	l.UpdateDelta(time.Millisecond)
	if began.Load() || !errors.Is(c.Err(), loom.ErrStopped) {
		t.Errorf("done context: began %v Err %v", began.Load(), c.Err())
	}
	// A context that ends between frames: the coroutine must not resume after
	// that, and ends with ErrStopped, defers run.
	var late atomic.Int32
	var c2 *loom.Coroutine
	var d atomic.Bool
	for range 200 {
		ctx2, cancel2 := context.WithCancel(context.Background())
		d.Store(false)
		c2 = l.StartCoroutineContext(ctx2, func(yield func(loom.Instruction) bool) {
			defer d.Store(true)
			for yield(loom.NextFrame()) {
				if ctx2.Err() != nil {
					late.Add(1)
				}
			}
		})
		l.UpdateDelta(time.Millisecond)
		cancel2()
		l.UpdateDelta(time.Millisecond)
		if late.Load() != 0 {
			break
		}
	}
	if late.Load() != 0 {
		t.Errorf("a coroutine resumed (its yield reported true) after its context was done")
	}
	for i := 0; !c2.IsDone() && i < 1_000_000; i++ {
		l.UpdateDelta(time.Millisecond)
	}
	if !c2.IsDone() || !errors.Is(c2.Err(), loom.ErrStopped) || !d.Load() {
		t.Errorf("context ended: done %v Err %v defer %v", c2.IsDone(), c2.Err(), d.Load())
	}
	l.Close()
}

// How long after its context ends does a coroutine of StartCoroutineContext go
// on resuming? In a bubble, once the goroutines that watch contexts have run, it
// must be stopped at the start of the next frame.
func TestOutsideCoroutineContextSettled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := loom.New(loom.ManualClock())
		ctx, cancel := context.WithCancel(context.Background())
		var resumedAfter atomic.Int32
		var d atomic.Bool
		c := l.StartCoroutineContext(ctx, func(yield func(loom.Instruction) bool) {
			defer d.Store(true)
			for yield(loom.NextFrame()) {
				if ctx.Err() != nil {
					resumedAfter.Add(1)
				}
			}
		})
		l.UpdateDelta(time.Millisecond)
		cancel()
		synctest.Wait()
		l.UpdateDelta(time.Millisecond)
		if resumedAfter.Load() != 0 || !c.IsDone() || !errors.Is(c.Err(), loom.ErrStopped) || !d.Load() {
			t.Errorf("after the context ended and settled: resumed %d, done %v, Err %v, defer %v",
				resumedAfter.Load(), c.IsDone(), c.Err(), d.Load())
		}
		l.Close()
	})
}

// Frames needed, without a bubble, for a coroutine to see its context's end.
func TestOutsideCoroutineContextFramesToStop(t *testing.T) {
	l := loom.New(loom.ManualClock())
	ctx, cancel := context.WithCancel(context.Background())
	var resumedAfter atomic.Int32
	c := l.StartCoroutineContext(ctx, func(yield func(loom.Instruction) bool) {
		for yield(loom.NextFrame()) {
			if ctx.Err() != nil {
				resumedAfter.Add(1)
			}
		}
	})
	l.UpdateDelta(time.Millisecond)
	cancel()
	frames := 0
	for !c.IsDone() && frames < 1_000_000 {
		l.UpdateDelta(time.Millisecond)
		frames++
	}
	if !c.IsDone() {
		t.Fatalf("coroutine not stopped after 1e6 frames past its context's end")
	}
	if resumedAfter.Load() != 0 {
		t.Errorf("coroutine resumed %d times after its context ended (stopped after %d frames)", resumedAfter.Load(), frames)
	}
	l.Close()
}
