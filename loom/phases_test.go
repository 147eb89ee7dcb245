package loom_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
)

// TestFixedStepsFollowScaledTime checks how many fixed steps each frame runs:
// one per whole step of scaled time, the remainder carried over, none while
// the time scale is 0, and at most a third of a second's worth after a stall.
func TestFixedStepsFollowScaledTime(t *testing.T) {
	const dt = 20 * time.Millisecond
	var steps []time.Duration
	l := loom.New(loom.ManualClock(), loom.WithFixedStep(dt, func(d time.Duration) { steps = append(steps, d) }))
	lastFrame := observeFrames(l)
	defer l.Close()
	for _, c := range []struct {
		name  string
		scale float64
		delta time.Duration
		want  int
	}{
		{"a 50ms frame", 1, 50 * time.Millisecond, 2},   // 10ms left
		{"a 10ms frame", 1, 10 * time.Millisecond, 1},   // 0 left
		{"a 15ms frame", 1, 15 * time.Millisecond, 0},   // 15 left
		{"paused", 0, time.Second, 0},                   // 15 left
		{"double speed", 2, 25 * time.Millisecond, 3},   // 65ms: 5 left
		{"a stall of 10s", 1, 10 * time.Second, 16},     // 5ms + 333.3ms: 16 steps
		{"back to normal", 1, 20 * time.Millisecond, 1}, // 18.3 + 20
		{"half speed", 0.5, 40 * time.Millisecond, 1},   // 18.3 + 20 - 20
		{"a frame of no time", 1, 0, 0},                 // 18.3
		{"just enough", 1, 1700 * time.Microsecond, 1},  // 20.0
	} {
		l.SetTimeScale(c.scale)
		steps = steps[:0]
		l.UpdateDelta(c.delta)
		if len(steps) != c.want || lastFrame().FixedSteps != c.want {
			t.Errorf("%s: %d steps (FixedSteps %d); want %d", c.name, len(steps), lastFrame().FixedSteps, c.want)
		}
		for _, d := range steps {
			if d != dt {
				t.Errorf("%s: step given %v; want %v", c.name, d, dt)
			}
		}
	}
}

// TestWaitForFixedUpdateResumesAfterEachStep checks that a coroutine that
// waits for fixed updates in a loop resumes once per step, after the step
// function, several times in a frame that runs several steps; that one that
// yields it from a frame's update resumes in a later frame's first step; and
// that the steps come before the frame's posted actions.
func TestWaitForFixedUpdateResumesAfterEachStep(t *testing.T) {
	const dt = 10 * time.Millisecond
	var log []string
	step := 0
	var l *loom.Loom
	l = loom.New(loom.ManualClock(), loom.WithFixedStep(dt, func(time.Duration) {
		step++
		log = append(log, fmt.Sprintf("%d:step %d", l.Frame(), step))
	}))
	defer l.Close()
	note := func(s string) { log = append(log, fmt.Sprintf("%d:%s", l.Frame(), s)) }
	l.Post(func() {
		l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			for i := range 4 {
				if !yield(loom.WaitForFixedUpdate()) {
					return
				}
				note(fmt.Sprintf("physics %d after step %d", i, step))
			}
		})
	})
	l.UpdateDelta(5 * time.Millisecond) // frame 1: no step; the coroutine starts
	l.Post(func() { note("action") })
	l.UpdateDelta(25 * time.Millisecond) // frame 2: 30ms, three steps
	l.UpdateDelta(10 * time.Millisecond) // frame 3: one step
	want := []string{
		"2:step 1", "2:physics 0 after step 1",
		"2:step 2", "2:physics 1 after step 2",
		"2:step 3", "2:physics 2 after step 3",
		"2:action",
		"3:step 4", "3:physics 3 after step 4",
	}
	if strings.Join(log, "\n") != strings.Join(want, "\n") {
		t.Errorf("log:\n  %s\nwant:\n  %s", strings.Join(log, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestWaitForFixedUpdateWithoutSteps checks that the wait cannot hang in
// silence: on a loom without fixed steps, or once the steps are removed, it
// ends its coroutine with a *PanicError that names WithFixedStep, with the
// stack of the frame that found the wait, given to the panic handler, and
// the other coroutines go on.
func TestWaitForFixedUpdateWithoutSteps(t *testing.T) {
	l, panics := testLoom(t)
	deferred := false
	c := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		defer func() { deferred = true }()
		yield(loom.WaitForFixedUpdate())
	})
	other := l.StartCoroutine(func(yield func(loom.Instruction) bool) { yield(loom.NextFrame()) })
	update(t, l)
	update(t, l) // other resumes, and ends
	var pe *loom.PanicError
	if !c.IsDone() || !errors.As(c.Err(), &pe) || !strings.Contains(fmt.Sprint(pe.Value), "WithFixedStep") {
		t.Fatalf("the waiting coroutine: done %v, Err %v; want a *PanicError naming WithFixedStep", c.IsDone(), c.Err())
	}
	if !strings.Contains(string(pe.Stack), "loom.(*Loom).Update") {
		t.Errorf("the error's stack does not show the frame that found the wait:\n%s", pe.Stack)
	}
	if got := panics.Take(); !deferred || len(got) != 1 || got[0] != pe {
		t.Errorf("defers ran %v, %d panics reported; want the defers run and the error reported once", deferred, len(got))
	}
	if !other.IsDone() || other.Err() != nil {
		t.Errorf("the other coroutine: done %v, Err %v; want it ended normally", other.IsDone(), other.Err())
	}

	// Steps removed while a coroutine waits for one.
	l.Configure(loom.WithFixedStep(time.Hour, nil))
	update(t, l)
	c = l.StartCoroutine(func(yield func(loom.Instruction) bool) { yield(loom.WaitForFixedUpdate()) })
	l.Configure(loom.WithFixedStep(0, nil))
	update(t, l)
	if !c.IsDone() || !errors.As(c.Err(), &pe) || panics.Len() != 1 {
		t.Errorf("after the steps were removed: done %v, Err %v, %d panics; want it ended with a *PanicError, reported", c.IsDone(), c.Err(), panics.Len())
	}
}

// TestEndOfFrame checks the end phase: EndFrame resumes, in yield order, the
// coroutines that yielded WaitForEndOfFrame during the frame, after the
// loop's rendering; a second EndFrame does nothing; one that yields it again
// from the end phase resumes in the next frame's; and without EndFrame the
// end phase runs as the next Update begins, before its fixed steps and
// actions.
func TestEndOfFrame(t *testing.T) {
	var log []string
	var l *loom.Loom
	l = loom.New(loom.ManualClock(), loom.WithFixedStep(time.Millisecond, func(time.Duration) {
		log = append(log, fmt.Sprintf("%d:step", l.Frame()))
	}))
	defer l.Close()
	note := func(s string) { log = append(log, fmt.Sprintf("%d:%s", l.Frame(), s)) }
	for _, name := range []string{"a", "b"} {
		l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			for yield(loom.NextFrame()) {
				note(name + " update")
				if !yield(loom.WaitForEndOfFrame()) {
					return
				}
				note(name + " end")
			}
		})
	}
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		yield(loom.NextFrame())
		yield(loom.WaitForEndOfFrame())
		note("c end")
		yield(loom.WaitForEndOfFrame())
		note("c end again")
	})

	l.UpdateDelta(time.Millisecond) // frame 1: the coroutines begin
	l.EndFrame()
	l.UpdateDelta(time.Millisecond)
	note("render")
	l.EndFrame()
	l.EndFrame() // nothing left for frame 2
	l.Post(func() { note("action") })
	l.UpdateDelta(time.Millisecond) // frame 3; the loop skips EndFrame
	note("render")
	l.UpdateDelta(time.Millisecond) // frame 3's end phase first
	want := []string{
		"1:step",
		"2:step", "2:a update", "2:b update",
		"2:render", "2:a end", "2:b end", "2:c end",
		"3:step", "3:action", "3:a update", "3:b update",
		"3:render",
		"3:c end again", "3:a end", "3:b end", // as frame 4 begins, in yield order
		"4:step", "4:a update", "4:b update",
	}
	if strings.Join(log, "\n") != strings.Join(want, "\n") {
		t.Errorf("log:\n  %s\nwant:\n  %s", strings.Join(log, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestEndFrameMisuse checks that EndFrame is a loop call, outside a frame, as
// Update is, and does nothing once the loom is closed.
func TestEndFrameMisuse(t *testing.T) {
	l := loom.New(loom.ManualClock())
	var inside string
	l.Post(func() { inside = testkit.PanicMessage(l.EndFrame) })
	l.UpdateDelta(0)
	if inside != "loom: EndFrame called while a frame runs: from inside the frame, or from two goroutines at once" {
		t.Errorf("EndFrame inside a frame panicked with %q", inside)
	}
	c := l.StartCoroutine(func(yield func(loom.Instruction) bool) { yield(loom.WaitForEndOfFrame()) })
	l.UpdateDelta(0)
	l.Close()
	l.EndFrame()
	if !errors.Is(c.Err(), loom.ErrClosed) {
		t.Errorf("a coroutine waiting for the end of the frame when the loom closed: Err %v; want ErrClosed", c.Err())
	}
}

// TestFixedStepPanics checks that a panicking step function goes to the
// panic handler and the frame goes on with the next step.
func TestFixedStepPanics(t *testing.T) {
	n := 0
	l, panics := testLoom(t, loom.WithFixedStep(time.Millisecond, func(time.Duration) {
		n++
		panic("boom in a step")
	}))
	l.UpdateDelta(3 * time.Millisecond)
	if n != 3 || panics.Len() != 3 {
		t.Errorf("%d steps, %d panics; want 3 and 3", n, panics.Len())
	}
}

// TestPhasesAllocateNothing checks that a steady frame with fixed steps and
// coroutines that wait for each step and for the end of each frame allocates
// nothing.
func TestPhasesAllocateNothing(t *testing.T) {
	steps := 0
	l := loom.New(loom.ManualClock(), loom.WithFixedStep(time.Millisecond, func(time.Duration) { steps++ }))
	defer l.Close()
	resumes := 0
	for _, in := range []loom.Instruction{loom.WaitForFixedUpdate(), loom.WaitForEndOfFrame()} {
		l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			for yield(in) {
				resumes++
			}
		})
	}
	frame := func() {
		l.UpdateDelta(2 * time.Millisecond)
		l.EndFrame()
	}
	for range 10 { // let the lists grow to their size
		frame()
	}
	steps, resumes = 0, 0
	if a := testing.AllocsPerRun(100, frame); a != 0 {
		t.Errorf("a frame with two fixed steps and an end phase allocates %v times; want 0", a)
	}
	if steps != 2*101 || resumes != 3*101 {
		t.Errorf("%d steps and %d resumes in 101 frames; want %d and %d", steps, resumes, 2*101, 3*101)
	}
}

// TestPhasesModel drives a loom with random frame times, time scales, calls
// of EndFrame or not, and coroutines that start and stop, and checks the
// phases against a model: each frame runs the steps that the accumulated
// scaled time pays for; a coroutine waiting for fixed updates resumes after
// every step, one step after its yield, never twice for one; one waiting for
// the end of the frame resumes in the end phase of its yield's frame, before
// the next frame's steps.
func TestPhasesModel(t *testing.T) {
	t.Parallel() // long, and shares nothing with the other tests: it runs beside them
	for seed := range uint64(200) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			phasesModel(t, seed)
		})
	}
}

// phasesModel is one run of TestPhasesModel, its random choices drawn from
// seed.
func phasesModel(t *testing.T, seed uint64) {
	const dt = 7 * time.Millisecond
	rng := rand.New(rand.NewPCG(seed, 11))
	steps := 0
	var observed loom.FrameStats // the last frame whose update ended
	l := loom.New(loom.ManualClock(),
		loom.WithFixedStep(dt, func(time.Duration) { steps++ }),
		loom.WithFrameObserver(func(fs loom.FrameStats) { observed = fs }))
	defer l.Close()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d, frame %d: %s", seed, l.Frame(), fmt.Sprintf(format, args...))
	}
	// A coroutine body must not end the loom's goroutine (t.Fatalf calls
	// runtime.Goexit): a coroutine that sees the model broken records it
	// and returns, and the test fails once the loop call returns.
	broken := ""
	broke := func(format string, args ...any) {
		if broken == "" {
			broken = fmt.Sprintf("frame %d: %s", l.Frame(), fmt.Sprintf(format, args...))
		}
	}
	check := func() {
		t.Helper()
		if broken != "" {
			t.Fatalf("seed %d, %s", seed, broken)
		}
	}
	var acc int64
	var live []*loom.Coroutine
	resumedAtEnd := 0
	for range 200 {
		switch rng.IntN(4) {
		case 0: // a coroutine that waits for every step
			live = append(live, l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				for {
					at := steps
					if !yield(loom.WaitForFixedUpdate()) {
						return
					}
					if steps != at+1 {
						broke("a fixed-update wait yielded after step %d resumed after step %d", at, steps)
						return
					}
				}
			}))
		case 1: // a coroutine that waits for the end of every frame
			live = append(live, l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				for yield(loom.NextFrame()) {
					f := l.Frame()
					if !yield(loom.WaitForEndOfFrame()) {
						return
					}
					// After frame f's update, before frame f+1's clock moves.
					if l.Frame() != f || observed.Frame != f {
						broke("an end-of-frame wait of frame %d resumed in frame %d, after the update of frame %d", f, l.Frame(), observed.Frame)
						return
					}
					resumedAtEnd++
				}
			}))
		case 2:
			if len(live) > 0 {
				i := rng.IntN(len(live))
				live[i].Stop()
				live = slices.Delete(live, i, i+1)
			}
		}
		scale := []float64{0, 0.5, 1, 1, 2}[rng.IntN(5)]
		l.SetTimeScale(scale)
		delta := time.Duration(rng.Int64N(int64(40 * time.Millisecond)))
		if rng.IntN(50) == 0 {
			delta = 2 * time.Second // a stall
		}
		before := steps
		l.UpdateDelta(delta)
		check()
		acc += min(int64(float64(delta)*scale), int64(time.Second/3))
		want := int(acc / int64(dt))
		acc %= int64(dt)
		if got := steps - before; got != want || observed.FixedSteps != want {
			fail("%d steps (FixedSteps %d); the model wants %d", got, observed.FixedSteps, want)
		}
		if rng.IntN(2) == 0 { // else the end phase runs as the next Update begins
			l.EndFrame()
			check()
		}
	}
	if resumedAtEnd == 0 {
		t.Errorf("seed %d: no end-of-frame wait resumed: the model checked nothing", seed)
	}
}
