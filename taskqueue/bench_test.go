package taskqueue_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit/baseline"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// The benchmarks name their cases key=value:
//
//	impl     taskqueue, or the baseline: channel (a buffered channel feeding
//	         fixed workers), loop (the tasks called in a plain loop), pingpong
//	         (a request and a reply over unbuffered channels)
//	queue    serial, or concurrent (GOMAXPROCS workers)
//	subs     goroutines submitting at once
//	task     tiny (an atomic add) or 1us (about a microsecond of arithmetic)
//
// Throughput benchmarks count a task when it has run: every drainEvery tasks
// each submitter waits for its tasks to finish.

const drainEvery = 1024

var counter atomic.Int64

func tinyTask() { counter.Add(1) }

type benchTask struct {
	name string
	f    func()
}

func benchTasks() []benchTask {
	n := baseline.SpinRounds(time.Microsecond)
	return []benchTask{
		{"tiny", tinyTask},
		{"1us", func() { baseline.Spin(n) }},
	}
}

type benchQueue struct {
	name string
	new  func() *taskqueue.Queue
}

var benchQueues = []benchQueue{
	{"serial", func() *taskqueue.Queue { return taskqueue.NewSerial() }},
	{"concurrent", func() *taskqueue.Queue { return taskqueue.NewConcurrent(runtime.GOMAXPROCS(0)) }},
}

// drain waits until every task submitted to q before it has finished.
func drain(q *taskqueue.Queue) {
	ctx := context.Background()
	q.RunBarrier(ctx, func(context.Context) error { return nil }).Wait(ctx)
}

// submitters runs submit b.N times in all, from subs goroutines, calling
// drain every drainEvery submissions of each goroutine and at the end.
func submitters(b *testing.B, subs int, submit, drain func()) {
	b.ReportAllocs()
	if subs == 1 {
		for i := 1; b.Loop(); i++ {
			submit()
			if i%drainEvery == 0 {
				drain()
			}
		}
		drain()
		return
	}
	b.SetParallelism(subs)
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((subs + procs - 1) / procs)
	b.RunParallel(func(pb *testing.PB) {
		for i := 1; pb.Next(); i++ {
			submit()
			if i%drainEvery == 0 {
				drain()
			}
		}
		drain()
	})
}

// BenchmarkGo measures fire-and-forget submission against a buffered channel
// feeding fixed workers and, for the microsecond task, a plain loop.
func BenchmarkGo(b *testing.B) {
	for _, task := range benchTasks() {
		for _, subs := range []int{1, 8} {
			for _, bq := range benchQueues {
				b.Run(fmt.Sprintf("impl=taskqueue/queue=%s/subs=%d/task=%s", bq.name, subs, task.name), func(b *testing.B) {
					q := bq.new()
					submitters(b, subs, func() { q.Go(task.f) }, func() { drain(q) })
				})
				b.Run(fmt.Sprintf("impl=channel/queue=%s/subs=%d/task=%s", bq.name, subs, task.name), func(b *testing.B) {
					workers := 1
					if bq.name == "concurrent" {
						workers = runtime.GOMAXPROCS(0)
					}
					ch := make(chan func(), drainEvery)
					var wg sync.WaitGroup
					for range workers {
						wg.Go(func() {
							for f := range ch {
								f()
							}
						})
					}
					// A full buffer holds the submitters to the workers' pace.
					submitters(b, subs, func() { ch <- task.f }, func() {})
					close(ch)
					wg.Wait()
				})
			}
			if task.name == "1us" && subs == 1 {
				b.Run("impl=loop/task=1us", func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						task.f()
					}
				})
			}
		}
	}
}

// BenchmarkRunAsync measures submission with a handle, which the submitter
// does not wait for.
func BenchmarkRunAsync(b *testing.B) {
	ctx := context.Background()
	tiny := func(context.Context) error { tinyTask(); return nil }
	for _, subs := range []int{1, 8} {
		for _, bq := range benchQueues {
			b.Run(fmt.Sprintf("impl=taskqueue/queue=%s/subs=%d/task=tiny", bq.name, subs), func(b *testing.B) {
				q := bq.new()
				submitters(b, subs, func() { q.RunAsync(ctx, tiny) }, func() { drain(q) })
			})
		}
	}
	b.Run("impl=taskqueue/typed/queue=serial/subs=1/task=tiny", func(b *testing.B) {
		q := taskqueue.NewSerial()
		f := func(context.Context) (int, error) { tinyTask(); return 1, nil }
		submitters(b, 1, func() { taskqueue.RunAsync(ctx, q, f) }, func() { drain(q) })
	})
}

// BenchmarkRunSync measures submit-and-wait, each path against the baseline
// it should be compared with:
//
//	path=inline   RunSync on an idle queue, which runs f on the caller,
//	              against impl=mutex, f called under a mutex
//	path=handoff  RunAsync and Wait through a worker, against impl=pingpong,
//	              a request and a reply over unbuffered channels
//	path=wait     RunSync on a queue that has a task queued, so that f waits
//	              its turn and runs on a worker (each op queues that task
//	              first, with Go), against the same ping-pong
func BenchmarkRunSync(b *testing.B) {
	ctx := context.Background()
	tiny := func(context.Context) error { tinyTask(); return nil }
	nop := func() {}
	for _, bq := range benchQueues {
		b.Run(fmt.Sprintf("path=inline/impl=taskqueue/queue=%s", bq.name), func(b *testing.B) {
			b.ReportAllocs()
			q := bq.new()
			for b.Loop() {
				q.RunSync(ctx, tiny)
			}
		})
	}
	b.Run("path=inline/impl=mutex", func(b *testing.B) {
		b.ReportAllocs()
		var mu sync.Mutex
		for b.Loop() {
			mu.Lock()
			tiny(ctx)
			mu.Unlock()
		}
	})
	b.Run("path=handoff/impl=taskqueue/queue=serial", func(b *testing.B) {
		b.ReportAllocs()
		q := taskqueue.NewSerial()
		for b.Loop() {
			q.RunAsync(ctx, tiny).Wait(ctx)
		}
	})
	b.Run("path=wait/impl=taskqueue/queue=serial", func(b *testing.B) {
		b.ReportAllocs()
		q := taskqueue.NewSerial()
		for b.Loop() {
			q.Go(nop)
			q.RunSync(ctx, tiny)
		}
	})
	b.Run("path=wait/impl=taskqueue/queue=serial/subs=8", func(b *testing.B) {
		b.ReportAllocs()
		q := taskqueue.NewSerial()
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				q.Go(nop)
				q.RunSync(ctx, tiny)
			}
		})
	})
	b.Run("path=handoff/impl=pingpong", func(b *testing.B) {
		b.ReportAllocs()
		req, reply := make(chan func()), make(chan struct{})
		go func() {
			for f := range req {
				f()
				reply <- struct{}{}
			}
		}()
		for b.Loop() {
			req <- tinyTask
			<-reply
		}
		close(req)
	})
}

// BenchmarkLanes measures serial lanes, each with a few tasks, on one
// target of GOMAXPROCS slots, against the same tasks on the target alone:
// what per-entity order costs. ns/op is per task.
func BenchmarkLanes(b *testing.B) {
	const perKey = 10
	procs := runtime.GOMAXPROCS(0)
	b.Run("impl=keyed", func(b *testing.B) {
		b.ReportAllocs()
		target := taskqueue.NewConcurrent(procs)
		k := taskqueue.NewKeyed[int](target)
		key := 0
		for i := 0; b.Loop(); i++ {
			if i%perKey == 0 {
				key++
			}
			k.Go(key, tinyTask)
		}
		target.Close()
	})
	b.Run("impl=children", func(b *testing.B) {
		b.ReportAllocs()
		target := taskqueue.NewConcurrent(procs)
		var child *taskqueue.Queue
		for i := 0; b.Loop(); i++ {
			if i%perKey == 0 {
				child = taskqueue.NewSerial(taskqueue.WithTarget(target))
			}
			child.Go(tinyTask)
		}
		target.Close()
	})
	b.Run("impl=concurrent", func(b *testing.B) {
		b.ReportAllocs()
		target := taskqueue.NewConcurrent(procs)
		for b.Loop() {
			target.Go(tinyTask)
		}
		target.Close()
	})
}
