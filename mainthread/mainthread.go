package mainthread

import (
	"runtime"

	"github.com/taskqueue-go/taskqueue/internal/mainhook"
	"github.com/taskqueue-go/taskqueue/loom"
)

// errClosed is the error of work for the main thread once the main loop has
// stopped: Run returned, or the program closed the main-thread loom. It
// matches taskqueue.ErrClosed, which every closed error of the module
// matches; this package cannot name it, since package taskqueue sits above
// it, so package taskqueue hands it over through mainhook.
var errClosed error = &closedError{}

type closedError struct{}

func (*closedError) Error() string { return "mainthread: the main loop has stopped" }

// Is reports whether target is taskqueue.ErrClosed (nil in a program that
// does not import package taskqueue, which cannot ask for it either).
func (*closedError) Is(target error) bool {
	return target != nil && target == mainhook.QueueClosed
}

// loomName is the name of the main loom, the Source of its panics and of
// those of calls to the main thread.
const loomName = "main"

var (
	// mainLoom is the loom of the main thread. It holds no goroutine,
	// channel or timer until it is used.
	mainLoom *loom.Loom
	// mainThread is the ID of the main OS thread, read in init.
	mainThread uint64
)

// Go runs init, and the program's main, on the main OS thread. Locking the
// thread here keeps the main goroutine on it for good, since no code runs on
// the main goroutine before this package's init but runtime and package
// initialisation; and, a locked thread running its goroutine alone, the
// goroutine that runs on the main thread is the main goroutine.
func init() {
	runtime.LockOSThread()
	mainThread = threadID()
	mainLoom = loom.New(loom.WithName(loomName))
}

// Loom returns the main thread's loom, named "main" (loom.WithName): the
// Source of its panics, and of those of calls to the main thread. Run
// drives it; a program with a frame loop of its own on the main thread
// (GLFW, SDL) calls its Update once per frame instead, and configures it (a
// wake function for an event wait, a frame budget, a panic handler) with
// Configure.
func Loom() *loom.Loom { return mainLoom }

// IsMain reports whether the caller runs on the main OS thread, which this
// package keeps for the main goroutine: the main goroutine itself, or the
// body of a coroutine of the main loom, which the main goroutine drives.
// It asks the system for the calling thread's ID, a system call that takes
// about 180ns on a Linux virtual machine (BenchmarkIsMain in this package's
// benchmarks). In a js/wasm page, where every goroutine runs on the page's
// one thread, it reports true. On systems other than Linux, Android, macOS,
// iOS, Windows and js/wasm, where the package cannot tell threads apart, it
// reports false.
func IsMain() bool { return knownThreads && threadID() == mainThread }

// runAsync is taskqueue.RunAsyncOnMainThread, which checks its argument: it
// queues fn on the main loom and returns at once, never blocking.
func runAsync(fn func()) error {
	if mainLoom.Post(fn) != nil {
		return errClosed
	}
	watchServed()
	return nil
}
