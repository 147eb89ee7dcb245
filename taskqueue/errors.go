package taskqueue

import (
	"context"
	"errors"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

var (
	// ErrClosed is returned for work submitted to a queue that is closed or
	// closing, and is the error of tasks that CloseNow stopped before they
	// started. Every error of this package about something closed matches it
	// (errors.Is), those of RunSyncOnMainThread and RunAsyncOnMainThread
	// once the main loop has stopped included. The
	// scheduler's own ErrClosed never reaches the callers of this package.
	ErrClosed = errors.New("taskqueue: queue closed")

	// ErrQueueFull is returned for work submitted to a queue made with
	// WithMaxQueued that holds as many waiting tasks as it allows, when the
	// queue was made WithFailWhenFull or when waiting could deadlock.
	ErrQueueFull = errors.New("taskqueue: queue full")

	// ErrGoexit is the error of a task that called runtime.Goexit (as
	// testing.T.FailNow does) instead of returning.
	ErrGoexit = errors.New("taskqueue: task called runtime.Goexit")
)

// PanicError is a panic recovered from a task, with the stack of the
// goroutine that panicked. It is the same type as scheduler.PanicError.
type PanicError = scheduler.PanicError

// queueError maps an error of the scheduler to the queue's own.
func queueError(err error) error {
	switch err {
	case scheduler.ErrClosed:
		return ErrClosed
	case scheduler.ErrFull:
		return ErrQueueFull
	}
	return err
}

// mustCtx panics, naming call, if ctx is nil, rather than dereference it
// deep inside.
func mustCtx(call string, ctx context.Context) {
	if ctx == nil {
		panic("taskqueue: " + call + " with a nil context")
	}
}
