package taskqueue_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// "While goroutines of the task wait with its context for work of the tree,
// the task's slot of the target is lent to that work, once however many
// wait, and taken back for each function that runs in the task's place
// meanwhile."
//
// Target T has one slot. A serial child A's task holds it and starts helpers
// that it waits for: four wait, with the task's context, for tasks of a
// concurrent sibling B (limit 4), one calls B.RunSync behind B's busy tasks,
// one Group.Wait on B, and two run functions in the task's place, on T and on
// A, in loops. Every function that runs on T's one slot enters a gauge of
// limit 1. An implementation that lends the slot once per waiter runs up to
// four of B's tasks at once; one that does not take the slot back for an
// in-place function runs it beside a B task on the lent slot; one that does
// not lend at all deadlocks, which synctest reports.
func TestOutside4TreeLendOnce(t *testing.T) {
	for round := 0; round < 30; round++ {
		synctest.Test(t, func(t *testing.T) {
			T := taskqueue.NewSerial(taskqueue.WithName("T"))
			A := taskqueue.NewSerial(taskqueue.WithTarget(T), taskqueue.WithName("A"))
			B := taskqueue.NewConcurrent(4, taskqueue.WithTarget(T), taskqueue.WithName("B"))
			g := newO3Gauge("target of one slot", 1)
			work := func(what string, yield bool) {
				g.enter(what)
				if yield {
					time.Sleep(time.Millisecond)
				}
				g.leave()
			}
			var inPlace atomic.Int64
			err := A.RunSync(context.Background(), func(ctx context.Context) error {
				work("A's task", false)
				var bs []*taskqueue.Handle
				for i := 0; i < 8; i++ {
					bs = append(bs, B.RunAsync(context.Background(), func(context.Context) error { work("B task", true); return nil }))
				}
				var wg sync.WaitGroup
				for i := 0; i < 4; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for _, h := range bs[i*2 : i*2+2] {
							if err := h.Wait(ctx); err != nil {
								t.Errorf("Wait for B: %v", err)
							}
						}
					}()
				}
				wg.Add(2)
				go func() {
					defer wg.Done()
					if err := B.RunSync(ctx, func(context.Context) error { work("B.RunSync behind busy B", true); return nil }); err != nil {
						t.Errorf("B.RunSync: %v", err)
					}
				}()
				go func() {
					defer wg.Done()
					grp := taskqueue.NewGroup(context.Background(), B)
					for i := 0; i < 4; i++ {
						grp.Go(func(context.Context) error { work("B group member", true); return nil })
					}
					if err := grp.Wait(ctx); err != nil {
						t.Errorf("Group.Wait: %v", err)
					}
				}()
				for _, q := range []*taskqueue.Queue{T, A} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < 10; i++ {
							if err := q.RunSync(ctx, func(context.Context) error {
								inPlace.Add(1)
								work("in-place on "+q.Name(), true)
								return nil
							}); err != nil {
								t.Errorf("in-place RunSync on %s: %v", q.Name(), err)
							}
						}
					}()
				}
				wg.Wait()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := T.Close(); err != nil {
				t.Fatal(err)
			}
			if n := inPlace.Load(); n != 20 {
				t.Errorf("%d in-place functions ran, want 20", n)
			}
			g.check(t)
		})
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
}

// The same without fake time, on a target of limit 2 with two children's
// tasks each holding a slot and lending it: the target never runs more than
// two functions at once, and every task of B runs exactly once.
func TestOutside4TreeLendStress(t *testing.T) {
	for round := 0; round < 50; round++ {
		T := taskqueue.NewConcurrent(2)
		A := taskqueue.NewConcurrent(2, taskqueue.WithTarget(T))
		B := taskqueue.NewConcurrent(4, taskqueue.WithTarget(T))
		g := newO3Gauge("target of two slots", 2)
		var bRuns [64]atomic.Int32
		var next atomic.Int32
		fn := func(what string) {
			g.enter(what)
			for i := 0; i < 50; i++ {
				_ = i * i
			}
			g.leave()
		}
		var outer sync.WaitGroup
		for k := 0; k < 2; k++ {
			outer.Add(1)
			go func() {
				defer outer.Done()
				err := A.RunSync(context.Background(), func(ctx context.Context) error {
					fn("A task")
					var wg sync.WaitGroup
					for w := 0; w < 4; w++ {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for j := 0; j < 4; j++ {
								id := next.Add(1) - 1
								h := B.RunAsync(context.Background(), func(context.Context) error { bRuns[id].Add(1); fn("B task"); return nil })
								if err := h.Wait(ctx); err != nil {
									t.Errorf("Wait: %v", err)
								}
								if err := T.RunSync(ctx, func(context.Context) error { fn("in place on T"); return nil }); err != nil {
									t.Errorf("T.RunSync: %v", err)
								}
							}
						}()
					}
					wg.Wait()
					return nil
				})
				if err != nil {
					t.Errorf("A.RunSync: %v", err)
				}
			}()
		}
		outer.Wait()
		if err := T.Close(); err != nil {
			t.Fatal(err)
		}
		g.check(t)
		for i := range int(next.Load()) {
			if n := bRuns[i].Load(); n != 1 {
				t.Errorf("B task %d ran %d times", i, n)
			}
		}
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
}

// "A queue lends no slot of its own: tasks that wait for tasks of their own
// queue keep their slots, and when every slot of the queue waits so, the
// waits last until their contexts end."
//
// On a serial queue, and on a concurrent queue whose two slots both wait,
// the awaited task must not start while the waiters wait; the waits end with
// their deadline, exactly, and the awaited task runs after. A broken
// implementation lends the queue's own slot (the awaited task runs during the
// wait, and on a serial queue beside its waiting task).
func TestOutside4OwnQueueLendsNothing(t *testing.T) {
	for _, limit := range []int{1, 2} {
		synctest.Test(t, func(t *testing.T) {
			var q *taskqueue.Queue
			if limit == 1 {
				q = taskqueue.NewSerial()
			} else {
				q = taskqueue.NewConcurrent(limit)
			}
			gate := make(chan struct{})
			var target *taskqueue.Handle
			var waiters []*taskqueue.Handle
			t0 := time.Now()
			for i := 0; i < limit; i++ {
				// Waiter i gives up after i+1 seconds: the first gives up
				// at 1s, freeing its slot, and the awaited task runs then.
				waiters = append(waiters, q.RunAsync(context.Background(), func(ctx context.Context) error {
					<-gate
					c, cancel := context.WithTimeout(ctx, time.Duration(i+1)*time.Second)
					defer cancel()
					err := target.Wait(c)
					if i == 0 && (!errors.Is(err, context.DeadlineExceeded) || time.Since(t0) != time.Second) {
						t.Errorf("limit %d: first Wait for a task of the own queue: %v after %v, want DeadlineExceeded after 1s", limit, err, time.Since(t0))
					}
					if i > 0 && (err != nil || time.Since(t0) != time.Second) {
						t.Errorf("limit %d: Wait %d: %v after %v, want nil after 1s, once the first waiter freed its slot", limit, i, err, time.Since(t0))
					}
					return nil
				}))
			}
			var ranAt atomic.Int64
			target = q.RunAsync(context.Background(), func(context.Context) error {
				ranAt.Store(int64(time.Since(t0)))
				return nil
			})
			close(gate)
			for _, h := range append(waiters, target) {
				if err := h.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if at := time.Duration(ranAt.Load()); at != time.Second {
				t.Errorf("limit %d: the awaited task ran at %v, want 1s: when the first wait gave up, and not while every slot of its queue waited", limit, at)
			}
		})
	}
}

// With a free slot the wait for a task of the own queue completes: a
// concurrent queue of limit 2, one task waits for a later one, which runs on
// the other slot. A broken implementation that holds both slots hangs
// (synctest reports the deadlock).
func TestOutside4OwnQueueFreeSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(2)
		var later *taskqueue.Handle
		ready := make(chan struct{})
		h := q.RunAsync(context.Background(), func(ctx context.Context) error {
			<-ready
			return later.Wait(ctx)
		})
		later = q.RunAsync(context.Background(), func(context.Context) error { return nil })
		close(ready)
		if err := h.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
