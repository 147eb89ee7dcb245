package taskqueue_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// "A task of a child runs RunSync on its target, or on an idle sibling, in
// its own place, on its slot of the target, taking turns with the task's
// other functions run in its place."
//
// Target T has two slots; A and B are serial children. A's task has three
// helpers that call B.RunSync with its context, and each in-place function
// submits a task of B. The functions that run on B (in place or as B's
// tasks) never overlap (B is serial), those in A's task's place never
// overlap, and T never runs more than two. A broken implementation lets B's
// queued task start on T's free slot beside an in-place function that holds
// B's slot, or runs two in-place functions of A's task at once.
func TestOutside4IdleSiblingInPlace(t *testing.T) {
	for round := 0; round < 30; round++ {
		synctest.Test(t, func(t *testing.T) {
			T := taskqueue.NewConcurrent(2)
			A := taskqueue.NewSerial(taskqueue.WithTarget(T))
			B := taskqueue.NewSerial(taskqueue.WithTarget(T))
			tg := newO3Gauge("target of two slots", 2)
			bg := newO3Gauge("serial sibling B", 1)
			pg := newO3Gauge("functions in the place of A's task", 1)
			var bTasks sync.WaitGroup
			var bRan atomic.Int32
			err := A.RunSync(context.Background(), func(ctx context.Context) error {
				var wg sync.WaitGroup
				for h := 0; h < 3; h++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for j := 0; j < 4; j++ {
							err := B.RunSync(ctx, func(context.Context) error {
								gs := o3Gauges{tg, bg, pg}
								gs.enter("B.RunSync from A's task")
								bTasks.Add(1)
								B.Go(func() {
									gs := o3Gauges{tg, bg}
									gs.enter("B's task")
									bRan.Add(1)
									time.Sleep(time.Millisecond) // fake time: every other goroutine runs meanwhile
									gs.leave()
									bTasks.Done()
								})
								time.Sleep(time.Millisecond) // fake time: every other goroutine runs meanwhile
								gs.leave()
								return nil
							})
							if err != nil {
								t.Errorf("B.RunSync: %v", err)
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
			bTasks.Wait()
			if err := T.Close(); err != nil {
				t.Fatal(err)
			}
			if bRan.Load() != 12 {
				t.Errorf("B ran %d tasks, want 12", bRan.Load())
			}
			o3Gauges{tg, bg, pg}.check(t)
		})
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
}
