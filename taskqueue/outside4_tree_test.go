package taskqueue_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// "A queue lends no slot of its own: tasks that wait for tasks of their own
// queue keep their slots, and when every slot of the queue waits so, the
// waits last until their contexts end."
//
// On a serial queue, and on a concurrent queue whose two slots both wait,
// the awaited task must not start while the waiters wait; the waits end with
// their deadline, exactly, and the awaited task runs after. A broken
// implementation lends the queue's own slot (the awaited task runs during the
// wait, and on a serial queue beside its waiting task).
func TestOutside4OwnQueueLendsNothing(t *testing.T) {
	for _, limit := range []int{1, 2} {
		synctest.Test(t, func(t *testing.T) {
			// Not NewSerial: on a serial queue such a wait panics (see
			// TestWaitsThatWouldWaitForThemselvesPanic).
			q := taskqueue.NewConcurrent(limit)
			gate := make(chan struct{})
			var target *taskqueue.Handle
			var waiters []*taskqueue.Handle
			t0 := time.Now()
			for i := 0; i < limit; i++ {
				// Waiter i gives up after i+1 seconds: the first gives up
				// at 1s, freeing its slot, and the awaited task runs then.
				waiters = append(waiters, q.RunAsync(context.Background(), func(ctx context.Context) error {
					<-gate
					c, cancel := context.WithTimeout(ctx, time.Duration(i+1)*time.Second)
					defer cancel()
					err := target.Wait(c)
					if i == 0 && (!errors.Is(err, context.DeadlineExceeded) || time.Since(t0) != time.Second) {
						t.Errorf("limit %d: first Wait for a task of the own queue: %v after %v, want DeadlineExceeded after 1s", limit, err, time.Since(t0))
					}
					if i > 0 && (err != nil || time.Since(t0) != time.Second) {
						t.Errorf("limit %d: Wait %d: %v after %v, want nil after 1s, once the first waiter freed its slot", limit, i, err, time.Since(t0))
					}
					return nil
				}))
			}
			var ranAt atomic.Int64
			target = q.RunAsync(context.Background(), func(context.Context) error {
				ranAt.Store(int64(time.Since(t0)))
				return nil
			})
			close(gate)
			for _, h := range append(waiters, target) {
				if err := h.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if at := time.Duration(ranAt.Load()); at != time.Second {
				t.Errorf("limit %d: the awaited task ran at %v, want 1s: when the first wait gave up, and not while every slot of its queue waited", limit, at)
			}
		})
	}
}

// With a free slot the wait for a task of the own queue completes: a
// concurrent queue of limit 2, one task waits for a later one, which runs on
// the other slot. A broken implementation that holds both slots hangs
// (synctest reports the deadlock).
func TestOutside4OwnQueueFreeSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(2)
		var later *taskqueue.Handle
		ready := make(chan struct{})
		h := q.RunAsync(context.Background(), func(ctx context.Context) error {
			<-ready
			return later.Wait(ctx)
		})
		later = q.RunAsync(context.Background(), func(context.Context) error { return nil })
		close(ready)
		if err := h.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
