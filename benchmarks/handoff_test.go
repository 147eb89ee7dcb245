package benchmarks

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// frameEvery is how many actions the post benchmarks post between two
// frames (or, for the main thread, between two waits for it to catch up).
const frameEvery = 1000

// BenchmarkPost measures an action's whole way through a frame loop, from
// one goroutine: posted, then run by a frame of 1,000 actions. ns/op is per
// action. The baselines do the same work by hand: impl=mutexslice appends
// to a slice under a mutex and the frame swaps it out and runs it;
// impl=channel sends on a buffered channel and the frame receives until it
// is empty.
func BenchmarkPost(b *testing.B) {
	n := 0
	f := func() { n++ }
	b.Run("impl=loom", func(b *testing.B) {
		l := loom.New(loom.ManualClock())
		defer l.Close()
		b.ReportAllocs()
		for i := 1; b.Loop(); i++ {
			l.Post(f)
			if i%frameEvery == 0 {
				l.UpdateDelta(time.Millisecond)
			}
		}
	})
	b.Run("impl=mutexslice", func(b *testing.B) {
		var mu sync.Mutex
		var posted, running []func()
		b.ReportAllocs()
		for i := 1; b.Loop(); i++ {
			mu.Lock()
			posted = append(posted, f)
			mu.Unlock()
			if i%frameEvery == 0 {
				mu.Lock()
				posted, running = running[:0], posted
				mu.Unlock()
				for j, g := range running {
					g()
					running[j] = nil
				}
			}
		}
	})
	b.Run("impl=channel", func(b *testing.B) {
		ch := make(chan func(), frameEvery)
		b.ReportAllocs()
		for i := 1; b.Loop(); i++ {
			ch <- f
			if i%frameEvery == 0 {
				for len(ch) > 0 {
					(<-ch)()
				}
			}
		}
	})
}

// BenchmarkMainThreadPost measures posting a function to the main thread
// without waiting for it, from one goroutine, waiting for the main thread
// to catch up every 1,000 posts. ns/op is per post. impl=mainthread is
// taskqueue.RunAsyncOnMainThread, served by mainthread.Run; the baseline,
// impl=channel, sends on a buffered channel that a goroutine locked to its
// thread serves, and waits on a done channel every 1,000 posts as the other
// waits with RunSyncOnMainThread.
func BenchmarkMainThreadPost(b *testing.B) {
	nop := func() {}
	b.Run("impl=mainthread", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		defer testkit.ReportCPU(b)()
		for i := 1; b.Loop(); i++ {
			taskqueue.RunAsyncOnMainThread(nop)
			if i%frameEvery == 0 {
				taskqueue.RunSyncOnMainThread(ctx, nop)
			}
		}
		taskqueue.RunSyncOnMainThread(ctx, nop)
	})
	b.Run("impl=channel", func(b *testing.B) {
		calls := make(chan func(), frameEvery)
		var wg sync.WaitGroup
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for f := range calls {
				f()
			}
		})
		wait := func() {
			done := make(chan struct{})
			calls <- func() { close(done) }
			<-done
		}
		b.ReportAllocs()
		defer testkit.ReportCPU(b)()
		for i := 1; b.Loop(); i++ {
			calls <- nop
			if i%frameEvery == 0 {
				wait()
			}
		}
		wait()
		close(calls)
		wg.Wait()
	})
}

// BenchmarkOffFrame measures a round trip off the frame and back: a
// coroutine hands a tiny function to a worker and resumes, in a later frame,
// once it has run; the benchmark runs frames until it has. ns/op and
// allocs/op are per round trip. impl=queue is a taskqueue Handle awaited
// with loom.WaitFor (what replaced the loom's own RunOff); impl=goroutine is
// the same by hand: a goroutine per round trip that closes a channel, which
// the coroutine polls once a frame.
func BenchmarkOffFrame(b *testing.B) {
	ctx := context.Background()
	frames := func(b *testing.B, l *loom.Loom, trips *int) {
		b.ReportAllocs()
		for b.Loop() {
			for want := *trips + 1; *trips < want; {
				l.UpdateDelta(time.Millisecond)
				runtime.Gosched()
			}
		}
	}
	b.Run("impl=queue", func(b *testing.B) {
		q := taskqueue.NewConcurrent(runtime.GOMAXPROCS(0))
		defer q.Close()
		l := loom.New(loom.ManualClock())
		defer l.Close()
		trips := 0
		tiny := func(context.Context) error { done.Add(1); return nil }
		l.StartCoroutine(func(y func(loom.Instruction) bool) {
			for y(loom.WaitFor(q.RunAsync(ctx, tiny))) {
				trips++
			}
		})
		frames(b, l, &trips)
	})
	b.Run("impl=goroutine", func(b *testing.B) {
		l := loom.New(loom.ManualClock())
		defer l.Close()
		trips := 0
		l.StartCoroutine(func(y func(loom.Instruction) bool) {
			for {
				ch := make(chan struct{})
				go func() { done.Add(1); close(ch) }()
				for ran := false; !ran; {
					select {
					case <-ch:
						ran = true
					default:
						if !y(loom.NextFrame()) {
							return
						}
					}
				}
				trips++
			}
		})
		frames(b, l, &trips)
	})
}
