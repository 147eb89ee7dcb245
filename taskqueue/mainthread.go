package taskqueue

import (
	"context"
	"errors"

	"github.com/taskqueue-go/taskqueue/internal/mainhook"
)

// ErrNoMainThread is returned by RunSyncOnMainThread and
// RunAsyncOnMainThread in a program that does not import package
// mainthread, and so serves no main thread: the call could only wait
// forever.
var ErrNoMainThread = errors.New("taskqueue: no main thread is served: import package mainthread and serve it with mainthread.Run or a frame loop")

// RunSyncOnMainThread runs fn on the main OS thread and blocks until it
// returns. Called on the main thread, it runs fn at once. It is
// mainthread.CallContext: if ctx is done first it returns ctx.Err() (fn does
// not run if it had not started); once the main loop has stopped it returns
// an error that matches both ErrClosed and mainthread.ErrClosed (errors.Is);
// if fn panics, it panics in the caller with the *PanicError. The main thread
// must be served, by mainthread.Run or by a frame loop that updates
// mainthread.Loom().
//
// This package does not import package mainthread, whose init locks the
// main goroutine to the main thread, which a program that only uses queues
// pays for in every wait of its main goroutine: a program that uses these
// helpers imports mainthread itself, to serve the main thread. Without it,
// RunSyncOnMainThread returns ErrNoMainThread.
func RunSyncOnMainThread(ctx context.Context, fn func()) error {
	if mainhook.Call == nil {
		return ErrNoMainThread
	}
	return mainError(mainhook.Call(ctx, fn))
}

// RunAsyncOnMainThread queues fn to run on the main OS thread and returns at
// once, never blocking. It is mainthread.Go: once the main loop has stopped
// it returns an error that matches both ErrClosed and mainthread.ErrClosed
// (errors.Is), and a panic in fn goes to the main loom's panic handler. In a
// program that does not import package mainthread it returns
// ErrNoMainThread (see RunSyncOnMainThread).
func RunAsyncOnMainThread(fn func()) error {
	if mainhook.Go == nil {
		return ErrNoMainThread
	}
	return mainError(mainhook.Go(fn))
}

// mainError returns err, made to match ErrClosed too if it is
// mainthread.ErrClosed.
func mainError(err error) error {
	if err != nil && errors.Is(err, mainhook.ErrClosed) {
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
