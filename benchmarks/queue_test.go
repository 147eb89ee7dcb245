package benchmarks

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
)

// done counts the tasks that have run, in every benchmark: the tasks
// themselves count, so every system is waited for the same way.
var done atomic.Int64

// drainEvery is how many tasks a submitter sends before it waits for them:
// the benchmarks measure tasks run, not only submitted, and keep backlogs
// small.
const drainEvery = 1024

type task struct {
	name string
	f    func()
}

func tasks() []task {
	n := SpinIters()
	return []task{
		{"tiny", func() { done.Add(1) }},
		{"1us", func() { Spin(n); done.Add(1) }},
	}
}

// drainTo waits until n tasks have run in all.
func drainTo(n int64) {
	for done.Load() < n {
		runtime.Gosched()
	}
}

// BenchmarkQueue measures a task's way through each system, submitted
// without waiting, from 1, 8 and 64 goroutines, with at most 1 or
// GOMAXPROCS tasks running. In mode=drain each submitter waits for its tasks
// every 1,024, which keeps the backlog small; in mode=backlog it never waits
// until the end, so that the systems that queue without blocking their
// submitters hold a backlog as a burst builds one. ns/op is per task run;
// cpu-ns/op is the CPU time the process spent per task.
func BenchmarkQueue(b *testing.B) {
	for _, t := range tasks() {
		for _, mode := range []string{"drain", "backlog"} {
			for _, limit := range []int{1, runtime.GOMAXPROCS(0)} {
				for _, subs := range []int{1, 8, 64} {
					for _, sys := range Systems {
						name := fmt.Sprintf("task=%s/mode=%s/limit=%d/subs=%d/impl=%s", t.name, mode, limit, subs, sys.Name)
						every := drainEvery
						if mode == "backlog" {
							every = 0
						}
						b.Run(name, func(b *testing.B) { benchQueue(b, sys, limit, subs, every, t.f) })
					}
				}
			}
		}
	}
}

// BenchmarkTrickle measures a hand-off after an idle moment: one task is
// submitted, the submitter waits (spinning) until it has run, and again. A
// pool whose workers exit when idle pays a goroutine start per task here; a
// channel's workers wait, parked, for the next.
func BenchmarkTrickle(b *testing.B) {
	for _, limit := range []int{1, runtime.GOMAXPROCS(0)} {
		for _, sys := range Systems {
			b.Run(fmt.Sprintf("limit=%d/impl=%s", limit, sys.Name), func(b *testing.B) {
				p := sys.New(limit, func() { done.Add(1) })
				defer p.Close()
				base := done.Load()
				b.ReportAllocs()
				defer ReportCPU(b)()
				for i := 1; b.Loop(); i++ {
					p.Go()
					drainTo(base + int64(i))
				}
			})
		}
	}
}

func benchQueue(b *testing.B, sys System, limit, subs, every int, f func()) {
	p := sys.New(limit, f)
	defer p.Close()
	base := done.Load()
	b.ReportAllocs()
	defer ReportCPU(b)()
	if subs == 1 {
		for i := 1; b.Loop(); i++ {
			p.Go()
			if every > 0 && i%every == 0 {
				drainTo(base + int64(i))
			}
		}
		drainTo(base + int64(b.N))
		return
	}
	var submitted atomic.Int64
	b.SetParallelism((subs + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.RunParallel(func(pb *testing.PB) {
		mine := 0
		for pb.Next() {
			p.Go()
			if mine++; mine == every {
				drainTo(base + submitted.Add(int64(mine)))
				mine = 0
			}
		}
		submitted.Add(int64(mine))
	})
	drainTo(base + int64(b.N))
}

// BenchmarkSubmitWait measures submitting a task and waiting for it, one at
// a time: RunSync for taskqueue (which runs the task on the caller when the
// queue is idle), a handle's Wait for taskqueue-handle and pond, SubmitWait
// for workerpool, and a channel per task for the systems without a future.
func BenchmarkSubmitWait(b *testing.B) {
	limit := runtime.GOMAXPROCS(0)
	for _, sys := range Systems {
		b.Run("impl="+sys.Name, func(b *testing.B) {
			p := sys.New(limit, func() { done.Add(1) })
			defer p.Close()
			b.ReportAllocs()
			defer ReportCPU(b)()
			for b.Loop() {
				p.Wait()
			}
		})
	}
}
