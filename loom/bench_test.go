package loom_test

import (
	"context"
	"iter"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// BenchmarkCoroutineResume measures a frame of many coroutines that yield
// every frame, per coroutine, against the floor: a bare iter.Pull next() on
// as many iterators, in the same run.
func BenchmarkCoroutineResume(b *testing.B) {
	const n = 10_000
	b.Run("impl=loom/coroutines=10000", func(b *testing.B) {
		b.ReportAllocs()
		l := loom.New(loom.ManualClock())
		for range n {
			l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				for yield(loom.NextFrame()) {
				}
			})
		}
		for b.Loop() {
			l.UpdateDelta(time.Millisecond)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/coroutine")
		l.Close()
	})
	b.Run("impl=iterpull/coroutines=10000", func(b *testing.B) {
		b.ReportAllocs()
		nexts := make([]func() (loom.Instruction, bool), n)
		stops := make([]func(), n)
		for i := range nexts {
			nexts[i], stops[i] = iter.Pull(func(yield func(loom.Instruction) bool) {
				for yield(loom.NextFrame()) {
				}
			})
		}
		for b.Loop() {
			for _, next := range nexts {
				next()
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/coroutine")
		for _, stop := range stops {
			stop()
		}
	})
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

// BenchmarkCoroutineContexts measures what coroutines bound to contexts
// cost a frame in which they do not resume, since each pass looks at each
// context they are bound to: 10,000 coroutines parked on a long wait, bound
// to no context, to one context shared by all, or each to its own.
// ns/coroutine is the frame's cost divided among them.
func BenchmarkCoroutineContexts(b *testing.B) {
	const n = 10_000
	for _, bound := range []string{"none", "shared", "each"} {
		b.Run("contexts="+bound, func(b *testing.B) {
			b.ReportAllocs()
			l := loom.New(loom.ManualClock())
			shared := b.Context()
			body := func(yield func(loom.Instruction) bool) {
				for yield(loom.WaitForSeconds(time.Hour)) {
				}
			}
			for range n {
				switch bound {
				case "none":
					l.StartCoroutine(body)
				case "shared":
					l.StartCoroutineContext(shared, body)
				case "each":
					ctx, cancel := context.WithCancel(shared)
					defer cancel()
					l.StartCoroutineContext(ctx, body)
				}
			}
			l.UpdateDelta(time.Millisecond)
			for b.Loop() {
				l.UpdateDelta(time.Millisecond)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/coroutine")
			l.Close()
		})
	}
}

// BenchmarkCoroutineStartStop measures the life of a coroutine: started on
// the loop, run to its first yield, stopped.
func BenchmarkCoroutineStartStop(b *testing.B) {
	b.ReportAllocs()
	l := loom.New(loom.ManualClock())
	body := func(yield func(loom.Instruction) bool) {
		for yield(loom.NextFrame()) {
		}
	}
	for b.Loop() {
		l.StartCoroutine(body).Stop()
	}
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
