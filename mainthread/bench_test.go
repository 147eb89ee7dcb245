package mainthread_test

import (
	"context"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/internal/testkit/baseline"
	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// BenchmarkRunSyncOnMainThread measures a call's round trip to the real
// main thread, served by Run, against the locked-goroutine baseline
// (baseline.LockedThread, the design of other main-thread packages);
// cpu-ns/op is the CPU time the process spends per call, spinning included.
func BenchmarkRunSyncOnMainThread(b *testing.B) {
	nop := func() {}
	b.Run("impl=mainthread", func(b *testing.B) {
		b.ReportAllocs()
		defer testkit.ReportCPU(b)()
		defer reportWaits(b)()
		for b.Loop() {
			taskqueue.RunSyncOnMainThread(bg, nop)
		}
	})
	b.Run("impl=lockedgoroutine", func(b *testing.B) {
		b.ReportAllocs()
		s := baseline.NewLockedThread()
		defer s.Close()
		defer testkit.ReportCPU(b)()
		for b.Loop() {
			s.Call(nop)
		}
	})
}

// BenchmarkRunAsyncOnMainThread measures posting a function to the main
// thread. Every 4096 posts it waits, with a synchronous call, for the main
// thread to catch up, so that the queue stays bounded; ns/op includes those
// waits, and wait-ns/op reports their share: the main thread's wake-up, the
// frame that runs the posts, and the caller's own wake-up.
func BenchmarkRunAsyncOnMainThread(b *testing.B) {
	b.ReportAllocs()
	nop := func() {}
	var wait time.Duration
	for i := 1; b.Loop(); i++ {
		taskqueue.RunAsyncOnMainThread(nop)
		if i%4096 == 0 {
			start := time.Now()
			taskqueue.RunSyncOnMainThread(bg, nop) // let the main thread catch up
			wait += time.Since(start)
		}
	}
	taskqueue.RunSyncOnMainThread(bg, nop)
	b.ReportMetric(float64(wait)/float64(b.N), "wait-ns/op")
}

func BenchmarkIsMain(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		mainthread.IsMain()
	}
}

// reportWaits starts counting the calls whose caller went to wait, and the
// times Run's loop went to sleep, and returns a function that reports them
// per operation as waits/op and sleeps/op: on the path of a call that
// costs no wake-up, both are 0.
func reportWaits(b *testing.B) func() {
	w0, s0 := mainthread.Counters()
	return func() {
		w, s := mainthread.Counters()
		b.ReportMetric(float64(w-w0)/float64(b.N), "waits/op")
		b.ReportMetric(float64(s-s0)/float64(b.N), "sleeps/op")
	}
}

// bg is the context of the calls that nothing bounds.
var bg = context.Background()
