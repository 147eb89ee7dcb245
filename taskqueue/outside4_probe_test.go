package taskqueue_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// Waits for a turn in a task's place are durable for synctest and give up
// with their context, whatever the queue: a concurrent queue, a child calling
// in place on its target, and a Keyed lane calling on its own key. One
// helper holds the turn (blocked on a channel); a second helper's call waits
// for it: synctest.Wait returns (a wait that is not durable hangs the test
// until it times out), the second call has not run, and canceling its
// context makes it return context.Canceled without running. A broken
// implementation runs the second function beside the first, or ignores the
// cancel.
func TestOutside4TurnWaitKinds(t *testing.T) {
	type kind struct {
		name string
		// run runs task as a task, and call calls in its place.
		run func(task func(ctx context.Context, call func(context.Context, func()) error) error) error
	}
	kinds := []kind{
		{"concurrent", func(task func(context.Context, func(context.Context, func()) error) error) error {
			q := taskqueue.NewConcurrent(3)
			return q.RunSync(context.Background(), func(ctx context.Context) error {
				return task(ctx, func(c context.Context, f func()) error {
					return q.RunSync(c, func(context.Context) error { f(); return nil })
				})
			})
		}},
		{"child on its target", func(task func(context.Context, func(context.Context, func()) error) error) error {
			T := taskqueue.NewConcurrent(3)
			A := taskqueue.NewSerial(taskqueue.WithTarget(T))
			return A.RunSync(context.Background(), func(ctx context.Context) error {
				return task(ctx, func(c context.Context, f func()) error {
					return T.RunSync(c, func(context.Context) error { f(); return nil })
				})
			})
		}},
		{"keyed lane", func(task func(context.Context, func(context.Context, func()) error) error) error {
			k := taskqueue.NewKeyed[int](taskqueue.NewConcurrent(3))
			return k.RunSync(context.Background(), 1, func(ctx context.Context) error {
				return task(ctx, func(c context.Context, f func()) error {
					return k.RunSync(c, 1, func(context.Context) error { f(); return nil })
				})
			})
		}},
	}
	for _, kd := range kinds {
		t.Run(kd.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				var secondRan bool
				var secondErr error
				err := kd.run(func(ctx context.Context, call func(context.Context, func()) error) error {
					entered := make(chan struct{})
					firstDone := make(chan error, 1)
					go func() { firstDone <- call(ctx, func() { close(entered); <-release }) }()
					<-entered
					c2, cancel := context.WithCancel(ctx)
					secondDone := make(chan struct{})
					go func() {
						defer close(secondDone)
						secondErr = call(c2, func() { secondRan = true })
					}()
					synctest.Wait()
					select {
					case <-secondDone:
						t.Errorf("second call returned (%v, ran %v) while the first held the task's turn", secondErr, secondRan)
					default:
					}
					cancel()
					synctest.Wait()
					select {
					case <-secondDone:
					default:
						t.Errorf("second call still waits after its context was canceled")
					}
					close(release)
					<-secondDone
					return <-firstDone
				})
				if err != nil {
					t.Fatal(err)
				}
				if secondRan || secondErr != context.Canceled {
					t.Errorf("canceled call: ran %v, returned %v; want not run, context.Canceled", secondRan, secondErr)
				}
			})
		})
	}
}

func o4InPlaceWhileLentSlotBusy(t *testing.T, call func(context.Context, *taskqueue.Queue, func()) error) {
	synctest.Test(t, func(t *testing.T) {
		T := taskqueue.NewSerial()
		A := taskqueue.NewSerial(taskqueue.WithTarget(T))
		B := taskqueue.NewSerial(taskqueue.WithTarget(T))
		g := newO3Gauge("target of one slot", 1)
		err := A.RunSync(context.Background(), func(ctx context.Context) error {
			xIn := make(chan struct{})
			xRelease := make(chan struct{})
			hx := B.RunAsync(context.Background(), func(context.Context) error {
				g.enter("B's task X")
				close(xIn)
				<-xRelease
				g.leave()
				return nil
			})
			waitDone := make(chan error, 1)
			go func() { waitDone <- hx.Wait(ctx) }()
			<-xIn
			c2, cancel := context.WithCancel(ctx)
			var ran bool
			var callErr error
			callDone := make(chan struct{})
			go func() {
				defer close(callDone)
				callErr = call(c2, T, func() { g.enter("in place on T"); ran = true; g.leave() })
			}()
			synctest.Wait()
			select {
			case <-callDone:
				t.Errorf("in-place call returned (%v, ran %v) while X ran on the lent slot", callErr, ran)
			default:
			}
			cancel()
			synctest.Wait()
			select {
			case <-callDone:
				if ran || callErr != context.Canceled {
					t.Errorf("canceled in-place call: ran %v, returned %v", ran, callErr)
				}
			default:
				t.Errorf("in-place call still waits after its context was canceled")
			}
			close(xRelease)
			if err := <-waitDone; err != nil {
				t.Errorf("Wait for X: %v", err)
			}
			<-callDone
			if ran || callErr != context.Canceled {
				t.Errorf("in-place call canceled before it could start, once X ended: ran %v, returned %v; want not run, context.Canceled", ran, callErr)
			}
			ran3 := false
			if err := T.RunSync(ctx, func(context.Context) error { g.enter("in place after X"); ran3 = true; g.leave(); return nil }); err != nil || !ran3 {
				t.Errorf("in-place call after X: %v, ran %v", err, ran3)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		g.check(t)
	})
}
