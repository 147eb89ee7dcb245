package taskqueue_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// Lending under cancellation: T has two slots; A's tasks (A of limit 2)
// start helpers that wait for tasks of B (limit 3) with contexts that are
// canceled at random moments, and helpers that call in their task's place on
// T with such contexts. Every function on T's slots enters a gauge of limit
// 2; every B task runs exactly once; an in-place call runs its function
// exactly when it reports nil. A broken implementation loses track of a lent
// slot when a wait gives up (over the limit, or a slot never lent back and
// a hang), or runs a call that reported its context's error.
func TestOutside4LendingCancelStress(t *testing.T) {
	for round := 0; round < 30; round++ {
		T := taskqueue.NewConcurrent(2)
		A := taskqueue.NewConcurrent(2, taskqueue.WithTarget(T))
		B := taskqueue.NewConcurrent(3, taskqueue.WithTarget(T))
		g := newO3Gauge("target of two slots", 2)
		var bad atomic.Value
		fail := func(s string) { bad.CompareAndSwap(nil, s) }
		work := func(what string) {
			g.enter(what)
			runtime.Gosched()
			g.leave()
		}
		var bHandles sync.Map
		var bRuns sync.Map
		var nextB atomic.Int64
		var outer sync.WaitGroup
		for k := 0; k < 3; k++ {
			outer.Add(1)
			go func() {
				defer outer.Done()
				err := A.RunSync(context.Background(), func(ctx context.Context) error {
					work("A's task")
					var wg sync.WaitGroup
					for h := 0; h < 3; h++ {
						wg.Add(1)
						go func() {
							defer wg.Done()
							rng := rand.New(rand.NewPCG(uint64(round), uint64(k*8+h)))
							for j := 0; j < 8; j++ {
								c, cancel := context.WithCancel(ctx)
								if rng.IntN(2) == 0 {
									spins := rng.IntN(3)
									go func() {
										for i := spins; i > 0; i-- {
											runtime.Gosched()
										}
										cancel()
									}()
								}
								if rng.IntN(2) == 0 {
									id := nextB.Add(1)
									runs := new(atomic.Int32)
									bRuns.Store(id, runs)
									hb := B.RunAsync(context.Background(), func(context.Context) error { runs.Add(1); work("B's task"); return nil })
									bHandles.Store(id, hb)
									_ = hb.Wait(c)
								} else {
									var ran atomic.Int32
									err := T.RunSync(c, func(context.Context) error { ran.Add(1); work("in place on T"); return nil })
									if (err == nil) != (ran.Load() == 1) || ran.Load() > 1 {
										fail(fmt.Sprintf("in-place call returned %v and ran %d times", err, ran.Load()))
									}
								}
								cancel()
							}
						}()
					}
					wg.Wait()
					return nil
				})
				if err != nil {
					fail("A.RunSync: " + err.Error())
				}
			}()
		}
		outer.Wait()
		if err := T.Close(); err != nil {
			t.Fatal(err)
		}
		bHandles.Range(func(id, h any) bool {
			if err := h.(*taskqueue.Handle).Err(); err != nil {
				fail(fmt.Sprintf("B task %d: %v", id, err))
			}
			r, _ := bRuns.Load(id)
			if n := r.(*atomic.Int32).Load(); n != 1 {
				fail(fmt.Sprintf("B task %d ran %d times", id, n))
			}
			return true
		})
		g.check(t)
		if v := bad.Load(); v != nil {
			t.Fatalf("round %d: %s", round, v)
		}
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
}
