package benchmarks

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	conciter "github.com/sourcegraph/conc/iter"
	"golang.org/x/sync/errgroup"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// BenchmarkGroup runs groups of 10,000 tiny tasks on GOMAXPROCS slots and
// waits for each group: with a taskqueue Group, with RunAsync and its handles
// waited one by one, and with errgroup and SetLimit. ns/op is per task.
func BenchmarkGroup(b *testing.B) {
	const size = 10_000
	procs := runtime.GOMAXPROCS(0)
	ctx := context.Background()
	var n atomic.Int64
	task := func(context.Context) error { n.Add(1); return nil }
	run := func(b *testing.B, group func()) {
		b.ReportAllocs()
		defer ReportCPU(b)()
		for i := 0; b.Loop(); i++ {
			if i%size == 0 {
				group()
			}
		}
	}
	b.Run("impl=group", func(b *testing.B) {
		q := taskqueue.NewConcurrent(procs)
		defer q.Close()
		run(b, func() {
			g := taskqueue.NewGroup(ctx, q)
			for range size {
				g.Go(task)
			}
			g.Wait()
		})
	})
	b.Run("impl=handles", func(b *testing.B) {
		q := taskqueue.NewConcurrent(procs)
		defer q.Close()
		hs := make([]*taskqueue.Handle, size)
		run(b, func() {
			for i := range hs {
				hs[i] = q.RunAsync(ctx, task)
			}
			for _, h := range hs {
				h.Wait(ctx)
			}
		})
	})
	b.Run("impl=errgroup", func(b *testing.B) {
		run(b, func() {
			var g errgroup.Group
			g.SetLimit(procs)
			for range size {
				g.Go(func() error { return task(ctx) })
			}
			g.Wait()
		})
	})
}

// BenchmarkApply adds 1,000,000 times to an atomic counter: with Apply on
// GOMAXPROCS slots, with the loop split across GOMAXPROCS goroutines by
// hand, and in a plain loop on one goroutine. ns/op is per iteration.
func BenchmarkApply(b *testing.B) {
	const n = 1_000_000
	procs := runtime.GOMAXPROCS(0)
	var sum atomic.Int64
	run := func(b *testing.B, loop func()) {
		b.ReportAllocs()
		defer ReportCPU(b)()
		for i := 0; b.Loop(); i++ {
			if i%n == 0 {
				loop()
			}
		}
	}
	b.Run("impl=apply", func(b *testing.B) {
		q := taskqueue.NewConcurrent(procs)
		defer q.Close()
		run(b, func() { taskqueue.Apply(context.Background(), q, n, func(int) { sum.Add(1) }) })
	})
	b.Run("impl=split", func(b *testing.B) {
		run(b, func() {
			var wg sync.WaitGroup
			per := (n + procs - 1) / procs
			for p := range procs {
				wg.Go(func() {
					for i := p * per; i < min((p+1)*per, n); i++ {
						sum.Add(1)
					}
				})
			}
			wg.Wait()
		})
	})
	b.Run("impl=loop", func(b *testing.B) {
		run(b, func() {
			for range n {
				sum.Add(1)
			}
		})
	})
}

// BenchmarkMap maps 100,000 integers to their squares: with taskqueue's Map
// on GOMAXPROCS slots, and with conc's iter.Map. ns/op is per item.
func BenchmarkMap(b *testing.B) {
	const n = 100_000
	procs := runtime.GOMAXPROCS(0)
	items := make([]int, n)
	for i := range items {
		items[i] = i
	}
	run := func(b *testing.B, m func()) {
		b.ReportAllocs()
		defer ReportCPU(b)()
		for i := 0; b.Loop(); i++ {
			if i%n == 0 {
				m()
			}
		}
	}
	b.Run("impl=taskqueue", func(b *testing.B) {
		q := taskqueue.NewConcurrent(procs)
		defer q.Close()
		run(b, func() {
			taskqueue.Map(context.Background(), q, items, func(_ context.Context, v int) (int, error) { return v * v, nil })
		})
	})
	b.Run("impl=conc", func(b *testing.B) {
		run(b, func() {
			conciter.Map(items, func(v *int) int { return *v * *v })
		})
	})
}
