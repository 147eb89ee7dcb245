package benchmarks

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/internal/testkit/baseline"
	"github.com/taskqueue-go/taskqueue/taskqueue"
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
	n := baseline.SpinRounds(time.Microsecond)
	return []task{
		{"tiny", func() { done.Add(1) }},
		{"1us", func() { baseline.Spin(n); done.Add(1) }},
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
				defer testkit.ReportCPU(b)()
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
	defer testkit.ReportCPU(b)()
	if subs == 1 {
		// A counted loop, not b.Loop, so that the final drain is timed, as
		// it is in the parallel columns: ns/op is per task run, in every
		// column.
		b.ResetTimer()
		for i := 1; i <= b.N; i++ {
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
// a time, on paths that compare like with like:
//
//	path=handoff  the task runs on a worker and the caller waits: a
//	              handle's Wait for taskqueue-handle (RunAsync) and pond, SubmitWait
//	              for workerpool, a request and reply over unbuffered channels
//	              for channel, and a channel per task for the systems without a
//	              future
//	path=inline   taskqueue's RunSync on an idle queue, which runs the task
//	              on the caller, against a call under a mutex
func BenchmarkSubmitWait(b *testing.B) {
	limit := runtime.GOMAXPROCS(0)
	for _, sys := range Systems {
		if sys.Name == "taskqueue" {
			continue // its Wait is RunSync, which runs inline: see path=inline
		}
		b.Run("path=handoff/impl="+sys.Name, func(b *testing.B) {
			p := sys.New(limit, func() { done.Add(1) })
			defer p.Close()
			b.ReportAllocs()
			defer testkit.ReportCPU(b)()
			for b.Loop() {
				p.Wait()
			}
		})
	}
	b.Run("path=inline/impl=taskqueue", func(b *testing.B) {
		p := newTaskqueueGo(limit, func() { done.Add(1) })
		defer p.Close()
		b.ReportAllocs()
		for b.Loop() {
			p.Wait()
		}
	})
	b.Run("path=inline/impl=mutex", func(b *testing.B) {
		var mu sync.Mutex
		b.ReportAllocs()
		for b.Loop() {
			mu.Lock()
			done.Add(1)
			mu.Unlock()
		}
	})
}

// BenchmarkLanes measures per-key order: 10 tasks per key, keys one after
// the other, on a target of GOMAXPROCS slots, submitted without waiting.
// impl=keyed is taskqueue.Keyed; impl=children makes a serial child queue of
// the target per key; impl=concurrent runs the same tasks on the target
// alone, with no order per key, the baseline. ns/op is per task.
func BenchmarkLanes(b *testing.B) {
	const perKey = 10
	procs := runtime.GOMAXPROCS(0)
	run := func(b *testing.B, submit func(i int)) {
		base := done.Load()
		b.ReportAllocs()
		defer testkit.ReportCPU(b)()
		b.ResetTimer()
		for i := 0; i < b.N; i++ { // counted, so that the final drain is timed
			submit(i)
			if (i+1)%drainEvery == 0 {
				drainTo(base + int64(i+1))
			}
		}
		drainTo(base + int64(b.N))
	}
	task := func() { done.Add(1) }
	b.Run("impl=keyed", func(b *testing.B) {
		target := taskqueue.NewConcurrent(procs)
		k := taskqueue.NewKeyed[int](target)
		run(b, func(i int) { k.Go(i/perKey, task) })
		target.Close()
	})
	b.Run("impl=children", func(b *testing.B) {
		target := taskqueue.NewConcurrent(procs)
		var child *taskqueue.Queue
		run(b, func(i int) {
			if i%perKey == 0 {
				child = taskqueue.NewSerial(taskqueue.WithTarget(target))
			}
			child.Go(task)
		})
		target.Close()
	})
	b.Run("impl=concurrent", func(b *testing.B) {
		target := taskqueue.NewConcurrent(procs)
		run(b, func(int) { target.Go(task) })
		target.Close()
	})
}
