// Package benchmarks compares the taskqueue module with other Go worker
// pools and with the hand-written designs they replace, side by side in one
// run. It is a module of its own, so that the libraries it measures never
// become dependencies of the taskqueue module.
//
// The benchmarks live in the _test.go files; the run script turns their
// output into the tables of the README (see cmd/report).
package benchmarks

import (
	"context"
	"sync"

	"github.com/alitto/pond/v2"
	"github.com/gammazero/workerpool"
	"github.com/panjf2000/ants/v2"
	"github.com/sourcegraph/conc/pool"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// A Pool is one of the compared systems running one task, seen through what
// they have in common. Each system's New prepares the task in the system's
// own form once, so that no adapter allocates on its behalf.
type Pool struct {
	// Go submits the task without waiting for it. It may block where the
	// system pushes back on its submitters.
	Go func()
	// Wait submits the task and waits for it: the system's closest match
	// to RunSync, or a channel of our own where it has none.
	Wait func()
	// Submit submits any function without waiting, as Go does for the
	// task; the order checks use it.
	Submit func(f func())
	// Close stops the pool and waits for its tasks.
	Close func()
}

// A System is a compared system.
type System struct {
	Name string
	// Queues is true if the system holds submitted tasks in a queue
	// without blocking its submitters, so that it can hold a backlog.
	Queues bool
	// New returns a pool running at most limit tasks at once.
	New func(limit int, task func()) Pool
}

// Systems lists the compared systems; the first is the baseline of the
// tables, the floor for handing a task to another goroutine.
var Systems = []System{
	{"channel", true, newChannel},
	{"taskqueue", true, newTaskqueueGo},
	{"taskqueue-handle", true, newTaskqueueHandle},
	{"pond-go", true, newPondGo},
	{"pond-submit", true, newPondSubmit},
	{"ants", false, newAnts},
	{"workerpool", true, newWorkerpool},
	{"conc", false, newConc},
	{"errgroup", false, newErrgroup},
	{"go-semaphore", false, newGoSemaphore},
}

// waitWith runs the task through submit with a channel to wait on, for the
// systems that offer no future.
func waitWith(submit func(func()), task func()) func() {
	return func() {
		done := make(chan struct{})
		submit(func() { task(); close(done) })
		<-done
	}
}

// newChannel is the baseline: a buffered channel feeding limit fixed
// workers, and a request and reply over unbuffered channels for Wait.
func newChannel(limit int, task func()) Pool {
	ch := make(chan func(), 1024)
	req, reply := make(chan func()), make(chan struct{})
	var wg sync.WaitGroup
	for range limit {
		wg.Go(func() {
			for f := range ch {
				f()
			}
		})
	}
	wg.Go(func() {
		for f := range req {
			f()
			reply <- struct{}{}
		}
	})
	return Pool{
		Go:     func() { ch <- task },
		Wait:   func() { req <- task; <-reply },
		Submit: func(f func()) { ch <- f },
		Close:  func() { close(ch); close(req); wg.Wait() },
	}
}

func newTaskqueue(limit int) *taskqueue.Queue {
	if limit == 1 {
		return taskqueue.NewSerial()
	}
	return taskqueue.NewConcurrent(limit)
}

func newTaskqueueGo(limit int, task func()) Pool {
	q := newTaskqueue(limit)
	ctx := context.Background()
	f := func(context.Context) error { task(); return nil }
	return Pool{
		Go:     func() { q.Go(task) },
		Wait:   func() { q.RunSync(ctx, f) },
		Submit: func(f func()) { q.Go(f) },
		Close:  func() { q.Close() },
	}
}

func newTaskqueueHandle(limit int, task func()) Pool {
	q := newTaskqueue(limit)
	ctx := context.Background()
	f := func(context.Context) error { task(); return nil }
	return Pool{
		Go:     func() { q.RunAsync(ctx, f) },
		Wait:   func() { q.RunAsync(ctx, f).Wait(ctx) },
		Submit: func(f func()) { q.RunAsync(ctx, func(context.Context) error { f(); return nil }) },
		Close:  func() { q.Close() },
	}
}

func newPondGo(limit int, task func()) Pool {
	p := pond.NewPool(limit)
	return Pool{
		Go:     func() { p.Go(task) },
		Wait:   func() { p.Submit(task).Wait() },
		Submit: func(f func()) { p.Go(f) },
		Close:  p.StopAndWait,
	}
}

func newPondSubmit(limit int, task func()) Pool {
	p := pond.NewPool(limit)
	return Pool{
		Go:     func() { p.Submit(task) },
		Wait:   func() { p.Submit(task).Wait() },
		Submit: func(f func()) { p.Submit(f) },
		Close:  p.StopAndWait,
	}
}

func newAnts(limit int, task func()) Pool {
	p, err := ants.NewPool(limit)
	if err != nil {
		panic(err)
	}
	submit := func(f func()) { p.Submit(f) }
	return Pool{
		Go:     func() { p.Submit(task) },
		Wait:   waitWith(submit, task),
		Submit: submit,
		Close:  func() { p.ReleaseTimeout(1 << 40) },
	}
}

func newWorkerpool(limit int, task func()) Pool {
	wp := workerpool.New(limit)
	return Pool{
		Go:     func() { wp.Submit(task) },
		Wait:   func() { wp.SubmitWait(task) },
		Submit: wp.Submit,
		Close:  wp.StopWait,
	}
}

func newConc(limit int, task func()) Pool {
	p := pool.New().WithMaxGoroutines(limit)
	return Pool{
		Go:     func() { p.Go(task) },
		Wait:   waitWith(p.Go, task),
		Submit: p.Go,
		Close:  p.Wait,
	}
}

func newErrgroup(limit int, task func()) Pool {
	var g errgroup.Group
	g.SetLimit(limit)
	f := func() error { task(); return nil }
	submit := func(f func()) { g.Go(func() error { f(); return nil }) }
	return Pool{
		Go:     func() { g.Go(f) },
		Wait:   waitWith(submit, task),
		Submit: submit,
		Close:  func() { g.Wait() },
	}
}

func newGoSemaphore(limit int, task func()) Pool {
	sem := semaphore.NewWeighted(int64(limit))
	ctx := context.Background()
	run := func() { task(); sem.Release(1) }
	submit := func(f func()) {
		sem.Acquire(ctx, 1)
		go func() { f(); sem.Release(1) }()
	}
	return Pool{
		Go:     func() { sem.Acquire(ctx, 1); go run() },
		Wait:   waitWith(submit, task),
		Submit: submit,
		Close:  func() { sem.Acquire(ctx, int64(limit)); sem.Release(int64(limit)) },
	}
}
