package taskqueue_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// o3Mixed starts, for a task with context tctx, helpers that each do one kind
// of work with that context on queue on (gauges gs count what executes there):
// RunSync in place, Apply, Map, and Handle.Wait on a task of on (which lends
// the task's slots while it waits). It returns once every helper is done.
func o3Mixed(t *testing.T, tctx context.Context, on *taskqueue.Queue, gs o3Gauges, kinds string) {
	var wg sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	for _, k := range kinds {
		switch k {
		case 's':
			run(func() {
				for r := 0; r < 5; r++ {
					if err := on.RunSync(tctx, func(context.Context) error {
						gs.enter("RunSync in place")
						runtime.Gosched()
						gs.leave()
						return nil
					}); err != nil {
						t.Errorf("RunSync: %v", err)
					}
				}
			})
		case 'a':
			run(func() {
				if err := taskqueue.Apply(tctx, on, 16, func(int) {
					gs.enter("Apply iteration")
					runtime.Gosched()
					gs.leave()
				}); err != nil {
					t.Errorf("Apply: %v", err)
				}
			})
		case 'm':
			run(func() {
				res, err := taskqueue.Map(tctx, on, []int{1, 2, 3, 4, 5, 6, 7, 8}, func(_ context.Context, x int) (int, error) {
					gs.enter("Map call")
					runtime.Gosched()
					gs.leave()
					return 2 * x, nil
				})
				if err != nil {
					t.Errorf("Map: %v", err)
					return
				}
				for i, r := range res {
					if r != 2*(i+1) {
						t.Errorf("Map result %d = %d", i, r)
					}
				}
			})
		case 'w':
			run(func() {
				h := on.RunAsync(tctx, func(context.Context) error {
					gs.enter("awaited task")
					runtime.Gosched()
					gs.leave()
					return nil
				})
				if err := h.Wait(tctx); err != nil {
					t.Errorf("Handle.Wait: %v", err)
				}
			})
		case 'g':
			run(func() {
				g := taskqueue.NewGroup(tctx, on)
				for m := 0; m < 4; m++ {
					g.Go(func(context.Context) error {
						gs.enter("group member")
						runtime.Gosched()
						gs.leave()
						return nil
					})
				}
				if err := g.Wait(tctx); err != nil {
					t.Errorf("Group.Wait: %v", err)
				}
			})
		}
	}
	wg.Wait()
}

// On a concurrent queue of limit 2, every task starts helpers that, with the
// task's context and at the same time, run RunSync in the task's place, Apply,
// Map, Group.Wait, and Handle.Wait on another task of the queue. Docs: "the
// queue's limit ... hold[s]" for in-place functions; Apply's caller works "in
// the place of its own task"; Wait lends the task's slots while it waits. A
// broken queue lets a slot that is lent to a waiting call be used at the same
// time by an in-place function of the same task, or lets Apply's caller and an
// in-place RunSync both run on the task's one slot: the count of functions
// executing at once goes over 2. A queue that does not lend deadlocks (the
// deadline reports it).
func TestOutside3ConcurrentMixedHelpersKeepLimit(t *testing.T) {
	for _, kinds := range []string{"ss", "sa", "sm", "am", "sam"} {
		t.Run(kinds, func(t *testing.T) {
			for iter := 0; iter < 15 && !t.Failed(); iter++ {
				q := taskqueue.NewConcurrent(2)
				g := newO3Gauge("concurrent(2)", 2)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				var hs []*taskqueue.Handle
				for i := 0; i < 4; i++ {
					hs = append(hs, q.RunAsync(ctx, func(tctx context.Context) error {
						g.enter("body")
						runtime.Gosched()
						g.leave()
						o3Mixed(t, tctx, q, o3Gauges{g}, kinds)
						return nil
					}))
				}
				for _, h := range hs {
					if err := h.Wait(ctx); err != nil {
						t.Errorf("task: %v", err)
					}
				}
				cancel()
				g.check(t)
				if err := q.Close(); err != nil {
					t.Fatal(err)
				}
				s := q.Stats()
				if s.Running != 0 || s.Queued != 0 || s.Completed != s.Succeeded+s.Failed+s.Panicked || s.Failed+s.Panicked != 0 {
					t.Errorf("stats: %+v", s)
				}
			}
		})
	}
}

// The same on a serial queue: every function in a task's place takes turns
// with the others and the queue never runs two functions at once. Apply and
// Map from a serial queue's task with its context run on the caller only.
func TestOutside3SerialMixedHelpersExclusive(t *testing.T) {
	for _, kinds := range []string{"sa", "sm", "am", "sam"} {
		t.Run(kinds, func(t *testing.T) {
			for iter := 0; iter < 15 && !t.Failed(); iter++ {
				q := taskqueue.NewSerial()
				g := newO3Gauge("serial", 1)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				var hs []*taskqueue.Handle
				for i := 0; i < 3; i++ {
					hs = append(hs, q.RunAsync(ctx, func(tctx context.Context) error {
						g.enter("body")
						runtime.Gosched()
						g.leave()
						o3Mixed(t, tctx, q, o3Gauges{g}, kinds)
						return nil
					}))
				}
				for _, h := range hs {
					if err := h.Wait(ctx); err != nil {
						t.Errorf("task: %v", err)
					}
				}
				cancel()
				g.check(t)
			}
		})
	}
}

// One task of a queue of limit 1 (serial, or concurrent with limit 1) starts
// two helpers and waits for them: one calls RunSync with the task's context,
// the other Apply (or Map) with it. Docs, RunSync: "Functions run in one
// task's place take turns: no two of them overlap, whichever goroutines
// call"; Apply: "The caller works on a slot of q: in the place of its own task
// if it runs one of q ... if q has none free, the caller only waits for the
// others". So with one slot, at most one function runs at any instant. A
// broken queue lets Apply's caller run iterations in the task's place while a
// RunSync function runs there too: two at once on a queue of limit 1.
func TestOutside3InPlaceApplyAndRunSyncTakeTurns(t *testing.T) {
	queues := map[string]func() *taskqueue.Queue{
		"serial":        func() *taskqueue.Queue { return taskqueue.NewSerial() },
		"concurrent(1)": func() *taskqueue.Queue { return taskqueue.NewConcurrent(1) },
	}
	for name, mk := range queues {
		for _, kinds := range []string{"sa", "sm", "aa", "mm", "am"} {
			t.Run(name+"/"+kinds, func(t *testing.T) {
				for iter := 0; iter < 30 && !t.Failed(); iter++ {
					q := mk()
					g := newO3Gauge(name, 1)
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					h := q.RunAsync(ctx, func(tctx context.Context) error {
						o3Mixed(t, tctx, q, o3Gauges{g}, kinds)
						return nil
					})
					if err := h.Wait(ctx); err != nil {
						t.Errorf("task: %v", err)
					}
					cancel()
					g.check(t)
				}
			})
		}
	}
}
