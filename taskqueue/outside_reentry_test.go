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

// RunSync with the context of a task that has already returned is not in that
// task's place: it must not run beside the queue's next task.
func TestOutsideRunSyncWithContextOfEndedTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		ctx := context.Background()
		var ex exclusive
		signal := make(chan struct{})
		res := make(chan error, 1)
		h := q.RunAsync(ctx, func(tctx context.Context) error {
			ex.enter()
			defer ex.leave()
			go func() {
				<-signal
				res <- q.RunSync(tctx, func(context.Context) error {
					ex.enter()
					ex.leave()
					return nil
				})
			}()
			return nil
		})
		if err := h.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		hu := q.RunAsync(ctx, func(context.Context) error {
			ex.enter()
			close(signal)
			<-release
			ex.leave()
			return nil
		})
		synctest.Wait()
		close(release)
		if err := hu.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		err := <-res
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("late RunSync: %v", err)
		}
		if ex.overlap.Load() != 0 {
			t.Errorf("RunSync with an ended task's context ran beside the next task")
		}
		q.Close()
	})
}

// Functions run in one task's place from several helper goroutines take turns,
// also on a concurrent queue, and the queue's limit holds with them.
func TestOutsideInPlaceHelpersTakeTurnsConcurrent(t *testing.T) {
	q := taskqueue.NewConcurrent(2)
	ctx := context.Background()
	var running, maxRunning atomic.Int32
	var perTask [4]exclusive
	note := func() func() {
		r := running.Add(1)
		for {
			m := maxRunning.Load()
			if r <= m || maxRunning.CompareAndSwap(m, r) {
				break
			}
		}
		return func() { running.Add(-1) }
	}
	var hs []*taskqueue.Handle
	for ti := range 4 {
		hs = append(hs, q.RunAsync(ctx, func(tctx context.Context) error {
			var wg sync.WaitGroup
			for range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 50 {
						if err := q.RunSync(tctx, func(ictx context.Context) error {
							perTask[ti].enter()
							done := note()
							// nested call with the inner context also runs in place
							err := q.RunSync(ictx, func(context.Context) error { return nil })
							done()
							perTask[ti].leave()
							return err
						}); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			return nil
		}))
	}
	for _, h := range hs {
		if err := h.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	q.Close()
	for i := range perTask {
		if n := perTask[i].overlap.Load(); n != 0 {
			t.Errorf("task %d: %d in-place functions overlapped", i, n)
		}
	}
	if m := maxRunning.Load(); m > 2 {
		t.Errorf("%d in-place functions ran at once on a queue of limit 2", m)
	}
}

// CancelKey racing with submissions: every accepted task runs once or is counted
// as canceled.
func TestOutsideKeyedCancelKeyRace(t *testing.T) {
	for round := range 30 {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[int](target)
		var accepted, ran, canceled atomic.Int64
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for key := range 3 {
			wg.Add(2)
			go func() {
				defer wg.Done()
				for range 200 {
					if k.Go(key, func() { ran.Add(1) }) == nil {
						accepted.Add(1)
					}
				}
			}()
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					canceled.Add(int64(k.CancelKey(key)))
					time.Sleep(time.Microsecond)
				}
			}()
		}
		time.AfterFunc(time.Millisecond, func() { close(stop) })
		wg.Wait()
		if err := target.Close(); err != nil {
			t.Fatal(err)
		}
		if accepted.Load() != ran.Load()+canceled.Load() {
			t.Fatalf("round %d: accepted %d, ran %d, CancelKey counted %d", round, accepted.Load(), ran.Load(), canceled.Load())
		}
		tot := k.Total()
		if tot.Canceled != uint64(canceled.Load()) || tot.Completed != uint64(ran.Load()) {
			t.Fatalf("round %d: Total %+v, ran %d canceled %d", round, tot, ran.Load(), canceled.Load())
		}
		if k.Lanes() != 0 {
			t.Fatalf("round %d: Lanes %d", round, k.Lanes())
		}
	}
}
