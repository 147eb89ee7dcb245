package taskqueue_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestRunSyncOnAClosedQueueFromATask: RunSync on a closed queue returns
// ErrClosed, as to anyone, also from a task whose wait for that queue would
// wait for itself: there is no wait to judge.
func TestRunSyncOnAClosedQueueFromATask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewSerial()
		child := taskqueue.NewSerial(taskqueue.WithTarget(target))
		child.Close()
		var err error
		target.RunSync(t.Context(), func(ctx context.Context) error {
			err = child.RunSync(ctx, func(context.Context) error { return nil })
			return nil
		})
		if !errors.Is(err, taskqueue.ErrClosed) {
			t.Errorf("RunSync on a closed child from a task of its serial target: %v; want ErrClosed", err)
		}
		target.Close()
	})
}
