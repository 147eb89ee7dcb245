package taskqueue_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// Helpers of a serial queue's task that the task does not wait for call
// RunSync with its context while the task returns and the next task starts.
// Docs: "once the task returns its context is an outsider's", "functions run
// in one task's place take turns", "a serial queue runs one task at a time".
// A broken queue lets a call that found the task running (or just ended) run
// beside the next task, or lets two helpers' functions overlap; it runs a call
// twice, or loses one (a nil error with no run), or hangs.
func TestOutside3SerialHelpersRaceTaskReturn(t *testing.T) {
	for iter := 0; iter < 150 && !t.Failed(); iter++ {
		q := taskqueue.NewSerial()
		own := newO3Owners()
		var helpers sync.WaitGroup
		var lost, twice atomic.Int64
		ctx := context.Background()
		var handles []*taskqueue.Handle
		for i := 1; i <= 12; i++ {
			id := i
			handles = append(handles, q.RunAsync(ctx, func(tctx context.Context) error {
				own.enter(false, id)
				for k := 0; k < 3; k++ {
					helpers.Add(1)
					go func() {
						defer helpers.Done()
						dctx, cancel := context.WithTimeout(tctx, 20*time.Second)
						defer cancel()
						var ran atomic.Int64
						err := q.RunSync(dctx, func(context.Context) error {
							ran.Add(1)
							own.enter(true, id)
							runtime.Gosched()
							own.leave(true, id)
							return nil
						})
						if errors.Is(err, context.DeadlineExceeded) {
							t.Errorf("task %d: helper RunSync hung: %v", id, err)
						}
						if err == nil && ran.Load() != 1 {
							lost.Add(1)
						}
						if ran.Load() > 1 {
							twice.Add(1)
						}
					}()
				}
				runtime.Gosched()
				own.leave(false, id)
				return nil
			}))
		}
		for _, h := range handles {
			wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			if err := h.Wait(wctx); err != nil {
				t.Errorf("task: %v", err)
			}
			cancel()
		}
		o3WaitGroup(t, &helpers, 20*time.Second, "helpers")
		own.check(t)
		if lost.Load() != 0 || twice.Load() != 0 {
			t.Errorf("RunSync returned nil without running f %d times; ran f twice %d times", lost.Load(), twice.Load())
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		s := q.Stats()
		if s.Completed != s.Succeeded+s.Failed+s.Panicked || s.Running != 0 || s.Queued != 0 {
			t.Errorf("stats do not add up on an idle queue: %+v", s)
		}
	}
}

// A task of a serial queue starts helpers and waits for them; each helper
// calls RunSync with the task's context many times, some nested with the
// inner function's context. Docs: "This holds for every goroutine that works
// for the task with its context ... Functions run in one task's place take
// turns: no two of them overlap ... each gets a context of its own for its own
// nested calls." A broken queue runs two helpers' functions at once (the count
// goes to 2), runs a task's helper beside another task, or deadlocks a nested
// call.
func TestOutside3SerialManyHelpersWaitedFor(t *testing.T) {
	for iter := 0; iter < 40 && !t.Failed(); iter++ {
		q := taskqueue.NewSerial()
		g := newO3Gauge("serial", 1)
		var runs atomic.Int64
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var handles []*taskqueue.Handle
		for i := 0; i < 6; i++ {
			handles = append(handles, q.RunAsync(ctx, func(tctx context.Context) error {
				g.enter("body")
				runtime.Gosched()
				g.leave()
				var wg sync.WaitGroup
				for k := 0; k < 4; k++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for r := 0; r < 10; r++ {
							err := q.RunSync(tctx, func(fctx context.Context) error {
								g.enter("in-place")
								runs.Add(1)
								runtime.Gosched()
								g.leave()
								if r%3 == 0 {
									// nested, with the inner context
									return q.RunSync(fctx, func(context.Context) error {
										g.enter("nested in-place")
										runs.Add(1)
										g.leave()
										return nil
									})
								}
								return nil
							})
							if err != nil {
								t.Errorf("helper RunSync: %v", err)
								return
							}
						}
					}()
				}
				wg.Wait()
				return nil
			}))
		}
		for _, h := range handles {
			if err := h.Wait(ctx); err != nil {
				t.Errorf("task: %v", err)
			}
		}
		cancel()
		g.check(t)
		if want := int64(6 * 4 * (10 + 4)); runs.Load() != want {
			t.Errorf("ran %d in-place functions, want %d", runs.Load(), want)
		}
	}
}
