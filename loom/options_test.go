package loom_test

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// TestOptionsPanicOnBadValues: each option given a value it cannot use
// panics with a message that names it and the value.
func TestOptionsPanicOnBadValues(t *testing.T) {
	checkMisuse(t,
		misuse{func() { loom.WithPanicHandler(nil) }, "loom: WithPanicHandler(nil)"},
		misuse{func() { loom.WithBudget(-1, 0) }, "loom: WithBudget(-1, 0s): limits must not be negative"},
		misuse{func() { loom.WithBudget(0, -time.Millisecond) }, "loom: WithBudget(0, -1ms): limits must not be negative"},
		misuse{func() { loom.WithBackgroundLimit(0) }, "loom: WithBackgroundLimit(0): limit must be positive"},
		misuse{func() { loom.WithFixedStep(-time.Second, nil) }, "loom: WithFixedStep(-1s): the step must be positive"},
		misuse{func() { loom.WithFixedStep(0, func(time.Duration) {}) }, "loom: WithFixedStep(0s): the step must be positive"},
	)
}

// TestWithName: a loom's name is the Source of its panics, of actions and
// coroutines alike.
func TestWithName(t *testing.T) {
	l, p := testLoom(t, loom.WithName("arena"))
	l.Post(func() { panic("in an action") })
	c := l.StartCoroutine(func(yield func(loom.Instruction) bool) { panic("in a coroutine") })
	update(t, l)
	got := p.Take()
	if len(got) != 2 {
		t.Fatalf("the handler got %v; want two panics", got)
	}
	for _, e := range got {
		if e.Source != "arena" {
			t.Errorf("the panic %v has Source %q; want the loom's name", e.Value, e.Source)
		}
	}
	var pe *loom.PanicError
	if !errors.As(c.Err(), &pe) || pe.Source != "arena" {
		t.Errorf("the coroutine's Err() = %v; want a *PanicError whose Source is the loom's name", c.Err())
	}
}

// TestDefaultPanicHandlerLogs: without WithPanicHandler, a panic is
// reported through log/slog's default logger, at level Error, with the
// loom's name, the panic's value and its stack, and the frame goes on.
func TestDefaultPanicHandlerLogs(t *testing.T) {
	var buf bytes.Buffer
	defer log.SetOutput(log.Writer())
	log.SetOutput(&buf) // slog's default logger writes through log's
	l := loom.New(loom.ManualClock(), loom.WithName("arena"))
	defer l.Close()
	ran := false
	l.Post(func() { panic("boom") })
	l.Post(func() { ran = true })
	l.UpdateDelta(time.Millisecond)
	got := buf.String()
	for _, want := range []string{"ERROR", "loom: a callback panicked", "loom=arena", "panic=boom", "stack=", "TestDefaultPanicHandlerLogs"} {
		if !strings.Contains(got, want) {
			t.Errorf("the default report lacks %q:\n%s", want, got)
		}
	}
	if !ran {
		t.Error("the frame did not go on after the panic")
	}
}

// TestConfigure: options given to Configure take effect from the next
// frame, even given during a frame; a wake function from the next post;
// WithFrameObserver(nil) removes the observer; ManualClock has no effect.
func TestConfigure(t *testing.T) {
	l, _ := testLoom(t)
	var r recorder
	observed := 0
	l.Configure(loom.WithFrameObserver(func(loom.FrameStats) { observed++ }))
	l.Post(func() {
		r.add("a0")
		l.Configure(loom.WithBudget(1, 0), loom.WithFrameObserver(nil))
	})
	l.Post(r.note("a1"))
	l.Post(r.note("a2"))
	update(t, l)
	r.expect(t, "the frame that configured a budget", "a0", "a1", "a2")
	if observed != 1 {
		t.Errorf("the observer saw %d frames; want 1, the frame that removed it", observed)
	}
	l.Post(r.note("b0"))
	l.Post(r.note("b1"))
	update(t, l)
	r.expect(t, "the next frame", "b0")
	if observed != 1 {
		t.Errorf("the observer saw %d frames; want it removed", observed)
	}

	var wakes atomic.Int32
	l.Configure(loom.WithWakeFunc(func() { wakes.Add(1) }))
	update(t, l) // b1; the next post is the first since this frame began
	l.Post(func() {})
	if wakes.Load() != 1 {
		t.Errorf("the wake function ran %d times for the next post; want 1", wakes.Load())
	}

	// From another goroutine while frames run (the race detector watches).
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100 {
			l.Configure(loom.WithBudget(i%3, 0), loom.WithName(fmt.Sprint("n", i)))
		}
	}()
	for {
		select {
		case <-done:
		default:
			l.Post(func() {})
			update(t, l)
			runtime.Gosched() // lets the other goroutine run where all share one thread (js/wasm)
			continue
		}
		break
	}

	rl := loom.New()
	defer rl.Close()
	rl.Configure(loom.ManualClock())
	rl.Update() // still the real clock
	if rl.Frame() != 1 {
		t.Errorf("Frame() = %d; want 1", rl.Frame())
	}
}
