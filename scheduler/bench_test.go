package scheduler_test

import (
	"context"
	"fmt"
	"io"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// drainEvery is how many items the throughput benchmarks queue before waiting
// for them to run, so that they measure running items, not only queuing them,
// and keep the backlog small.
const drainEvery = 1024

// BenchmarkEnqueue measures queuing a tiny item and running it, against a
// buffered channel feeding a fixed set of workers (the floor for a hand-off
// between goroutines).
func BenchmarkEnqueue(b *testing.B) {
	for _, limit := range []int{1, 4} {
		b.Run(fmt.Sprintf("impl=scheduler/limit=%d", limit), func(b *testing.B) {
			b.ReportAllocs()
			s := scheduler.New(limit)
			var n atomic.Int64
			item := scheduler.Func(func() { n.Add(1) })
			for i := 1; b.Loop(); i++ {
				s.Enqueue(item)
				if i%drainEvery == 0 {
					s.Wait(context.Background())
				}
			}
		})
		b.Run(fmt.Sprintf("impl=channel/limit=%d", limit), func(b *testing.B) {
			b.ReportAllocs()
			ch := make(chan func(), 1024)
			var wg sync.WaitGroup
			for range limit {
				wg.Go(func() {
					for f := range ch {
						f()
					}
				})
			}
			var n atomic.Int64
			item := func() { n.Add(1) }
			for b.Loop() {
				ch <- item // a full buffer holds the loop back to the workers' pace
			}
			close(ch)
			wg.Wait()
		})
	}
}

// BenchmarkTryRun measures running an item on the caller of an idle
// scheduler.
func BenchmarkTryRun(b *testing.B) {
	b.ReportAllocs()
	s := scheduler.New(1)
	var n atomic.Int64
	f := func(scheduler.Slot) { n.Add(1) }
	for b.Loop() {
		s.TryRun(scheduler.Slot{}, f)
	}
}

// BenchmarkObserve measures what names (pprof labels on the workers) and
// runtime/trace cost per item: an unnamed scheduler against a named one,
// with tracing off and on.
func BenchmarkObserve(b *testing.B) {
	for _, tracing := range []bool{false, true} {
		for _, name := range []string{"", "render"} {
			b.Run(fmt.Sprintf("trace=%v/named=%v", tracing, name != ""), func(b *testing.B) {
				if tracing {
					if err := trace.Start(io.Discard); err != nil {
						b.Skip(err)
					}
					defer trace.Stop()
				}
				b.ReportAllocs()
				s := scheduler.New(1, scheduler.WithName(name))
				var n atomic.Int64
				item := scheduler.Func(func() { n.Add(1) })
				for i := 1; b.Loop(); i++ {
					s.Enqueue(item)
					if i%drainEvery == 0 {
						s.Wait(context.Background())
					}
				}
				s.Wait(context.Background())
			})
		}
	}
}
