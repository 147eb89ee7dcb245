// Package mainhook lets package taskqueue dispatch work to the main thread
// without importing package mainthread, whose init locks the main goroutine
// to the main OS thread. That lock is right for a program that serves the
// main thread, and costly for one that only uses queues: a locked goroutine
// is woken on its own thread alone, which made every wait of a queue-only
// program's main goroutine many times slower (see the benchmarks module's
// cmd/mainlock). So package mainthread installs its entry points here, in
// its init, and a program that never imports it keeps its main goroutine
// free; such a program serves no main thread either, and taskqueue's
// main-thread helpers tell it so instead of waiting forever.
package mainhook

import "context"

// The entry points of package mainthread, set by its init before main runs
// and never changed after; nil if the program does not import it.
var (
	// Call is mainthread.runSync, for taskqueue.RunSyncOnMainThread.
	Call func(ctx context.Context, fn func()) error
	// Go is mainthread.runAsync, for taskqueue.RunAsyncOnMainThread.
	Go func(fn func()) error
	// ErrClosed is the error of both once the main loop has stopped.
	ErrClosed error
)

// QueueClosed is taskqueue.ErrClosed, set by package taskqueue's init, and
// nil if the program does not import it: package mainthread, below
// taskqueue, cannot name it, and its closed error matches this one.
var QueueClosed error
