package taskqueue_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// "Once the task has returned, its context is an outsider's and holds no
// slot": waits with a returned task's context lend nothing. T has one slot.
// A's task keeps its context and returns; T's task R then holds the slot and
// blocks. A wait for B's task with the kept context must not lend R's slot:
// B's task must not run beside R. A broken implementation lends the slot
// the kept context once named, which now is another task's.
func TestOutside4ReturnedContextLendsNothing(t *testing.T) {
	for round := 0; round < 20; round++ {
		synctest.Test(t, func(t *testing.T) {
			T := taskqueue.NewSerial()
			A := taskqueue.NewSerial(taskqueue.WithTarget(T))
			B := taskqueue.NewSerial(taskqueue.WithTarget(T))
			g := newO3Gauge("target of one slot", 1)
			var kept context.Context
			if err := A.RunSync(context.Background(), func(ctx context.Context) error { kept = ctx; return nil }); err != nil {
				t.Fatal(err)
			}
			release := make(chan struct{})
			hr := T.RunAsync(context.Background(), func(context.Context) error {
				g.enter("T's task R")
				<-release
				g.leave()
				return nil
			})
			synctest.Wait()
			hb := B.RunAsync(context.Background(), func(context.Context) error { g.enter("B's task"); g.leave(); return nil })
			waitDone := make(chan error, 1)
			go func() { waitDone <- hb.Wait(kept) }()
			synctest.Wait()
			if hb.IsDone() {
				t.Errorf("B's task ran while R held T's one slot: a returned task's context lent it")
			}
			close(release)
			if err := hr.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := <-waitDone; err != nil && err != context.Canceled {
				t.Errorf("wait with the kept context: %v", err)
			}
			if err := T.Close(); err != nil {
				t.Fatal(err)
			}
			g.check(t)
		})
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
}
