package taskqueue

import (
	"context"
	"errors"

	"github.com/taskqueue-go/taskqueue/mainthread"
)

// RunSyncOnMainThread runs fn on the main OS thread and blocks until it
// returns. Called on the main thread, it runs fn at once. It is
// mainthread.CallContext: if ctx is done first it returns ctx.Err() (fn does
// not run if it had not started); once the main loop has stopped it returns
// an error that matches both ErrClosed and mainthread.ErrClosed (errors.Is);
// if fn panics, it panics in the caller with the *PanicError. The main thread must be served, by mainthread.Run or by a
// frame loop that updates mainthread.Loom().
func RunSyncOnMainThread(ctx context.Context, fn func()) error {
	return mainError(mainthread.CallContext(ctx, fn))
}

// RunAsyncOnMainThread queues fn to run on the main OS thread and returns at
// once, never blocking. It is mainthread.Go: once the main loop has stopped
// it returns an error that matches both ErrClosed and mainthread.ErrClosed
// (errors.Is), and a panic in fn goes to the main loom's panic handler.
func RunAsyncOnMainThread(fn func()) error {
	return mainError(mainthread.Go(fn))
}

// mainError returns err, made to match ErrClosed too if it is
// mainthread.ErrClosed.
func mainError(err error) error {
	if errors.Is(err, mainthread.ErrClosed) {
		return errMainClosed{err}
	}
	return err
}

// errMainClosed is the error of a main-thread helper once the main loop has
// stopped: it is mainthread's, and it matches this package's ErrClosed, as
// every closed error of this package does.
type errMainClosed struct{ err error }

func (e errMainClosed) Error() string        { return e.err.Error() }
func (e errMainClosed) Unwrap() error        { return e.err }
func (e errMainClosed) Is(target error) bool { return target == ErrClosed }
