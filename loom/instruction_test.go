package loom_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
)

// trace records what coroutines did, each entry prefixed with the frame.
type trace struct {
	l   *loom.Loom
	got []string
}

func (tr *trace) add(s string) { tr.got = append(tr.got, fmt.Sprintf("%d:%s", tr.l.Frame(), s)) }

func (tr *trace) expect(t *testing.T, want ...string) {
	t.Helper()
	if !slices.Equal(tr.got, want) {
		t.Errorf("trace:\n  got  %v\n  want %v", tr.got, want)
	}
	tr.got = nil
}

// waitsEach returns a coroutine body that records, then yields in, then
// records again.
func waitsEach(tr *trace, in loom.Instruction) func(func(loom.Instruction) bool) {
	return func(yield func(loom.Instruction) bool) {
		tr.add("before")
		if !yield(in) {
			return
		}
		tr.add("after")
	}
}

// TestInstructionTable checks each row of the package documentation's table
// frame by frame. Each coroutine starts in an action of frame 1.
func TestInstructionTable(t *testing.T) {
	const dt = 100 * time.Millisecond
	cond := false
	keep := &keepWaiter{n: 2}
	done := make(chan struct{})
	cases := []struct {
		name   string
		in     loom.Instruction
		setup  func(l *loom.Loom) // runs in frame 1's action, before the start
		frames int
		want   []string
	}{
		{"NextFrame", loom.NextFrame(), nil, 3, []string{"1:before", "2:after"}},
		{"zero Instruction", loom.Instruction{}, nil, 3, []string{"1:before", "2:after"}},
		{"WaitForSeconds", loom.WaitForSeconds(250 * time.Millisecond), nil, 5, []string{"1:before", "4:after"}},
		{"WaitForSeconds(0)", loom.WaitForSeconds(0), nil, 3, []string{"1:before", "2:after"}},
		{"WaitForSeconds(-1s)", loom.WaitForSeconds(-time.Second), nil, 3, []string{"1:before", "2:after"}},
		{"WaitForSeconds at half speed", loom.WaitForSeconds(200 * time.Millisecond),
			// Frame 1 ran at full speed (100ms); then 50ms of scaled time a frame.
			func(l *loom.Loom) { l.SetTimeScale(0.5) }, 7, []string{"1:before", "5:after"}},
		{"WaitForSeconds paused", loom.WaitForSeconds(time.Millisecond),
			func(l *loom.Loom) { l.SetTimeScale(0) }, 6, []string{"1:before"}},
		{"WaitForSecondsRealtime paused", loom.WaitForSecondsRealtime(200 * time.Millisecond),
			func(l *loom.Loom) { l.SetTimeScale(0) }, 5, []string{"1:before", "3:after"}},
		{"WaitForFrames(3)", loom.WaitForFrames(3), nil, 6, []string{"1:before", "4:after"}},
		{"WaitForFrames(1)", loom.WaitForFrames(1), nil, 3, []string{"1:before", "2:after"}},
		{"WaitForFrames(0)", loom.WaitForFrames(0), nil, 3, []string{"1:before", "2:after"}},
		{"WaitUntil true at once", loom.WaitUntil(func() bool { return true }), nil, 3, []string{"1:before", "2:after"}},
		{"WaitUntil", loom.WaitUntil(func() bool { return cond }),
			func(l *loom.Loom) { l.PostAfter(250*time.Millisecond, func() { cond = true }) }, 6, []string{"1:before", "4:after"}},
		{"WaitWhile", loom.WaitWhile(func() bool { return !cond }),
			func(l *loom.Loom) { l.PostAfter(250*time.Millisecond, func() { cond = true }) }, 6, []string{"1:before", "4:after"}},
		{"WaitCustom", loom.WaitCustom(keep), nil, 6, []string{"1:before", "4:after"}},
		{"WaitFor a channel", loom.WaitFor(waitable(done)),
			func(l *loom.Loom) { l.PostAfter(250*time.Millisecond, func() { close(done) }) }, 6, []string{"1:before", "4:after"}},
		// Steps of 250ms, configured in frame 1 and so in force from frame
		// 2: the accumulator holds 100ms after frame 2, 200ms after frame 3,
		// and frame 4 runs the first step.
		{"WaitForFixedUpdate", loom.WaitForFixedUpdate(),
			func(l *loom.Loom) { l.Configure(loom.WithFixedStep(250*time.Millisecond, nil)) }, 6, []string{"1:before", "4:after"}},
		// The loop never calls EndFrame: frame 1's end phase runs as frame 2
		// begins, before its clock moves.
		{"WaitForEndOfFrame", loom.WaitForEndOfFrame(), nil, 3, []string{"1:before", "1:after"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cond = false
			keep.n = 2
			l := loom.New(loom.ManualClock())
			tr := &trace{l: l}
			l.Post(func() {
				if c.setup != nil {
					c.setup(l)
				}
				l.StartCoroutine(waitsEach(tr, c.in))
			})
			frames(l, c.frames, dt)
			tr.expect(t, c.want...)
			l.Close()
		})
	}
}

// TestPolledOncePerFrameFromNextFrame counts the calls of a WaitUntil
// condition: none in the frame of the yield, then one per frame.
func TestPolledOncePerFrameFromNextFrame(t *testing.T) {
	l := loom.New(loom.ManualClock())
	calls := 0
	var frameOfCalls []int64
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		yield(loom.WaitUntil(func() bool {
			calls++
			frameOfCalls = append(frameOfCalls, l.Frame())
			return calls == 3
		}))
	})
	frames(l, 5, time.Millisecond)
	// With no owner yet, the coroutine was queued and started in frame 1.
	if want := []int64{2, 3, 4}; !slices.Equal(frameOfCalls, want) {
		t.Errorf("condition polled in frames %v; want %v", frameOfCalls, want)
	}
}

// TestWaitForCoroutine is seed 000's nesting, frame by frame: the parent
// resumes in the same pass in which the child ends.
func TestWaitForCoroutine(t *testing.T) {
	l := loom.New(loom.ManualClock())
	tr := &trace{l: l}
	inner := func(yield func(loom.Instruction) bool) {
		for i := range 3 {
			if !yield(loom.WaitForFrames(2)) {
				return
			}
			tr.add(fmt.Sprint("inner ", i))
		}
	}
	l.Post(func() {
		l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			tr.add("outer")
			if !yield(loom.WaitFor(l.StartCoroutine(inner))) {
				return
			}
			tr.add("outer after inner")
			child := l.StartCoroutine(func(yield func(loom.Instruction) bool) {})
			if !yield(loom.WaitFor(child)) { // ended already: next frame
				return
			}
			tr.add("outer after the ended child")
		})
	})
	frames(l, 9, time.Millisecond)
	tr.expect(t, "1:outer", "3:inner 0", "5:inner 1", "7:inner 2", "7:outer after inner", "8:outer after the ended child")
}

// TestNestedWaitCostsNoFrame: three levels of coroutines waiting for each
// other all end in the frame the innermost ends.
func TestNestedWaitCostsNoFrame(t *testing.T) {
	l := loom.New(loom.ManualClock())
	tr := &trace{l: l}
	level := func(name string, child func(func(loom.Instruction) bool)) func(func(loom.Instruction) bool) {
		return func(yield func(loom.Instruction) bool) {
			if child != nil {
				yield(loom.WaitFor(l.StartCoroutine(child)))
			} else {
				yield(loom.WaitForFrames(3))
			}
			tr.add(name + " ends")
		}
	}
	l.StartCoroutine(level("outer", level("middle", level("inner", nil)))) // begins in frame 1
	frames(l, 5, time.Millisecond)
	tr.expect(t, "4:inner ends", "4:middle ends", "4:outer ends")
}

func TestInstructionPanics(t *testing.T) {
	for _, c := range []struct {
		f    func()
		want string
	}{
		{func() { loom.WaitUntil(nil) }, "loom: WaitUntil(nil)"},
		{func() { loom.WaitWhile(nil) }, "loom: WaitWhile(nil)"},
		{func() { loom.WaitFor(nil) }, "loom: WaitFor(nil)"},
		{func() { loom.WaitCustom(nil) }, "loom: WaitCustom(nil)"},
		{func() { loom.New().StartCoroutine(nil) }, "loom: StartCoroutine(nil)"},
		{func() { (*loom.Coroutine)(nil).Stop() }, "loom: Stop of a nil *Coroutine"},
		{func() { var c *loom.Coroutine; loom.WaitFor(c) }, "loom: WaitFor with a nil *loom.Coroutine"},
		{func() { var t *loom.Task[int]; loom.WaitAll(t) }, "loom: WaitAll with a nil *loom.Task[int] at index 0"},
		{func() { loom.FirstDone(nil) }, "loom: FirstDone with a nil member at index 0"},
		{func() { loom.Await(context.Background(), nil) }, "loom: Await with a nil member at index 0"},
		{func() { var l loom.Loom; l.Post(func() {}) }, "loom: use of a zero Loom; make one with New"},
		{func() { loom.StartTask[int](nil, func(func(loom.Instruction) bool) (int, error) { return 0, nil }) }, "loom: StartTask with a nil Loom or Scope"},
	} {
		if got := testkit.PanicMessage(c.f); got != c.want {
			t.Errorf("panicked with %q; want %q", got, c.want)
		}
	}
}

// TestTimedWaitsSaturate: a wait near math.MaxInt64 nanoseconds or frames,
// the natural "forever", waits: its due time is the end of the clock's
// range, not one wrapped round to the past.
func TestTimedWaitsSaturate(t *testing.T) {
	waits := map[string]loom.Instruction{
		"WaitForSeconds(MaxInt64)":             loom.WaitForSeconds(math.MaxInt64),
		"WaitForSeconds(MaxInt64-1ms)":         loom.WaitForSeconds(math.MaxInt64 - time.Millisecond),
		"WaitForSecondsRealtime(MaxInt64)":     loom.WaitForSecondsRealtime(math.MaxInt64),
		"WaitForSecondsRealtime(MaxInt64-1ms)": loom.WaitForSecondsRealtime(math.MaxInt64 - time.Millisecond),
		"WaitForFrames(MaxInt)":                loom.WaitForFrames(math.MaxInt),
		"WaitForFrames(MaxInt-1)":              loom.WaitForFrames(math.MaxInt - 1),
	}
	l := loom.New(loom.ManualClock())
	l.UpdateDelta(time.Millisecond) // time and frame count are past zero: now + d would wrap
	resumed := map[string]bool{}
	for name, in := range waits {
		l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			if yield(in) {
				resumed[name] = true
			}
		})
	}
	for range 3 {
		l.UpdateDelta(time.Hour)
	}
	for name := range waits {
		if resumed[name] {
			t.Errorf("%s resumed after 3 frames of an hour", name)
		}
	}
	if n := len(l.Coroutines()); n != len(waits) {
		t.Errorf("%d coroutines waiting; want %d", n, len(waits))
	}
	for _, scale := range []float64{1, 1e-300} {
		l.SetTimeScale(scale)
		if i := l.Idle(); !i.Timed || i.Delay < 100*365*24*time.Hour {
			t.Errorf("Idle() = %+v at a time scale of %g; want the waits due in about 292 years", i, scale)
		}
	}
	l.Close()
}
