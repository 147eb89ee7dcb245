package loom_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

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
		l := loom.New(loom.ManualClock())
		l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			for yield(in) {
			}
		})
		frames(l, 3, time.Millisecond)
		if allocs := testing.AllocsPerRun(100, func() { l.UpdateDelta(time.Millisecond) }); allocs != 0 {
			t.Errorf("a frame resuming a coroutine that yields %v allocates %v times; want 0", in, allocs)
		}
		l.Close()
	}
}

// BenchmarkWaitAllPending measures a frame in which a coroutine waits with
// WaitAll for 1,000 members of which none is done: the wait looks at the
// first pending member only.
func BenchmarkWaitAllPending(b *testing.B) {
	l := loom.New(loom.ManualClock())
	defer l.Close()
	ws := make([]loom.Waitable, 1000)
	for i := range ws {
		ws[i] = make(waitable)
	}
	l.StartCoroutine(func(y func(loom.Instruction) bool) { y(loom.WaitAll(ws...)) })
	l.UpdateDelta(time.Millisecond)
	b.ReportAllocs()
	for b.Loop() {
		l.UpdateDelta(time.Millisecond)
	}
}

// BenchmarkTaskAwait measures a coroutine that starts a typed coroutine and
// waits for its result, per round (a start, a yield, a resume, an end).
func BenchmarkTaskAwait(b *testing.B) {
	l := loom.New(loom.ManualClock())
	defer l.Close()
	b.ReportAllocs()
	l.StartCoroutine(func(y func(loom.Instruction) bool) {
		for {
			t := loom.StartTask(l, func(y func(loom.Instruction) bool) (int, error) {
				y(loom.NextFrame())
				return 1, nil
			})
			if !y(loom.WaitFor(t)) {
				return
			}
		}
	})
	for b.Loop() {
		l.UpdateDelta(time.Millisecond)
	}
}
