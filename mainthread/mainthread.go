package mainthread

import (
	"context"
	"errors"
	"runtime"

	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// ErrClosed is returned (or, by Call, panicked with) when the main loop has
// stopped: Run returned, or the program closed the main-thread loom.
var ErrClosed = errors.New("mainthread: the main loop has stopped")

// PanicError is a panic recovered from a function run on the main thread,
// with the stack of the panic. It is the same type as scheduler.PanicError.
type PanicError = scheduler.PanicError

// mainLoom is the loom of the main thread. It holds no goroutine, channel or
// timer until it is used.
var mainLoom *loom.Loom

// Go runs init, and the program's main, on the main OS thread. Locking the
// thread here keeps the main goroutine on it for good, since no code runs on
// the main goroutine before this package's init but runtime and package
// initialisation.
func init() {
	runtime.LockOSThread()
	mainLoom = loom.New(loom.OwnedByCaller())
}

// Loom returns the main thread's loom. Run drives it; a program with a frame
// loop of its own on the main thread (GLFW, SDL) calls its Update once per
// frame instead, and configures it (a wake function for an event wait, a
// frame budget, a panic handler) with Configure.
func Loom() *loom.Loom { return mainLoom }

// IsMain reports whether the calling goroutine is the main goroutine, which
// this package keeps on the main OS thread. It costs a lock and no
// allocation; see BenchmarkIsMain.
func IsMain() bool { return mainLoom.OnLoop() }

// Go queues fn to run on the main thread and returns at once. It never
// blocks, however busy the main thread is: fn waits in the main loom's queue,
// and the first post of a batch wakes the loop. A panic in fn goes to the
// main loom's panic handler. Go returns ErrClosed once the main loop has
// stopped.
func Go(fn func()) error {
	if fn == nil {
		panic("mainthread: Go(nil)")
	}
	if mainLoom.Post(fn) != nil {
		return ErrClosed
	}
	watchServed()
	return nil
}

// Call runs fn on the main thread and returns when it has returned. Called
// from the main thread, it runs fn at once. If fn panics, Call panics in its
// caller with a *PanicError holding the panic value and fn's stack, and the
// main loop goes on serving. If the main loop has stopped, Call panics with
// ErrClosed rather than wait forever: it has no error result to report it
// with, and a call that can never run is a bug of the program's shutdown
// order, as a send on a closed channel is. CallContext, Go and the taskqueue
// helpers return ErrClosed instead. While nothing serves the main thread yet,
// Call waits, and says so (see NotServedAfter).
//
// A call costs no allocation; see BenchmarkCall.
func Call(fn func()) {
	if err := CallContext(context.Background(), fn); err != nil {
		panic(err)
	}
}

// CallContext is Call with a bound on the wait: if ctx is done before fn has
// run, CallContext returns ctx.Err(), and fn does not run if it had not
// started (a context done before the call, even on the main thread, runs
// nothing, as Queue.RunSync does) (if it had, it runs on, and a panic in it goes to the main loom's
// panic handler). CallContext returns ErrClosed if the main loop has stopped.
// It panics as Call does if fn panics.
func CallContext(ctx context.Context, fn func()) error {
	if fn == nil {
		panic("mainthread: Call with a nil function")
	}
	if err := ctx.Err(); err != nil {
		return err // as Queue.RunSync does: a done context runs nothing
	}
	if IsMain() {
		if p := protect(fn); p != nil {
			panic(p)
		}
		return nil
	}
	c := newCall(fn)
	if mainLoom.Post(c.run) != nil {
		c.recycle()
		return ErrClosed
	}
	watchServed()
	return c.wait(ctx)
}

// CallValue runs fn on the main thread as Call does and returns its result.
func CallValue[T any](fn func() T) T {
	if fn == nil {
		panic("mainthread: CallValue(nil)")
	}
	var v T
	Call(func() { v = fn() })
	return v
}

// protect runs fn and returns its panic, if any, with fn's stack.
func protect(fn func()) (p *PanicError) {
	normal := false
	defer func() {
		if !normal {
			if v := recover(); v != nil {
				p = scheduler.NewPanicError(v)
			}
		}
	}()
	fn()
	normal = true
	return nil
}
