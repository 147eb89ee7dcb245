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
// it.
//
// A task is told by its context: the context a task receives carries the
// slot it holds while it runs, and work done with that context, or with one
// derived from it, is the task's own, whatever goroutine does it (an
// iter.Pull body the task drives, goroutines it starts and waits for, tasks
// it submits with that context and waits for). The runtime gives goroutines
// no identity, and Go code passes contexts down. With it:
//
//   - RunSync on the task's queue, or on a queue above it, runs in the
//     task's place, where libdispatch would crash and other Go pools
//     deadlock (.NET's TryExecuteTaskInline). Functions run in one task's
//     place take turns, whichever goroutines call: no two overlap, and each
//     gets a context of its own for its own nested calls. A call that waits
//     for its turn gives up when its context is done.
//   - A wait that could only wait for itself panics, naming the call: from
//     the task waited for, or from a task holding the one slot of a serial
//     queue that the awaited work needs (see Handle.Wait).
//   - A submission to the task's own full queue fails rather than wait for
//     itself (see WithMaxQueued).
//
// A call with another context (context.Background(), or the outer one from
// inside a nested function) is an outsider's: it waits behind the task like
// anyone else's, which from inside a task of a serial queue is forever;
// RunSync says so through log/slog after five seconds. A goroutine that the
// task does not wait for must not use its context while the task runs: its
// calls would run in the task's place beside the task's own code. Once the
// task has returned, its context is an outsider's. Two tasks of two queues
// that wait for each other with RunSync hang as two mutexes taken in
// opposite orders do; [Waits] shows them.
//
// A task keeps its slot while it waits. Tasks of a concurrent queue that
// wait for tasks of the same queue, or of its tree, hold slots those tasks
// need, as a pool's workers do: when every slot is held so, the waits last
// until their contexts end. Then chains a task after another without
// holding a slot.
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
// with Go, of tasks with a handle that nobody was waiting for (in Wait, or
// through a continuation that somebody waits for, in turn) when they
// panicked, and of group members whose error Wait will not return. So no panic goes unseen. The channel of Done
// counts as no waiting, since whoever selects on it may have left: a panic
// seen through it (and then Err) has gone to the handler too. A caller that will wait for a
// task submits it with a context made by [Awaited]: the task's panic is
// then its handle's alone, never reported to the handler, even if the task
// panics before the caller waits.
//
// # Shutting down
//
// [Queue.Close] and [Queue.Shutdown] stop a queue from accepting work and wait
// until everything it accepted has run. [Queue.CloseNow] cancels what has not
// started and reports how many tasks that was. Every handle completes: with
// the task's outcome, or with a cancellation or [ErrClosed].
//
// # Misuse
//
// A programmer's error panics at once, with a message that names the call
// and the value: a nil context, function or queue, a limit or count out of
// range, a zero value used without its constructor, a wait that could only
// wait for itself. Errors of the queue's state (closed, full) and of
// contexts are returned.
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
