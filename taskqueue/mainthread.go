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

// Package mainthread's closed error matches ErrClosed, which it cannot name.
func init() { mainhook.QueueClosed = ErrClosed }

// RunSyncOnMainThread runs fn on the main OS thread and blocks until it
// returns. It is the form for a function that returns nothing, and the name
// of the Unity tool this module ports; mainthread.Call runs one that
// returns an error, and mainthread.CallValue one that returns a value too,
// each returning what the function returns.
//
// Called on the main thread, it runs fn at once, where a queue of calls
// would wait for itself. If ctx is done before fn has run, it returns
// ctx.Err(): fn does not run if it had not started (a done context runs
// nothing, even on the main thread, as Queue.RunSync does), and runs on if
// it had, a panic in it then going to the main loom's panic handler. Once
// the main loop has stopped it returns an error matching ErrClosed, rather
// than wait forever. If fn panics, RunSyncOnMainThread panics in its caller
// with a *PanicError holding the panic value and fn's stack, and the main
// loop goes on serving. The main thread must be served, by mainthread.Run or
// by a frame loop that updates mainthread.Loom(); while nothing serves it
// yet, the call waits, and after five seconds says so through log/slog. It
// panics if ctx or fn is nil.
//
// A call costs no allocation. Made while mainthread.Run's loop polls for
// work, as back-to-back calls are, it costs about 0.7µs on a 2-CPU virtual
// machine, against 10 to 35µs for a goroutine locked to its thread that
// parks (BenchmarkMainThreadCall in the module's benchmarks); the
// documentation of package mainthread says when callers burn CPU time.
//
// This package does not import package mainthread, whose init locks the
// main goroutine to the main thread, which a program that only uses queues
// pays for in every wait of its main goroutine: a program that uses these
// helpers imports mainthread itself, to serve the main thread. Without it,
// RunSyncOnMainThread returns ErrNoMainThread.
func RunSyncOnMainThread(ctx context.Context, fn func()) error {
	if fn == nil {
		panic("taskqueue: RunSyncOnMainThread with a nil function")
	}
	if ctx == nil {
		panic("taskqueue: RunSyncOnMainThread with a nil context")
	}
	if mainhook.Call == nil {
		return ErrNoMainThread
	}
	return mainError(mainhook.Call(ctx, fn))
}

// RunAsyncOnMainThread queues fn to run on the main OS thread and returns at
// once, never blocking, however busy the main thread is: fn waits in the
// main loom's queue, after the functions queued before it, and the first
// post of a batch wakes the loop. Once the main loop has stopped it returns
// an error matching ErrClosed, and a panic in fn goes to the main loom's
// panic handler. In a program that does not import package mainthread it
// returns ErrNoMainThread (see RunSyncOnMainThread). It panics if fn is nil.
func RunAsyncOnMainThread(fn func()) error {
	if fn == nil {
		panic("taskqueue: RunAsyncOnMainThread(nil)")
	}
	if mainhook.Go == nil {
		return ErrNoMainThread
	}
	return mainError(mainhook.Go(fn))
}

// mainError returns err, made to match ErrClosed if it is the main loop's
// closed error.
func mainError(err error) error {
	if err != nil && errors.Is(err, mainhook.ErrClosed) {
		return errMainClosed{err}
	}
	return err
}

// errMainClosed is the error of a main-thread helper once the main loop has
// stopped: it says so, and matches ErrClosed, as every closed error of this
// package does.
type errMainClosed struct{ err error }

func (e errMainClosed) Error() string        { return e.err.Error() }
func (e errMainClosed) Unwrap() error        { return e.err }
func (e errMainClosed) Is(target error) bool { return target == ErrClosed }
