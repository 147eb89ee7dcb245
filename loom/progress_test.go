package loom_test

import (
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// maxProgress is the largest count and total that the docs of Progress
// promise.
const maxProgress = 1<<31 - 1

// TestProgressValues checks Load, Fraction and Finished through a life: no
// total, a total, counts up to it and past it, SetTotal keeping the count,
// a total of 0, the largest count.
func TestProgressValues(t *testing.T) {
	var p loom.Progress
	check := func(when string, done, total int, fraction float64, finished bool) {
		t.Helper()
		d, tot := p.Load()
		if d != done || tot != total || p.Fraction() != fraction || p.Finished() != finished {
			t.Errorf("%s: Load %d, %d, Fraction %v, Finished %v; want %d, %d, %v, %v",
				when, d, tot, p.Fraction(), p.Finished(), done, total, fraction, finished)
		}
	}
	check("zero", 0, -1, 0, false)
	p.Add(3)
	check("3 done, no total", 3, -1, 0, false)
	p.SetTotal(12)
	check("3 of 12", 3, 12, 0.25, false)
	p.Add(9)
	check("12 of 12", 12, 12, 1, true)
	p.Add(1)
	check("13 of 12", 13, 12, 1, true)
	p.SetTotal(26)
	check("13 of 26: SetTotal keeps the count", 13, 26, 0.5, false)
	var empty loom.Progress
	empty.SetTotal(0)
	if d, tot := empty.Load(); d != 0 || tot != 0 || empty.Fraction() != 1 || !empty.Finished() {
		t.Errorf("0 of 0: Load %d, %d, Fraction %v, Finished %v; want 0, 0, 1, true", d, tot, empty.Fraction(), empty.Finished())
	}
	var full loom.Progress
	full.SetTotal(maxProgress)
	full.Add(maxProgress)
	if d, tot := full.Load(); d != maxProgress || tot != maxProgress || full.Fraction() != 1 || !full.Finished() {
		t.Errorf("the largest: Load %d, %d, Fraction %v, Finished %v", d, tot, full.Fraction(), full.Finished())
	}
}

// TestProgressMisuse checks that out-of-range counts panic with a message
// naming the call and the value, and leave the Progress as it was.
func TestProgressMisuse(t *testing.T) {
	var p loom.Progress
	p.SetTotal(5)
	p.Add(maxProgress - 1)
	checkMisuse(t,
		misuse{func() { p.Add(-1) }, "loom: Progress.Add(-1): out of range [0, 1<<31 - 1]"},
		misuse{func() { p.Add(2) }, "loom: Progress.Add(2): the count would pass 1<<31 - 1"},
		misuse{func() { p.SetTotal(-2) }, "loom: Progress.SetTotal(-2): out of range [0, 1<<31 - 1]"},
		misuse{func() { p.SetTotal(maxProgress + 1) }, "loom: Progress.SetTotal(2147483648): out of range [0, 1<<31 - 1]"},
	)
	if d, tot := p.Load(); d != maxProgress-1 || tot != 5 {
		t.Errorf("after the panics: Load %d, %d; want them unchanged", d, tot)
	}
}

// TestProgressConcurrent lets many goroutines add while others change the
// total and a reader checks that every Load is one consistent pair: the
// count never goes back nor past what was added, and the total is always
// one of the totals set, never a mix of two writes; and, with one writer
// that keeps the count at most the total, that no Load pairs a count with
// an earlier total.
func TestProgressConcurrent(t *testing.T) {
	const adders, adds = 8, 20_000
	var p loom.Progress
	p.SetTotal(adders * adds)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range adders {
		wg.Go(func() {
			for range adds {
				p.Add(1)
			}
		})
	}
	var setter sync.WaitGroup
	setter.Go(func() { // flips the total between two values while the count moves
		for i := 0; ; i++ {
			select {
			case <-stop:
				p.SetTotal(adders * adds)
				return
			default:
			}
			p.SetTotal(adders*adds + i%2)
			runtime.Gosched() // lets the other goroutines run where all share one thread (js/wasm)
		}
	})
	reads, last := 0, 0
	for done := false; !done; reads++ {
		d, tot := p.Load()
		if d < last || d > adders*adds {
			t.Fatalf("read %d done after %d; the count went back or past %d", d, last, adders*adds)
		}
		if tot != adders*adds && tot != adders*adds+1 {
			t.Fatalf("read a total of %d, which was never set", tot)
		}
		last = d
		done = d == adders*adds
		runtime.Gosched() // lets the other goroutines run where all share one thread (js/wasm)
	}
	wg.Wait()
	close(stop)
	setter.Wait()
	if !p.Finished() || p.Fraction() != 1 {
		t.Errorf("after every add: Finished %v, Fraction %v", p.Finished(), p.Fraction())
	}
	t.Logf("%d reads while the count moved", reads)

	// One writer raises the total, then the count to it, step by step: the
	// count is never above the total, which a Load that paired a later
	// count with an earlier total would show.
	const steps = 20_000
	var q loom.Progress
	q.SetTotal(0)
	var writer sync.WaitGroup
	writer.Go(func() {
		for i := range steps {
			q.SetTotal(i + 1)
			q.Add(1)
			runtime.Gosched() // lets the reader run where all goroutines share one thread (js/wasm)
		}
	})
	for d := 0; d < steps; {
		var tot int
		d, tot = q.Load()
		if d > tot {
			t.Fatalf("Load() = %d, %d: a count above the total, never set", d, tot)
		}
		runtime.Gosched()
	}
	writer.Wait()
}

// TestProgressAwaitedByACoroutine checks the intended use under fake time:
// workers report, a coroutine polls the fraction each frame and waits with
// WaitUntil(p.Finished), resuming in the first frame after the last unit.
func TestProgressAwaitedByACoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p loom.Progress
		p.SetTotal(10)
		l := loom.New()
		defer l.Close()
		var seen []float64
		finishedAt := int64(0)
		l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			for !p.Finished() {
				seen = append(seen, p.Fraction())
				if !yield(loom.NextFrame()) {
					return
				}
			}
			yield(loom.WaitUntil(p.Finished))
			finishedAt = l.Frame()
		})
		var wg sync.WaitGroup
		wg.Go(func() {
			for range 10 {
				time.Sleep(10 * time.Millisecond)
				p.Add(1)
			}
		})
		for finishedAt == 0 {
			time.Sleep(5 * time.Millisecond) // a frame every 5ms
			synctest.Wait()
			l.Update()
		}
		wg.Wait()
		for i := 1; i < len(seen); i++ {
			if seen[i] < seen[i-1] {
				t.Fatalf("the fraction went back: %v", seen)
			}
		}
		if len(seen) < 10 || seen[0] != 0 || seen[len(seen)-1] != 0.9 {
			t.Errorf("fractions seen frame by frame: %v; want 0 up to 0.9 over about 20 frames", seen)
		}
		// The coroutine begins in frame 1, and looks once a frame from then.
		if finishedAt != int64(len(seen))+2 {
			t.Errorf("the wait ended in frame %d; want %d, the frame after the last unit", finishedAt, len(seen)+2)
		}
	})
}

// BenchmarkProgress measures reports from parallel goroutines and reads.
func BenchmarkProgress(b *testing.B) {
	b.Run("op=Add", func(b *testing.B) {
		var p loom.Progress
		p.SetTotal(maxProgress)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p.Add(1)
			}
		})
		if d, _ := p.Load(); d != b.N {
			b.Fatalf("count %d after %d adds", d, b.N)
		}
	})
	b.Run("op=Fraction", func(b *testing.B) {
		var p loom.Progress
		p.SetTotal(3)
		p.Add(1)
		b.ReportAllocs()
		sum := 0.0
		for b.Loop() {
			sum += p.Fraction()
		}
		if sum == 0 {
			b.Fatal("no fraction read")
		}
	})
}
