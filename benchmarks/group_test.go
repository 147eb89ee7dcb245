package benchmarks

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sourcegraph/conc/iter"
	"golang.org/x/sync/errgroup"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// groupSize is the number of tasks of a group in BenchmarkGroup.
const groupSize = 10_000

// BenchmarkGroup measures a group of 10,000 tiny tasks, added and waited for,
// on GOMAXPROCS slots. impl=group is taskqueue.Group; impl=groupof is
// taskqueue.GroupOf, whose members return values, collected in order;
// impl=handles is the baseline, the same tasks submitted with RunAsync and
// their handles waited one by one; impl=errgroup is an errgroup.Group with
// SetLimit(GOMAXPROCS), which starts a goroutine per task. ns/op is per
// group.
func BenchmarkGroup(b *testing.B) {
	procs := runtime.GOMAXPROCS(0)
	var n atomic.Int64
	tiny := func(context.Context) error { n.Add(1); return nil }
	ctx := context.Background()
	run := func(b *testing.B, group func()) {
		b.ReportAllocs()
		defer testkit.ReportCPU(b)()
		for b.Loop() {
			group()
		}
	}
	b.Run("impl=handles", func(b *testing.B) {
		q := taskqueue.NewConcurrent(procs)
		hs := make([]*taskqueue.Handle, groupSize)
		run(b, func() {
			for i := range hs {
				hs[i] = q.RunAsync(ctx, tiny)
			}
			for _, h := range hs {
				h.Wait(ctx)
			}
		})
		q.Close()
	})
	b.Run("impl=group", func(b *testing.B) {
		q := taskqueue.NewConcurrent(procs)
		run(b, func() {
			g := taskqueue.NewGroup(ctx, q)
			for range groupSize {
				g.Go(tiny)
			}
			g.Wait(ctx)
		})
		q.Close()
	})
	b.Run("impl=groupof", func(b *testing.B) {
		q := taskqueue.NewConcurrent(procs)
		f := func(context.Context) (int64, error) { return n.Add(1), nil }
		run(b, func() {
			g := taskqueue.NewGroupOf[int64](ctx, q)
			for range groupSize {
				g.Go(f)
			}
			g.Wait(ctx)
		})
		q.Close()
	})
	b.Run("impl=errgroup", func(b *testing.B) {
		f := func() error { n.Add(1); return nil }
		run(b, func() {
			var g errgroup.Group
			g.SetLimit(procs)
			for range groupSize {
				g.Go(f)
			}
			g.Wait()
		})
	})
}

// applySize is the number of iterations of BenchmarkApply.
const applySize = 1_000_000

// BenchmarkApply measures a loop of 1,000,000 atomic adds to one counter,
// run in parallel. impl=apply is taskqueue.Apply on a queue of GOMAXPROCS
// slots; impl=split is the baseline, the range split by hand into GOMAXPROCS
// parts, each on a goroutine of its own; impl=serial is the same loop on one
// goroutine. ns/op is per loop.
func BenchmarkApply(b *testing.B) {
	procs := runtime.GOMAXPROCS(0)
	var sum atomic.Int64
	add := func(int) { sum.Add(1) }
	run := func(b *testing.B, loop func()) {
		b.ReportAllocs()
		defer testkit.ReportCPU(b)()
		for b.Loop() {
			loop()
		}
	}
	b.Run("impl=split", func(b *testing.B) {
		run(b, func() {
			var wg sync.WaitGroup
			for p := range procs {
				wg.Go(func() {
					for i := p * applySize / procs; i < (p+1)*applySize/procs; i++ {
						add(i)
					}
				})
			}
			wg.Wait()
		})
	})
	b.Run("impl=apply", func(b *testing.B) {
		q := taskqueue.NewConcurrent(procs)
		run(b, func() { taskqueue.Apply(context.Background(), q, applySize, add) })
		q.Close()
	})
	b.Run("impl=serial", func(b *testing.B) {
		run(b, func() {
			for i := range applySize {
				add(i)
			}
		})
	})
}

// mapSize is the number of items of BenchmarkMap.
const mapSize = 100_000

// BenchmarkMap measures a map of 100,000 integers to their squares, in
// parallel, results in order. impl=map is taskqueue.Map on a queue of
// GOMAXPROCS slots; impl=conc is the baseline, conc's iter.Map, which runs
// GOMAXPROCS goroutines; impl=serial is a plain loop. ns/op is per map.
func BenchmarkMap(b *testing.B) {
	procs := runtime.GOMAXPROCS(0)
	items := make([]int, mapSize)
	for i := range items {
		items[i] = i
	}
	run := func(b *testing.B, m func() []int) {
		b.ReportAllocs()
		defer testkit.ReportCPU(b)()
		for b.Loop() {
			if out := m(); out[mapSize-1] != (mapSize-1)*(mapSize-1) {
				b.Fatalf("last result = %d", out[mapSize-1])
			}
		}
	}
	b.Run("impl=conc", func(b *testing.B) {
		run(b, func() []int { return iter.Map(items, func(v *int) int { return *v * *v }) })
	})
	b.Run("impl=map", func(b *testing.B) {
		q := taskqueue.NewConcurrent(procs)
		square := func(_ context.Context, v int) (int, error) { return v * v, nil }
		run(b, func() []int {
			out, _ := taskqueue.Map(context.Background(), q, items, square)
			return out
		})
		q.Close()
	})
	b.Run("impl=serial", func(b *testing.B) {
		run(b, func() []int {
			out := make([]int, len(items))
			for i, v := range items {
				out[i] = v * v
			}
			return out
		})
	})
}
