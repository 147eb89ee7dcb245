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

// o3TaskWithHelpers runs on q one task whose n helpers call RunSync with its
// context, each after ready is closed, and returns the task's handle and how
// many helper functions ran; gauge g counts what executes.
func o3TaskWithHelpers(t *testing.T, ctx context.Context, q *taskqueue.Queue, g *o3Gauge, n int, started chan<- struct{}, ready <-chan struct{}) (*taskqueue.Handle, *atomic.Int64) {
	var ran atomic.Int64
	h := q.RunAsync(ctx, func(tctx context.Context) error {
		close(started)
		<-ready
		var wg sync.WaitGroup
		for k := 0; k < n; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := q.RunSync(tctx, func(context.Context) error {
					g.enter("in place")
					ran.Add(1)
					runtime.Gosched()
					g.leave()
					return nil
				}); err != nil {
					t.Errorf("helper RunSync: %v", err)
				}
			}()
		}
		wg.Wait()
		return nil
	})
	return h, &ran
}

// Docs, Suspend: "A RunSync on a suspended queue waits, unless it comes from
// one of q's running tasks, which it runs in place of"; Shutdown: "except
// RunSync from one of q's tasks, which runs in the task's place and adds no
// work" (CloseNow closes as Shutdown does). Helpers of a running task call
// RunSync with its context after the queue is suspended, or closed with
// CloseNow. A broken queue makes them wait for Resume (a hang: the deadline
// reports it), refuses them with ErrClosed, or runs them beside each other.
func TestOutside3InPlaceHelpersWhileSuspendedOrClosed(t *testing.T) {
	for _, mode := range []string{"suspend", "closenow"} {
		for _, kind := range []string{"serial", "concurrent(2)"} {
			t.Run(mode+"/"+kind, func(t *testing.T) {
				q := taskqueue.NewSerial()
				limit := 1
				if kind != "serial" {
					q, limit = taskqueue.NewConcurrent(2), 2
				}
				g := newO3Gauge(kind, limit)
				ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
				defer cancel()
				started, ready := make(chan struct{}), make(chan struct{})
				h, ran := o3TaskWithHelpers(t, ctx, q, g, 8, started, ready)
				// a second task queued behind, which CloseNow cancels
				h2 := q.RunAsync(ctx, func(context.Context) error {
					g.enter("queued task")
					g.leave()
					return nil
				})
				<-started
				if mode == "suspend" {
					q.Suspend()
				} else {
					q.CloseNow()
				}
				close(ready)
				if err := h.Wait(ctx); err != nil {
					t.Errorf("task: %v", err)
				}
				if ran.Load() != 8 {
					t.Errorf("%d of 8 in-place functions ran", ran.Load())
				}
				if mode == "suspend" {
					q.Resume()
					if err := h2.Wait(ctx); err != nil {
						t.Errorf("queued task: %v", err)
					}
				} else if err := h2.Wait(ctx); kind == "serial" && !errors.Is(err, taskqueue.ErrClosed) {
					t.Errorf("queued task after CloseNow: %v, want ErrClosed", err)
				}
				g.check(t)
			})
		}
	}
}

// Tasks whose helpers run RunSync in their place race CloseNow on a
// concurrent queue. Docs: CloseNow "cancels every task that has not
// started"; "Every handle completes"; Stats "add up exactly once q is idle":
// Completed is Succeeded + Failed + Panicked, and every submission ends as
// completed, canceled or rejected (an in-place RunSync counts as a completed
// task, as the queue reports it). A broken queue loses a call (the sum is
// short), counts one twice, or leaves a handle pending (the deadline).
func TestOutside3CloseNowRacesInPlaceStatsAddUp(t *testing.T) {
	for iter := 0; iter < 40 && !t.Failed(); iter++ {
		q := taskqueue.NewConcurrent(2)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		var calls, ranInPlace atomic.Int64
		var helpers sync.WaitGroup
		var hs []*taskqueue.Handle
		closed := make(chan struct{})
		go func() {
			for i := 0; i < iter%7*50; i++ {
				runtime.Gosched()
			}
			q.CloseNow()
			close(closed)
		}()
		for i := 0; i < 20; i++ {
			calls.Add(1)
			hs = append(hs, q.RunAsync(ctx, func(tctx context.Context) error {
				var wg sync.WaitGroup
				for k := 0; k < 3; k++ {
					wg.Add(1)
					helpers.Add(1)
					calls.Add(1)
					go func() {
						defer wg.Done()
						defer helpers.Done()
						if err := q.RunSync(tctx, func(context.Context) error {
							ranInPlace.Add(1)
							return nil
						}); err != nil {
							t.Errorf("in-place RunSync of a running task: %v", err)
						}
					}()
				}
				wg.Wait()
				return nil
			}))
		}
		<-closed
		for _, h := range hs {
			if err := h.Wait(ctx); err != nil && !errors.Is(err, taskqueue.ErrClosed) {
				t.Errorf("task: %v", err)
			}
		}
		o3WaitGroup(t, &helpers, 15*time.Second, "helpers")
		if err := q.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		s := q.Stats()
		if s.Completed != s.Succeeded+s.Failed+s.Panicked || s.Running != 0 || s.Queued != 0 {
			t.Errorf("stats of an idle queue: %+v", s)
		}
		if got := s.Completed + s.Canceled + s.Rejected; got != uint64(calls.Load()) {
			t.Errorf("completed %d + canceled %d + rejected %d = %d, want %d calls (%d ran in place)",
				s.Completed, s.Canceled, s.Rejected, got, calls.Load(), ranInPlace.Load())
		}
	}
}
