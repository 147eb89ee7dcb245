package taskqueue_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

func TestMaxQueuedFailWhenFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial(taskqueue.WithMaxQueued(2), taskqueue.WithFailWhenFull())
		release := block(t, q) // running: takes no room
		nop := func(context.Context) error { return nil }
		q.RunAsync(t.Context(), nop)
		q.RunAfter(t.Context(), time.Hour, nop) // delayed tasks take room too
		if err := q.Go(func() {}); err != taskqueue.ErrQueueFull {
			t.Errorf("Go = %v; want ErrQueueFull", err)
		}
		if err := q.RunAsync(t.Context(), nop).Err(); err != taskqueue.ErrQueueFull {
			t.Errorf("RunAsync: Err() = %v; want ErrQueueFull", err)
		}
		if err := q.RunAfter(t.Context(), time.Second, nop).Err(); err != taskqueue.ErrQueueFull {
			t.Errorf("RunAfter: Err() = %v; want ErrQueueFull", err)
		}
		if err := q.RunSync(t.Context(), nop); err != taskqueue.ErrQueueFull {
			t.Errorf("RunSync = %v; want ErrQueueFull", err)
		}
		release()
		synctest.Wait()
		if err := q.Go(func() {}); err != nil {
			t.Errorf("Go once room was made = %v; want nil", err)
		}
		q.Close()
	})
}

func TestMaxQueuedWaitWhenFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial(taskqueue.WithMaxQueued(1))
		release := block(t, q)
		nop := func(context.Context) error { return nil }
		q.RunAsync(t.Context(), nop)

		// A submission with a context waits for room until the context ends.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := q.RunAsync(ctx, nop).Err(); err != context.DeadlineExceeded {
			t.Errorf("RunAsync on a full queue: Err() = %v; want DeadlineExceeded after waiting", err)
		}
		if err := q.Go(func() {}); err != taskqueue.ErrQueueFull {
			t.Errorf("Go = %v; want ErrQueueFull: Go never waits", err)
		}

		// Room made by a starting task goes to the waiting submitter.
		result := make(chan *taskqueue.Handle)
		go func() { result <- q.RunAsync(t.Context(), nop) }()
		synctest.Wait()
		release()
		if err := (<-result).Wait(t.Context()); err != nil {
			t.Errorf("RunAsync that waited for room: Wait = %v; want nil", err)
		}

		// Close wakes the submitters still waiting.
		release = block(t, q)
		q.RunAsync(t.Context(), nop)
		go func() { result <- q.RunAsync(t.Context(), nop) }()
		synctest.Wait()
		closed := make(chan error)
		go func() { closed <- q.Close() }()
		synctest.Wait()
		if err := (<-result).Err(); err != taskqueue.ErrClosed {
			t.Errorf("RunAsync waiting at Close: Err() = %v; want ErrClosed", err)
		}
		release()
		if err := <-closed; err != nil {
			t.Errorf("Close = %v", err)
		}
	})
}

// TestMaxQueuedOwnTaskNeverWaits checks that a task submitting to its own
// full queue gets ErrQueueFull instead of waiting for room it would have to
// make itself.
func TestMaxQueuedOwnTaskNeverWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial(taskqueue.WithMaxQueued(1))
		nop := func(context.Context) error { return nil }
		h := q.RunAsync(t.Context(), func(ctx context.Context) error {
			q.RunAsync(ctx, nop) // fills the queue
			if err := q.RunAsync(ctx, nop).Err(); err != taskqueue.ErrQueueFull {
				t.Errorf("RunAsync from the queue's own task: Err() = %v; want ErrQueueFull", err)
			}
			if err := q.RunAfter(ctx, time.Second, nop).Err(); err != taskqueue.ErrQueueFull {
				t.Errorf("RunAfter from the queue's own task: Err() = %v; want ErrQueueFull", err)
			}
			return nil
		})
		if err := h.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		q.Close()
	})
}
