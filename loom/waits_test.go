package loom_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// TestCoroutinePassOrder: the coroutine pass resumes the coroutines whose
// wait is over in a fixed order: those waiting for the next frame, in the
// order they yielded; for a frame count, scaled time and real time, each in
// due order (in yield order among equals); then those whose polled wait is
// over, in the order they yielded. A coroutine resumes at most once in a
// pass, even if it yields a wait that is over at once.
func TestCoroutinePassOrder(t *testing.T) {
	l, _ := testLoom(t)
	r := &recorder{l: l}
	fromFrame3 := func() bool { return l.Frame() >= 3 }
	waits := []struct {
		name string
		in   []loom.Instruction // the waits it yields in turn; the last ends in frame 3
	}{
		{"polled 1", []loom.Instruction{loom.WaitUntil(fromFrame3)}},
		{"real 2ms", []loom.Instruction{loom.WaitForSecondsRealtime(2 * time.Millisecond)}},
		{"scaled 2ms", []loom.Instruction{loom.WaitForSeconds(2 * time.Millisecond)}},
		{"frames 1", []loom.Instruction{loom.WaitForFrames(2)}},
		{"next 1", []loom.Instruction{loom.NextFrame(), loom.NextFrame()}},
		{"polled 2", []loom.Instruction{loom.WaitWhile(func() bool { return !fromFrame3() })}},
		{"real 1.5ms", []loom.Instruction{loom.WaitForSecondsRealtime(1500 * time.Microsecond)}},
		{"scaled 1.5ms", []loom.Instruction{loom.WaitForSeconds(1500 * time.Microsecond)}},
		{"frames 2", []loom.Instruction{loom.WaitForFrames(2)}},
		{"next 2", []loom.Instruction{loom.NextFrame(), loom.NextFrame()}},
	}
	l.Post(func() {
		for _, w := range waits {
			l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				for _, in := range w.in {
					if !yield(in) {
						return
					}
				}
				r.add(w.name)
				if yield(loom.WaitUntil(func() bool { return true })) {
					r.add(w.name + " again")
				}
			})
		}
	})
	frames(l, 3, time.Millisecond)
	r.expect(t, "frame 3", "3:next 1", "3:next 2", "3:frames 1", "3:frames 2", "3:scaled 1.5ms", "3:scaled 2ms",
		"3:real 1.5ms", "3:real 2ms", "3:polled 1", "3:polled 2")
	update(t, l)
	r.expect(t, "frame 4, in the order of their yields in frame 3", "4:next 1 again", "4:next 2 again", "4:frames 1 again",
		"4:frames 2 again", "4:scaled 1.5ms again", "4:scaled 2ms again", "4:real 1.5ms again", "4:real 2ms again",
		"4:polled 1 again", "4:polled 2 again")
}

// panickyIsDone is a Waitable whose IsDone panics.
type panickyIsDone struct{}

func (panickyIsDone) Done() <-chan struct{} { return nil }
func (panickyIsDone) IsDone() bool          { panic("boom in IsDone") }

// TestPolledOncePerFrameFromNextFrame counts the calls of a WaitUntil
// condition: none in the frame of the yield, then one per frame.
func TestPolledOncePerFrameFromNextFrame(t *testing.T) {
	l, _ := testLoom(t)
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

// TestPanickingWaitEndsOnlyItsCoroutine: every function of the program
// that a wait calls may panic (a predicate, KeepWaiting, a Waitable's Done
// or IsDone, a member's Done in WaitAll and WaitAny): the panic goes to the
// handler with its stack, ends only the coroutine that waited (its Err is
// the panic, its defers run), and every other coroutine, polled in the same
// frame or not, goes on exactly as it would have.
func TestPanickingWaitEndsOnlyItsCoroutine(t *testing.T) {
	waits := map[string]func() loom.Instruction{
		"WaitUntil":       func() loom.Instruction { return loom.WaitUntil(func() bool { panic("boom in WaitUntil") }) },
		"WaitWhile":       func() loom.Instruction { return loom.WaitWhile(func() bool { panic("boom in WaitWhile") }) },
		"WaitCustom":      func() loom.Instruction { return loom.WaitCustom(panickyWaiter{}) },
		"WaitFor":         func() loom.Instruction { return loom.WaitFor(panickyWaitable{}) },
		"WaitFor, IsDone": func() loom.Instruction { return loom.WaitFor(panickyIsDone{}) },
		"WaitAll":         func() loom.Instruction { return loom.WaitAll(make(waitable), panickyWaitable{}) },
		"WaitAny":         func() loom.Instruction { return loom.WaitAny(make(waitable), panickyWaitable{}) },
	}
	for name, wait := range waits {
		t.Run(name, func(t *testing.T) {
			l, panics := testLoom(t)
			ready := false
			var before, after, deferred bool
			var afterFrame int64
			// A polled coroutine yielded before the panicking one, and one after.
			l.StartCoroutine(func(y func(loom.Instruction) bool) {
				if y(loom.WaitUntil(func() bool { return ready })) {
					before = true
				}
			})
			bad := l.StartCoroutine(func(y func(loom.Instruction) bool) {
				defer func() { deferred = true }()
				for y(wait()) {
				}
			})
			l.StartCoroutine(func(y func(loom.Instruction) bool) {
				if y(loom.WaitUntil(func() bool { return ready })) {
					after, afterFrame = true, l.Frame()
				}
			})
			update(t, l)
			update(t, l)
			ready = true
			update(t, l)
			if !before || !after {
				t.Fatalf("the other coroutines resumed: before %v, after %v; want both", before, after)
			}
			if afterFrame != 3 {
				t.Errorf("the coroutine after resumed in frame %d, want 3", afterFrame)
			}
			if !bad.IsDone() || !deferred {
				t.Fatalf("the coroutine whose wait panicked: done %v, defers ran %v; want both", bad.IsDone(), deferred)
			}
			var pe *loom.PanicError
			if !errors.As(bad.Err(), &pe) || !strings.Contains(pe.Error(), "boom") {
				t.Errorf("Err() = %v, want the panic", bad.Err())
			}
			if got := panics.Take(); len(got) != 1 || !strings.Contains(string(got[0].Stack), "waits_test.go") {
				t.Errorf("handler got %d panics (want 1, with the stack of the panic)", len(got))
			}
		})
	}
}

// TestPostBeforeDoneRunsBeforeResume: a function posted to the loom before a
// Waitable is done runs before a coroutine waiting for it resumes, even when
// the Waitable becomes done in the middle of a frame, after the frame's
// actions and before its coroutine pass: the shape of a worker that posts
// its result and then returns. Posts made later do not hold the coroutine
// back, so that a loom under a steady stream of posts still resumes it.
func TestPostBeforeDoneRunsBeforeResume(t *testing.T) {
	for _, c := range []struct {
		name string
		wait func(w loom.Waitable) loom.Instruction
	}{
		{"WaitFor", loom.WaitFor},
		{"WaitAll", func(w loom.Waitable) loom.Instruction { return loom.WaitAll(w) }},
		{"WaitAny", func(w loom.Waitable) loom.Instruction { return loom.WaitAny(w, newFuture()) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, _ := testLoom(t)
			w := newFuture()
			applied, resumedIn := false, int64(0)
			var sawApplied bool
			l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				if yield(c.wait(w)) {
					resumedIn, sawApplied = l.Frame(), applied
				}
			})
			// A stream of posts, one per frame, that never ends.
			var again func()
			again = func() { l.Post(again) }
			l.Post(again)
			l.UpdateDelta(time.Millisecond) // frame 1: the coroutine begins and waits
			l.Post(func() {
				l.Post(func() { applied = true }) // the result, posted first
				w.end(nil)                        // then the handle is done
			})
			for range 4 {
				l.UpdateDelta(time.Millisecond)
			}
			if !sawApplied || resumedIn != 3 {
				t.Errorf("the coroutine resumed in frame %d, having seen the result applied: %v; want frame 3, true", resumedIn, sawApplied)
			}
		})
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
	l, _ := testLoom(t)
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
}

// BenchmarkCoroutineTimedWaits measures a frame with 100,000 coroutines
// parked on timed waits of which about 1,000 are due: parked coroutines cost
// nothing per frame.
func BenchmarkCoroutineTimedWaits(b *testing.B) {
	const n, spread = 100_000, 100 // due over 100 frames of 1ms: ~1,000 a frame
	b.ReportAllocs()
	l := loom.New(loom.ManualClock())
	r := rand.New(rand.NewPCG(2, 2))
	for range n {
		first := time.Duration(r.IntN(spread)+1) * time.Millisecond
		l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			if !yield(loom.WaitForSeconds(first)) {
				return
			}
			for yield(loom.WaitForSeconds(spread * time.Millisecond)) {
			}
		})
	}
	for b.Loop() {
		l.UpdateDelta(time.Millisecond)
	}
	b.ReportMetric(n/spread, "due/frame")
	l.Close()
}
