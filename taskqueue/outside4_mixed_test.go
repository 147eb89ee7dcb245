package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// Every way in: Go, TryGo, RunAsync, RunSync (on the caller when idle, from
// outside), RunBarrier, and tasks whose helpers call RunSync in their place
// with contexts that are canceled while they wait for their turn. On a
// serial queue, or a concurrent one of limit 3, the gauge of functions
// running at once never passes the limit; every call reports either that its
// function ran (nil) or an error without running it, never both and never
// neither; and once idle, Stats add up (Completed = Succeeded + Failed +
// Panicked, nothing queued or running). A broken implementation overlaps an
// in-place function with the queue's other tasks, runs a call that reported
// its context's error (or loses one that reported nil), or counts a task
// twice.
func TestOutside4MixedExactlyOnce(t *testing.T) {
	for _, limit := range []int{1, 3} {
		for round := 0; round < 8; round++ {
			t.Run(fmt.Sprintf("limit=%d/round=%d", limit, round), func(t *testing.T) {
				var q *taskqueue.Queue
				if limit == 1 {
					q = taskqueue.NewSerial(taskqueue.WithPanicHandler(func(*taskqueue.PanicError) {}))
				} else {
					q = taskqueue.NewConcurrent(limit, taskqueue.WithPanicHandler(func(*taskqueue.PanicError) {}))
				}
				g := newO3Gauge("queue", limit)
				var bad atomic.Value
				fail := func(s string) { bad.CompareAndSwap(nil, s) }
				var barrierAlone atomic.Bool
				barrierAlone.Store(true)
				body := func(what string) {
					g.enter(what)
					runtime.Gosched()
					g.leave()
				}
				// check runs one call whose function marks it ran, and checks
				// that it ran exactly when the call reports nil.
				check := func(what string, call func(f func()) error) {
					var ran atomic.Int32
					err := call(func() { ran.Add(1); body(what) })
					switch {
					case err == nil && ran.Load() != 1:
						fail(fmt.Sprintf("%s: nil error, ran %d times", what, ran.Load()))
					case err != nil && ran.Load() != 0:
						fail(fmt.Sprintf("%s: %v, and ran %d times", what, err, ran.Load()))
					}
				}
				var wg sync.WaitGroup
				for w := 0; w < 4; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						rng := rand.New(rand.NewPCG(uint64(round), uint64(w)))
						var hs []*taskqueue.Handle
						var hran []*atomic.Int32
						for i := 0; i < 60; i++ {
							switch rng.IntN(6) {
							case 0:
								if err := q.Go(func() { body("Go") }); err != nil {
									fail("Go: " + err.Error())
								}
							case 1:
								q.TryGo(func() { body("TryGo") })
							case 2:
								ran := new(atomic.Int32)
								hran = append(hran, ran)
								hs = append(hs, q.RunAsync(context.Background(), func(context.Context) error { ran.Add(1); body("RunAsync"); return nil }))
							case 3:
								check("outsider RunSync", func(f func()) error {
									return q.RunSync(context.Background(), func(context.Context) error { f(); return nil })
								})
							case 4:
								ran := new(atomic.Int32)
								hran = append(hran, ran)
								hs = append(hs, q.RunBarrier(context.Background(), func(context.Context) error {
									ran.Add(1)
									if g.cur.Load() != 0 {
										barrierAlone.Store(false)
									}
									body("barrier")
									return nil
								}))
							default:
								check("task with helpers", func(f func()) error {
									return q.RunSync(context.Background(), func(ctx context.Context) error {
										f()
										var hw sync.WaitGroup
										for h := 0; h < 3; h++ {
											hw.Add(1)
											go func() {
												defer hw.Done()
												for j := 0; j < 5; j++ {
													c, cancel := context.WithCancel(ctx)
													if j%2 == 1 {
														go func() { runtime.Gosched(); cancel() }()
													}
													check("in-place RunSync", func(f func()) error {
														err := q.RunSync(c, func(context.Context) error { f(); return nil })
														if err != nil && !errors.Is(err, context.Canceled) {
															fail("in-place RunSync: " + err.Error())
														}
														return err
													})
													cancel()
												}
											}()
										}
										hw.Wait()
										return nil
									})
								})
							}
						}
						for k, h := range hs {
							if err := h.Wait(context.Background()); err != nil || hran[k].Load() != 1 {
								fail(fmt.Sprintf("handle: %v, ran %d times", err, hran[k].Load()))
							}
						}
					}()
				}
				wg.Wait()
				if err := q.Close(); err != nil {
					t.Fatal(err)
				}
				g.check(t)
				if v := bad.Load(); v != nil {
					t.Fatal(v)
				}
				if !barrierAlone.Load() {
					t.Errorf("a barrier started while another function ran")
				}
				st := q.Stats()
				if st.Completed != st.Succeeded+st.Failed+st.Panicked || st.Queued != 0 || st.Running != 0 || st.Delayed != 0 {
					t.Errorf("Stats of an idle queue do not add up: %+v", st)
				}
			})
		}
	}
}
