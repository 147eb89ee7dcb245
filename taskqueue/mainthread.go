package taskqueue

import (
	"context"

	"github.com/taskqueue-go/taskqueue/mainthread"
)

// RunSyncOnMainThread runs fn on the main OS thread and blocks until it
// returns. Called on the main thread, it runs fn at once. It is
// mainthread.CallContext: if ctx is done first it returns ctx.Err() (fn does
// not run if it had not started); once the main loop has stopped it returns
// mainthread.ErrClosed; if fn panics, it panics in the caller with the
// *PanicError. The main thread must be served, by mainthread.Run or by a
// frame loop that updates mainthread.Loom().
func RunSyncOnMainThread(ctx context.Context, fn func()) error {
	return mainthread.CallContext(ctx, fn)
}

// RunAsyncOnMainThread queues fn to run on the main OS thread and returns at
// once, never blocking. It is mainthread.Go: it returns mainthread.ErrClosed
// once the main loop has stopped, and a panic in fn goes to the main loom's
// panic handler.
func RunAsyncOnMainThread(fn func()) error {
	return mainthread.Go(fn)
}
