// Package taskqueue runs work on serial and concurrent task queues.
//
// Start with [Queue]: [NewSerial] makes a queue that runs one task at a time,
// in submission order, [NewConcurrent] one that runs up to n at once. A
// [Queue] runs its tasks on a [scheduler.Scheduler]. Queues need no goroutine
// while idle and no Close to be collected.
//
// # Submitting work
//
//   - [Queue.Go] runs a function with no handle, never blocking.
//   - [Queue.RunAsync] returns a [Handle] at once; the generic [RunAsync]
//     returns a [Future] that also carries the task's result.
//   - [Queue.RunSync] and the generic [RunSync] block until the task is done.
//   - [Queue.RunAfter] and the generic [RunAfter] start a task no earlier
//     than a delay from now; a delayed task holds no goroutine while it waits.
//   - [Queue.RunBarrier] runs a task alone on a concurrent queue, after the
//     tasks before it and before those after it.
//
// Tasks receive a context derived from the one they were submitted with. A
// task whose context is done before it starts never runs, and its handle
// says so.
//
// # Groups, continuations and bulk work
//
// These sit on top of any queue, serial, concurrent or child, and add no
// goroutine of their own, but for a continuation waiting for room on a full
// queue.
//
//   - A [Group] runs members on a queue and waits for them all, with their
//     errors joined, or, made [WithCancelOnError], stops at the first failure:
//     members that have not started never run. [GroupOf] adds typed results,
//     in the order the members were added, and [GroupOf.Completed] streams
//     them as they end. [WithGroupLimit] bounds a group below its queue.
//   - [Handle.Then] and the generic [Then] queue a task when another returns,
//     holding no slot and no goroutine while they wait: a stage of a
//     pipeline hands on its result without waiting for the next stage.
//   - [Apply] and [Map] run a loop in parallel, in chunks, with the
//     calling goroutine taking part, as libdispatch's dispatch_apply does.
//
// # Serial queues and re-entry
//
// On a serial queue, task i+1 starts after task i returns and sees its memory
// writes. A task may submit to its own queue: RunAsync and Go never block on
// it. RunSync with the context the task received runs the inner function at
// once, in the task's place, where libdispatch would crash and other Go pools
// deadlock; so does RunSync from any goroutine that works for the task with
// that context (an iter.Pull body it drives, helpers it starts and waits
// for), the inner functions taking turns. The context is what makes a call
// the task's own: the runtime gives goroutines no identity, and Go code
// passes contexts down. A call with another context (context.Background(),
// or the outer one from inside a nested function) waits behind the task like
// anyone else's; from inside the task that is forever, and RunSync says so
// through log/slog after five seconds. RunSync on an idle queue runs on
// the caller too, which saves the hand-off to a worker. Two tasks of two
// queues that wait for each other with RunSync hang as two mutexes taken in
// opposite orders do; [Waits] shows them.
//
// # Trees and keyed lanes
//
// A queue made [WithTarget] runs its tasks on another queue's slots, with no
// goroutine of its own: its limit and order hold, the target's limit bounds
// it and its siblings together, and the siblings take turns fairly, by a
// quantum of tasks ([WithQuantum]) and by priority ([WithPriority]). A
// [Keyed] runs tasks in serial lanes by key on a target, each lane living
// only while its key has work: one serial queue per player or document, at
// the cost of a few bytes. [Queue.Suspend], [Queue.Resume] and
// [Queue.SetLimit] control a queue as it runs.
//
// # Panics
//
// A panic in a task is recovered as a [*PanicError] holding the value and the
// stack. RunSync re-panics with it in the caller. A task with a handle
// completes with it; a group's Wait returns its members'. A panic goes to the
// queue's panic handler (see [WithPanicHandler]; by default log/slog's
// default logger) when no caller receives it: the panics of tasks started
// with Go, of tasks with a handle that nobody was waiting for (Wait, Done, a
// continuation) when they panicked, and of group members whose error Wait
// will not return. So no panic goes unseen, and none is reported twice.
//
// # Shutting down
//
// [Queue.Close] and [Queue.Shutdown] stop a queue from accepting work and wait
// until everything it accepted has run. [Queue.CloseNow] cancels what has not
// started and reports how many tasks that was. Every handle completes: with
// the task's outcome, or with a cancellation or [ErrClosed].
//
// # The main thread
//
// [RunSyncOnMainThread] and [RunAsyncOnMainThread] run functions on the main
// OS thread through package mainthread, which a program serves with
// mainthread.Run or with a frame loop of its own. This package does not
// import mainthread, whose init locks the main goroutine to the main thread:
// that lock made every wait of a queue-only program's main goroutine some 36
// times slower. A program that serves the main thread imports mainthread
// itself; in one that does not, the helpers return [ErrNoMainThread] instead
// of waiting forever.
//
// # In a browser
//
// Built for js/wasm, a page runs every goroutine on its one thread, without
// preemption: a concurrent queue's workers take turns there, they do not run
// in parallel, and a task that computes for long holds every other goroutine
// (and the page's frames) until it returns or blocks. The guarantees stay
// the same; a long task should pause now and then (wait on a channel that
// the page's event loop fills) for the page to draw. The package's tests run
// under Node with Go's wasm runner.
//
// # Testing
//
// Queues use the time package directly, so code that uses them is tested
// with testing/synctest: create the queue inside the bubble, or use the
// default queues, which keep nothing between uses.
package taskqueue
