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

// A helper of a task calls RunSync with a context derived from the task's
// while another helper's function holds the task's place; then its context is
// canceled. Docs: "If ctx is done before f starts, f does not run and RunSync
// returns ctx.Err()". A broken queue keeps the call waiting for its turn until
// the holder ends (the call returns only after release, or runs f anyway).
func TestOutside3InPlaceTurnWaitHonorsContext(t *testing.T) {
	for _, name := range []string{"serial", "concurrent(2)"} {
		t.Run(name, func(t *testing.T) {
			var q *taskqueue.Queue
			if name == "serial" {
				q = taskqueue.NewSerial()
			} else {
				q = taskqueue.NewConcurrent(2)
			}
			release := make(chan struct{})
			holding := make(chan struct{})
			var ran2 atomic.Bool
			res := make(chan error, 1)
			h := q.RunAsync(context.Background(), func(tctx context.Context) error {
				var wg sync.WaitGroup
				wg.Add(2)
				go func() {
					defer wg.Done()
					_ = q.RunSync(tctx, func(context.Context) error {
						close(holding)
						<-release
						return nil
					})
				}()
				go func() {
					defer wg.Done()
					<-holding
					cctx, cancel := context.WithCancel(tctx)
					go func() {
						for k := 0; k < 1000; k++ {
							runtime.Gosched() // let the call start waiting
						}
						cancel()
					}()
					res <- q.RunSync(cctx, func(context.Context) error {
						ran2.Store(true)
						return nil
					})
				}()
				wg.Wait()
				return nil
			})
			got := false
			select {
			case err := <-res:
				got = true
				if !errors.Is(err, context.Canceled) {
					t.Errorf("RunSync canceled while waiting its turn returned %v, want context.Canceled", err)
				}
				if ran2.Load() {
					t.Error("f ran although its context was done before it started")
				}
			case <-time.After(10 * time.Second):
				t.Error("RunSync waiting its turn in the task's place did not return 10s after its context was canceled: it waits for the holder")
			}
			close(release)
			if got {
				// the call returned already: its one result was read above
			} else {
				select {
				case err := <-res:
					if ran2.Load() || !errors.Is(err, context.Canceled) {
						t.Errorf("after the holder was released, the RunSync canceled before its f started returned %v; f ran: %v", err, ran2.Load())
					}
				case <-time.After(10 * time.Second):
					t.Error("the canceled RunSync did not return even after the holder was released (hang)")
				}
			}
			wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer wcancel()
			if err := h.Wait(wctx); err != nil {
				t.Errorf("task: %v", err)
			}
		})
	}
}

// A function run in a task's place by a helper panics, or calls
// runtime.Goexit. Docs: "If f panics, RunSync panics in the caller with the
// *PanicError ... if f calls runtime.Goexit, so does RunSync", and the place
// is then free for the other helpers' functions, which take turns. A broken
// queue keeps the turn held after a panic or Goexit (the others hang), lets
// them overlap afterwards, or loses the panic.
func TestOutside3InPlacePanicAndGoexitFreeTheTurn(t *testing.T) {
	for iter := 0; iter < 30 && !t.Failed(); iter++ {
		q := taskqueue.NewSerial()
		g := newO3Gauge("serial", 1)
		var panics, goexits, oks atomic.Int64
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		h := q.RunAsync(ctx, func(tctx context.Context) error {
			var wg sync.WaitGroup
			for k := 0; k < 6; k++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 0; r < 6; r++ {
						mode := (k + r) % 3
						var finished, panicked bool
						done := make(chan struct{})
						go func() {
							defer close(done)
							defer func() {
								if v := recover(); v != nil {
									panicked = true
									var pe *taskqueue.PanicError
									if e, ok := v.(error); !ok || !errors.As(e, &pe) {
										t.Errorf("RunSync panicked with %T %v, want *PanicError", v, v)
									}
								}
							}()
							err := q.RunSync(tctx, func(context.Context) error {
								g.enter("in place")
								runtime.Gosched()
								g.leave()
								switch mode {
								case 1:
									panic("boom")
								case 2:
									runtime.Goexit()
								}
								return nil
							})
							finished = true
							if err != nil {
								t.Errorf("RunSync: %v", err)
							}
						}()
						<-done
						switch {
						case finished && mode == 0:
							oks.Add(1)
						case panicked && mode == 1:
							panics.Add(1)
						case !finished && !panicked && mode == 2:
							goexits.Add(1)
						default:
							t.Errorf("mode %d: finished %v panicked %v", mode, finished, panicked)
						}
					}
				}()
			}
			wg.Wait()
			return nil
		})
		if err := h.Wait(ctx); err != nil {
			t.Errorf("task: %v", err)
		}
		cancel()
		g.check(t)
		if oks.Load() != 12 || panics.Load() != 12 || goexits.Load() != 12 {
			t.Errorf("ok calls %d, panics %d, Goexits %d: want 12 of each", oks.Load(), panics.Load(), goexits.Load())
		}
	}
}
