package benchmarks

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

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
		defer ReportCPU(b)()
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
		defer ReportCPU(b)()
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
