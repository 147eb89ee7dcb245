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

// "Functions run in one task's place take turns (Apply's and Map's part on the
// caller included): no two of them overlap, whichever goroutines call."
//
// A serial queue's task starts helpers that it waits for: three call RunSync
// with the task's context in a loop, one runs Apply and one Map with it, while
// an outsider floods the queue with Go. Every function that runs on the queue
// enters one gauge of limit 1. An implementation that runs in-place functions
// from two goroutines at once (no turns), or lets Apply's caller part run
// beside a RunSync in the same place, or lets the outsider's tasks start in a
// slot lent by the waiting task, shows two at once.
func TestOutside4InPlaceTurnsSerial(t *testing.T) {
	for round := 0; round < 20; round++ {
		q := taskqueue.NewSerial()
		g := newO3Gauge("serial queue", 1)
		var ran atomic.Int64
		body := func(what string) {
			g.enter(what)
			ran.Add(1)
			for i := 0; i < 20; i++ {
				_ = i * i
			}
			g.leave()
		}
		stop := make(chan struct{})
		var outside sync.WaitGroup
		outside.Add(1)
		var outsiderRan atomic.Int64
		go func() {
			defer outside.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := q.Go(func() { body("outsider Go"); outsiderRan.Add(1) }); err != nil {
					t.Errorf("Go: %v", err)
					return
				}
				_ = q.RunSync(context.Background(), func(context.Context) error { body("outsider RunSync"); return nil })
			}
		}()
		const loops = 100
		err := q.RunSync(context.Background(), func(ctx context.Context) error {
			g.enter("task")
			g.leave()
			var wg sync.WaitGroup
			for h := 0; h < 3; h++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < loops; i++ {
						if err := q.RunSync(ctx, func(context.Context) error { body("in-place RunSync"); return nil }); err != nil {
							t.Errorf("in-place RunSync: %v", err)
							return
						}
					}
				}()
			}
			wg.Add(2)
			go func() {
				defer wg.Done()
				if err := taskqueue.Apply(ctx, q, loops, func(int) { body("Apply iteration") }); err != nil {
					t.Errorf("Apply: %v", err)
				}
			}()
			go func() {
				defer wg.Done()
				items := make([]int, loops)
				out, err := taskqueue.Map(ctx, q, items, func(_ context.Context, v int) (int, error) { body("Map call"); return v + 1, nil })
				if err != nil || len(out) != loops {
					t.Errorf("Map: %d results, %v", len(out), err)
				}
			}()
			wg.Wait()
			return nil
		})
		close(stop)
		outside.Wait()
		if err != nil {
			t.Fatalf("outer RunSync: %v", err)
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		g.check(t)
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
		if ran.Load() < 5*loops {
			t.Fatalf("only %d functions ran, want at least %d", ran.Load(), 5*loops)
		}
	}
}

// The same on a concurrent queue of limit 2 whose two slots are both held by
// tasks that wait for their helpers: Apply and Map cannot get a free slot, so
// every iteration runs on its caller in the task's place, and so the
// functions of one task never overlap each other, while the queue runs at most
// two. Neither task returns before the helpers of both are done. A broken implementation overlaps two functions of one task (one gauge
// per task, limit 1), or runs Apply's queued helpers on a slot a waiting task
// does not lend (queue gauge, limit 2).
func TestOutside4InPlaceTurnsConcurrent(t *testing.T) {
	for round := 0; round < 20; round++ {
		q := taskqueue.NewConcurrent(2)
		qg := newO3Gauge("queue of limit 2", 2)
		both := make(chan struct{})
		var started atomic.Int32
		// Neither task returns before the helpers of both are done: a slot
		// freed early would let the other task's Apply and Map run queued
		// helpers there, legitimately beside its in-place functions.
		var helpersOfBoth sync.WaitGroup
		helpersOfBoth.Add(2)
		hs := make([]*taskqueue.Handle, 2)
		for k := range hs {
			tg := newO3Gauge("functions in the place of one task", 1)
			hs[k] = q.RunAsync(context.Background(), func(ctx context.Context) error {
				if started.Add(1) == 2 {
					close(both)
				}
				<-both
				fn := func(what string) {
					qg.enter(what)
					tg.enter(what)
					for i := 0; i < 30; i++ {
						_ = i * i
					}
					tg.leave()
					qg.leave()
				}
				var wg sync.WaitGroup
				wg.Add(3)
				go func() {
					defer wg.Done()
					for i := 0; i < 100; i++ {
						if err := q.RunSync(ctx, func(context.Context) error { fn("RunSync"); return nil }); err != nil {
							t.Errorf("RunSync: %v", err)
							return
						}
					}
				}()
				go func() {
					defer wg.Done()
					if err := taskqueue.Apply(ctx, q, 100, func(int) { fn("Apply") }); err != nil {
						t.Errorf("Apply: %v", err)
					}
				}()
				go func() {
					defer wg.Done()
					if _, err := taskqueue.Map(ctx, q, make([]int, 100), func(context.Context, int) (int, error) { fn("Map"); return 0, nil }); err != nil {
						t.Errorf("Map: %v", err)
					}
				}()
				wg.Wait()
				helpersOfBoth.Done()
				helpersOfBoth.Wait()
				tg.check(t)
				return nil
			})
		}
		for _, h := range hs {
			if err := h.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		qg.check(t)
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
}

// "A call that waits for its turn gives up when its ctx is done", and waits
// for turns are durable for synctest. In a bubble, one helper of a serial
// queue's task runs an in-place function that blocks; a second helper's
// RunSync with a cancelable context derived from the task's waits for its
// turn. synctest.Wait must return (a wait that is not durable hangs it: the
// test then times out), the call must not have run, and after cancel it must
// return context.Canceled without running f. A broken implementation runs
// the second function beside the first, or keeps waiting after cancel.
func TestOutside4TurnWaitGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		release := make(chan struct{})
		var secondRan atomic.Bool
		var secondErr error
		secondDone := make(chan struct{})
		err := q.RunSync(context.Background(), func(ctx context.Context) error {
			entered := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = q.RunSync(ctx, func(context.Context) error {
					close(entered)
					<-release
					return nil
				})
			}()
			<-entered
			c2, cancel := context.WithCancel(ctx)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer close(secondDone)
				secondErr = q.RunSync(c2, func(context.Context) error { secondRan.Store(true); return nil })
			}()
			synctest.Wait()
			select {
			case <-secondDone:
				t.Errorf("second in-place call returned (%v, ran %v) while the first held the turn", secondErr, secondRan.Load())
			default:
			}
			cancel()
			synctest.Wait()
			select {
			case <-secondDone:
			default:
				t.Errorf("second in-place call still waits for its turn after its ctx was canceled")
			}
			close(release)
			wg.Wait()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if secondRan.Load() {
			t.Errorf("the canceled call ran its function")
		}
		if !errors.Is(secondErr, context.Canceled) {
			t.Errorf("the canceled call returned %v, want context.Canceled", secondErr)
		}
	})
}

// The same with a deadline and fake time: the waiting call gives up exactly
// when its deadline passes, not before, and Apply waiting for its turn gives
// up too, calling f for no iteration.
func TestOutside4TurnWaitDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		release := make(chan struct{})
		var applied atomic.Int64
		err := q.RunSync(context.Background(), func(ctx context.Context) error {
			entered := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = q.RunSync(ctx, func(context.Context) error { close(entered); <-release; return nil })
			}()
			<-entered
			start := time.Now()
			c2, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			err := q.RunSync(c2, func(context.Context) error { t.Errorf("ran past its deadline"); return nil })
			if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
				t.Errorf("RunSync waiting for its turn: %v after %v, want DeadlineExceeded after 1s", err, time.Since(start))
			}
			c3, cancel3 := context.WithTimeout(ctx, 2*time.Second)
			defer cancel3()
			start = time.Now()
			err = taskqueue.Apply(c3, q, 10, func(int) { applied.Add(1) })
			if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 2*time.Second {
				t.Errorf("Apply waiting for its turn: %v after %v, want DeadlineExceeded after 2s", err, time.Since(start))
			}
			close(release)
			wg.Wait()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := applied.Load(); n != 0 {
			t.Errorf("Apply that gave up called f %d times", n)
		}
	})
}

// "Once the task has returned, its context is an outsider's and holds no
// slot." A serial queue's first task keeps its context; after it has
// returned, a second task runs and blocks. RunSync with the kept context must
// not run beside the second task: it waits behind it (or fails with the
// context's error). A broken implementation still treats the kept context as
// the first task's and runs f at once, in a place that no longer exists.
func TestOutside4ContextAfterTaskIsOutsiders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		var kept context.Context
		if err := q.RunSync(context.Background(), func(ctx context.Context) error { kept = ctx; return nil }); err != nil {
			t.Fatal(err)
		}
		var busy atomic.Bool
		release := make(chan struct{})
		h := q.RunAsync(context.Background(), func(context.Context) error {
			busy.Store(true)
			<-release
			busy.Store(false)
			return nil
		})
		synctest.Wait()
		var overlapped atomic.Bool
		var ran atomic.Bool
		done := make(chan error, 1)
		go func() {
			done <- q.RunSync(kept, func(context.Context) error {
				ran.Store(true)
				if busy.Load() {
					overlapped.Store(true)
				}
				return nil
			})
		}()
		synctest.Wait()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("RunSync with a returned task's context ran at once beside the queue's running task (overlap %v)", overlapped.Load())
			} else if ran.Load() {
				t.Errorf("RunSync returned %v but ran f", err)
			}
		default:
		}
		close(release)
		if err := h.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if overlapped.Load() {
			t.Errorf("f ran while the serial queue's other task ran")
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
