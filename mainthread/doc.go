// Package mainthread serves the main OS thread, which OpenGL contexts, GLFW,
// Cocoa and many C libraries require, and drives its frame loop.
//
// Go runs package initialisation and main on the main thread, but goroutines
// move between threads. This package's init locks the main goroutine to the
// main thread, so that importing it is enough for main to stay there. [Run],
// called from main, then serves the main thread while the program runs on
// other goroutines, which reach it with [Call] (run a function there and
// return its error), [CallValue] (the same for a function that returns a
// value too), taskqueue.RunSyncOnMainThread (the same for a function that
// returns nothing, the name of the Unity tool this module ports) and
// taskqueue.RunAsyncOnMainThread (queue a function and return at once).
// Called on the main thread, the synchronous forms run their function at
// once instead of deadlocking. [IsMain] tells whether the caller runs on the
// main thread: it asks the system for the calling OS thread's ID and
// compares it with the main thread's, since a thread locked to a goroutine
// runs that goroutine alone (and the coroutines it drives).
//
//	func main() {
//		mainthread.Run(func() {
//			// on another goroutine: the program
//			err := mainthread.Call(ctx, func() error { return renderer.DrawFrame() })
//		})
//	}
//
// Package taskqueue does not import this one, so that a program that only
// uses queues keeps its main goroutine free (a locked goroutine is woken on
// its own thread alone, which makes its every wait slower); in a program that
// does not import mainthread, the main-thread helpers return
// taskqueue.ErrNoMainThread instead of waiting forever.
//
// # The main-thread loom
//
// Run drives a [loom.Loom], returned by [Loom], frame by frame as work
// arrives. A program with a frame loop of its own on the main thread, as a
// GLFW renderer has, does not call Run: it calls Loom().Update() once per
// frame, which runs the same queue, and, if it sleeps in an event wait such as
// glfw.WaitEvents, sets a wake function with loom.WithWakeFunc (say
// glfw.PostEmptyEvent) so that posted work wakes it. Timers, scopes and
// coroutines of the main loom run on the main thread too.
//
// # What a call costs
//
// A synchronous call made while Run's loop polls for work after a frame,
// as the calls of a renderer that makes them back to back are, costs about
// 0.7µs and no allocation on a 2-CPU virtual machine, 1.4µs of CPU time
// with both sides polling (BenchmarkMainThreadCall in the module's
// benchmarks): no thread is put to sleep or woken. One that finds the loop
// asleep costs the two wake-ups that a call to a goroutine locked to its
// thread that parks costs, 10 to 35µs there. The loop polls, and callers
// with it, only while polling pays, and never on one processor, where a
// call costs what one to a parking locked goroutine costs; [WithSpin] says
// when each side burns CPU time. A renderer whose frames make 100 calls of
// 300ns of work each drew 37 to 58 times the frames of one served by a
// locked goroutine and a channel over runs with both CPUs free, and 1.5
// times as many with GOMAXPROCS=1 (the benchmarks' cmd/framerate).
//
// # Panics and shutdown
//
// A panic in a function given to Call, CallValue or RunSyncOnMainThread
// reaches the caller as a *taskqueue.PanicError, with the stack of the
// panic, and the main loop goes on. A panic in a function given to
// RunAsyncOnMainThread goes to the main loom's panic handler. The main loom
// is named "main": the panics it reports, and those that reach callers,
// say "panic in main". Once the main loop has stopped, every call and post
// from another goroutine returns an error matching taskqueue.ErrClosed: no
// call waits forever. On the main thread itself a call still runs its
// function at once, as it always does there. Run
// serves once per process; a second Run panics. A function run on the main
// thread must not call runtime.Goexit, which would end the main goroutine.
//
// # A main thread nothing serves
//
// A program that imports this package but neither calls Run nor updates
// Loom() from its frame loop (or whose engine owns the main thread, as
// Ebitengine does, and never updates Loom()) would wait forever without a
// word. Instead, once work has waited five seconds for a main thread that
// has run no frame yet, a warning saying how to serve the main thread goes
// to log/slog's default logger, once per process. The work goes on waiting;
// a frame, when one comes, runs it. A main thread that ran frames and then
// stopped (a frame loop stuck in a long frame, say) is not warned of.
//
// # In a browser
//
// In a js/wasm page every goroutine runs on the page's one thread: IsMain
// reports true everywhere, Call, CallValue and RunSyncOnMainThread run their
// function at once on the caller, and RunAsyncOnMainThread posts to the
// main loom, which Run drives (it blocks main, which a page allows while the
// other goroutines run, and never polls, the page having one thread) or
// which a requestAnimationFrame callback updates each animation frame.
//
// # Testing
//
// The main thread cannot be faked: a test binary that needs it runs its tests
// under Run in TestMain, as this package's own tests do, with
// goleak.VerifyTestMain(m, goleak.IgnoreCurrent()) inside the app so that the
// serving main goroutine is not reported.
//
// The main thread is never inside a testing/synctest bubble, so Call,
// CallValue and taskqueue.RunSyncOnMainThread cannot be called from one: the
// runtime ends the test binary with a fatal error when the main thread wakes
// a caller in a bubble. Test code that runs in a bubble reaches a loom of its
// own, made in the bubble, instead of the main thread's. (Nothing of this
// package polls in a bubble, and its polls would not stop a bubble's clock
// for good: the main loop runs outside any, and a caller's poll ends after a
// bounded number of turns as well as on the clock.)
package mainthread
