package loom_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
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
