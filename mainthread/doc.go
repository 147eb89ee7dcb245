// Package mainthread runs functions on the main OS thread, which OpenGL
// contexts, GLFW, Cocoa and many C libraries require.
//
// Go runs package initialisation and main on the main thread, but goroutines
// move between threads. This package's init locks the main goroutine to the
// main thread, so that importing it is enough for main to stay there. [Run],
// called from main, then serves the main thread while the program runs on
// other goroutines: [Call] runs a function there and waits, [Go] queues one
// and returns, both from any goroutine. Called from the main thread, Call runs
// its function at once instead of deadlocking. [IsMain] tells whether the
// caller runs on the main thread: it asks the system for the calling OS
// thread's ID and compares it with the main thread's, since a thread locked
// to a goroutine runs that goroutine alone (and the coroutines it drives).
// taskqueue.RunSyncOnMainThread and taskqueue.RunAsyncOnMainThread are Call
// and Go under the names of the seed this module ports.
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
// # Panics and shutdown
//
// A panic in a function given to Call reaches the caller, with the stack of
// the panic, and the main loop goes on. A panic in a function given to Go
// goes to the main loom's panic handler. Once the main loop has stopped,
// Call and Go return [ErrClosed]: no call waits forever. Run serves once per
// process; a second Run panics. A function run on the main thread must not
// call runtime.Goexit, which would end the main goroutine.
//
// # A main thread nothing serves
//
// A program that imports this package but neither calls Run nor updates
// Loom() from its frame loop (or whose engine owns the main thread, as
// Ebitengine does, and never updates Loom()) would wait forever in Call
// without a word. Instead, once work has waited [NotServedAfter] with no
// frame run, a warning saying how to serve the main thread goes to
// log/slog's default logger, once.
//
// # In a browser
//
// In a js/wasm page every goroutine runs on the page's one thread: IsMain
// reports true everywhere, Call runs its function at once on the caller, and
// Go posts to the main loom, which Run drives (it blocks main, which a page
// allows while the other goroutines run) or which a requestAnimationFrame
// callback updates each animation frame.
//
// # Testing
//
// The main thread cannot be faked: a test binary that needs it runs its tests
// under Run in TestMain, as this package's own tests do, with
// goleak.VerifyTestMain(m, goleak.IgnoreCurrent()) inside the app so that the
// serving main goroutine is not reported.
package mainthread
