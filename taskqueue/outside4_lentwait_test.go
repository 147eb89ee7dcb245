package taskqueue_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// "Wait blocks until the task is done and returns Err, or until ctx is done
// and returns ctx.Err()", and a wait that lends the task's slot "returns
// ctx.Err() once the slot is back". Here the waiting task lends its slot: T
// has one slot, held by A's task, which waits for B's task X; X runs on the
// lent slot and blocks. Canceling the wait's context ends the wait with
// context.Canceled once X has given the slot back, not before: the task's
// own code would otherwise go on beside X on a target of one slot. Group.Wait
// likewise. A broken implementation returns while X still runs on the slot,
// or never returns.
func TestOutside4LendingWaitGivesUp(t *testing.T) {
	waits := map[string]func(ctx context.Context, B *taskqueue.Queue, x func(context.Context) error) error{
		"Handle.Wait": func(ctx context.Context, B *taskqueue.Queue, x func(context.Context) error) error {
			return B.RunAsync(context.Background(), x).Wait(ctx)
		},
		"Group.Wait": func(ctx context.Context, B *taskqueue.Queue, x func(context.Context) error) error {
			g := taskqueue.NewGroup(context.Background(), B)
			g.Go(x)
			return g.Wait(ctx)
		},
	}
	for name, wait := range waits {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				T := taskqueue.NewSerial()
				A := taskqueue.NewSerial(taskqueue.WithTarget(T))
				B := taskqueue.NewSerial(taskqueue.WithTarget(T))
				xIn := make(chan struct{})
				xRelease := make(chan struct{})
				xDone := make(chan struct{})
				err := A.RunSync(context.Background(), func(ctx context.Context) error {
					c, cancel := context.WithCancel(ctx)
					waitDone := make(chan error, 1)
					go func() {
						waitDone <- wait(c, B, func(context.Context) error {
							close(xIn)
							<-xRelease
							close(xDone)
							return nil
						})
					}()
					<-xIn
					cancel()
					synctest.Wait()
					select {
					case err := <-waitDone:
						t.Errorf("canceled wait returned %v while X still ran on the lent slot", err)
						close(xRelease)
						return nil
					default:
					}
					close(xRelease)
					// By the time the slot is back X is done, and so, for
					// Group.Wait, is the group, which it may report instead.
					if err := <-waitDone; err != context.Canceled && (name == "Handle.Wait" || err != nil) {
						t.Errorf("canceled wait returned %v once X was done, want context.Canceled", err)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				<-xDone
				if err := T.Close(); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

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
