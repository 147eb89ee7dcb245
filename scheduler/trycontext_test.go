package scheduler_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// TestTryRunContextEndsItsWaitForALentSlot: an item of child a holds the
// one slot of target t; one of its goroutines waits for work of sibling b
// (Await), which runs on the lent slot and blocks. TryRunContext in the
// item's place must wait for the slot to come back, and when its context
// ends first it runs nothing and returns ctx.Err(); TryRun, which has no
// context, runs f once the slot is back.
func TestTryRunContextEndsItsWaitForALentSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := scheduler.New(1)
		a := scheduler.New(1, scheduler.WithTarget(target))
		b := scheduler.New(1, scheduler.WithTarget(target))
		inB, releaseB, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
		var ranCanceled, ranLater bool
		var err error
		if _, e := a.Enqueue(o4Task(func(sl scheduler.Slot) {
			waited := make(chan struct{})
			go func() {
				bDone := make(chan struct{})
				if _, e := b.Enqueue(o4Task(func(scheduler.Slot) {
					close(inB)
					<-releaseB
					close(bDone)
				})); e != nil {
					t.Errorf("Enqueue on b: %v", e)
				}
				b.Await(sl, func() { <-bDone })
				close(waited)
			}()
			<-inB // b's item runs on the slot the wait lent
			ctx, cancel := context.WithCancel(context.Background())
			ret := make(chan struct{})
			go func() {
				_, err = a.TryRunContext(ctx, sl, func(scheduler.Slot) { ranCanceled = true })
				close(ret)
			}()
			synctest.Wait()
			cancel()
			<-ret
			later := make(chan struct{})
			go func() {
				a.TryRun(sl, func(scheduler.Slot) { ranLater = true })
				close(later)
			}()
			synctest.Wait()
			if ranLater {
				t.Error("TryRun ran in the item's place while its slot was lent")
			}
			close(releaseB)
			<-later
			<-waited
			close(done)
		})); e != nil {
			t.Fatal(e)
		}
		<-done
		if !errors.Is(err, context.Canceled) || ranCanceled {
			t.Errorf("TryRunContext canceled while it waited = %v, ran %v; want context.Canceled, not run", err, ranCanceled)
		}
		if !ranLater {
			t.Error("TryRun did not run once the slot was back")
		}
		target.Close()
		a.Close()
		b.Close()
	})
}
