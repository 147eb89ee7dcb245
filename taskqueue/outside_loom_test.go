package taskqueue_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// loom.Waitable: "IsDone must then report true once the Done channel would be
// closed", and Handle.Done: "When the task's context is done before the task
// starts, the task is canceled and the channel closed without waiting for the
// queue to reach the task." A coroutine waiting for such a handle must resume
// while the queue is still busy.
func TestOutsideCoroutineWaitsForHandleCanceledByContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		block := make(chan struct{})
		q.Go(func() { <-block })
		ctx, cancel := context.WithCancel(context.Background())
		h := q.RunAsync(ctx, func(context.Context) error { return nil })
		l := loom.New(loom.ManualClock())
		resumed := false
		l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			if yield(loom.WaitFor(h)) {
				resumed = true
			}
		})
		l.UpdateDelta(time.Millisecond)
		cancel()
		synctest.Wait()
		for range 5 {
			l.UpdateDelta(time.Millisecond)
		}
		if !resumed {
			// The channel form would be closed: show it.
			d := h.Done()
			synctest.Wait()
			select {
			case <-d:
				t.Errorf("coroutine waiting with WaitFor(handle) did not resume after the handle's context ended, though Done() is closed (IsDone %v)", h.IsDone())
			default:
				t.Errorf("handle not done after its context ended")
			}
		}
		close(block)
		q.Close()
		l.Close()
	})
}
