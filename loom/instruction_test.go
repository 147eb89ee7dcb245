package loom_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// TestInstructionTable checks each row of Instruction's table frame by
// frame. Each coroutine starts in an action of frame 1.
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
		{"WaitForSeconds across a pause", loom.WaitForSeconds(200 * time.Millisecond),
			// Paused from frame 2 until a delayed action of frame 4 sets the
			// scale back, from frame 5 on: scaled time is 100ms from frame 1
			// to frame 4, then 200ms, then 300ms at frame 6.
			func(l *loom.Loom) {
				l.SetTimeScale(0)
				l.PostAfter(250*time.Millisecond, func() { l.SetTimeScale(1) })
			}, 8, []string{"1:before", "6:after"}},
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
			l, _ := testLoom(t)
			r := &recorder{l: l}
			l.Post(func() {
				if c.setup != nil {
					c.setup(l)
				}
				l.StartCoroutine(func(yield func(loom.Instruction) bool) {
					r.add("before")
					if yield(c.in) {
						r.add("after")
					}
				})
			})
			frames(l, c.frames, dt)
			r.expect(t, c.name, c.want...)
		})
	}
}

// TestWaitForCoroutine: a coroutine waiting for another of its loom
// (Unity's yield return StartCoroutine(...)) begins it at once if it has
// not begun, and resumes in the pass in which it ends, right after it, so
// that nesting costs no frame at any depth; one that waits for a coroutine
// that had ended, or that ends in the pass of the yield, resumes in the
// next frame.
func TestWaitForCoroutine(t *testing.T) {
	l, _ := testLoom(t)
	r := &recorder{l: l}
	inner := func(yield func(loom.Instruction) bool) {
		r.add("inner begins")
		for i := range 3 {
			if !yield(loom.WaitForFrames(2)) {
				return
			}
			r.add(fmt.Sprint("inner ", i))
		}
	}
	var middle *loom.Coroutine
	l.Post(func() {
		l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			r.add("outer")
			middle = l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				r.add("middle begins")
				if yield(loom.WaitFor(l.StartCoroutine(inner))) {
					r.add("middle ends")
				}
			})
			if !yield(loom.WaitFor(middle)) {
				return
			}
			r.add("outer after middle")
			child := l.StartCoroutine(func(yield func(loom.Instruction) bool) {})
			if !yield(loom.WaitFor(child)) { // begins and ends in this pass: next frame
				return
			}
			r.add("outer after a child that ended at once")
			if yield(loom.WaitFor(middle)) { // ended before: next frame
				r.add("outer after middle again")
			}
		})
	})
	frames(l, 10, time.Millisecond)
	r.expect(t, "10 frames", "1:outer", "1:middle begins", "1:inner begins", "3:inner 0", "5:inner 1", "7:inner 2",
		"7:middle ends", "7:outer after middle", "8:outer after a child that ended at once", "9:outer after middle again")
}

// TestWaitForPollsIsDone: WaitFor on a Waitable that has IsDone, other than
// a coroutine or task of the same loom, polls IsDone once a frame and
// never calls Done.
func TestWaitForPollsIsDone(t *testing.T) {
	l, _ := testLoom(t)
	w := &isDoneWaitable{}
	var at int64
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		if yield(loom.WaitFor(w)) {
			at = l.Frame()
		}
	})
	frames(l, 3, time.Millisecond)
	w.done = true
	frames(l, 2, time.Millisecond)
	if at != 4 || w.polls != 3 {
		t.Errorf("resumed in frame %d after %d polls of IsDone; want frame 4, 3 polls (frames 2 to 4)", at, w.polls)
	}
}

// isDoneWaitable is a Waitable with IsDone whose Done must not be called.
type isDoneWaitable struct {
	done  bool
	polls int
}

func (w *isDoneWaitable) Done() <-chan struct{} { panic("Done called on a Waitable with IsDone") }
func (w *isDoneWaitable) IsDone() bool          { w.polls++; return w.done }

// TestYieldAllocatesNothing checks that yielding any built-in instruction
// costs no allocation.
func TestYieldAllocatesNothing(t *testing.T) {
	done := make(chan struct{})
	w := waitable(done)
	close(done)
	keep := &keepWaiter{}
	cond := func() bool { return true }
	for _, in := range []loom.Instruction{
		loom.NextFrame(), loom.WaitForSeconds(time.Millisecond), loom.WaitForSecondsRealtime(time.Millisecond),
		loom.WaitForFrames(2), loom.WaitUntil(cond), loom.WaitWhile(func() bool { return false }),
		loom.WaitCustom(keep), loom.WaitFor(w),
	} {
		l, _ := testLoom(t)
		l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			for yield(in) {
			}
		})
		frames(l, 3, time.Millisecond)
		if allocs := testing.AllocsPerRun(100, func() { l.UpdateDelta(time.Millisecond) }); allocs != 0 {
			t.Errorf("a frame resuming a coroutine that yields %v allocates %v times; want 0", in, allocs)
		}
	}
}

// TestInstructionMisuse: an instruction made of nil, which could never
// end, panics, naming the call.
func TestInstructionMisuse(t *testing.T) {
	checkMisuse(t,
		misuse{func() { loom.WaitUntil(nil) }, "loom: WaitUntil(nil)"},
		misuse{func() { loom.WaitWhile(nil) }, "loom: WaitWhile(nil)"},
		misuse{func() { loom.WaitFor(nil) }, "loom: WaitFor(nil)"},
		misuse{func() { loom.WaitCustom(nil) }, "loom: WaitCustom(nil)"},
		misuse{func() { var c *loom.Coroutine; loom.WaitFor(c) }, "loom: WaitFor with a nil *loom.Coroutine"},
		misuse{func() { var t *loom.Task[int]; loom.WaitFor(t) }, "loom: WaitFor with a nil *loom.Task[int]"},
	)
}
