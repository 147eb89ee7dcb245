// Package scheduler runs items of work in FIFO order with a limit on how many
// run at once. It is the engine under the taskqueue package's serial and
// concurrent queues and under the loom package's background runner, and the
// Go counterpart of .NET's LimitedConcurrencyLevelTaskScheduler.
//
// A [Scheduler] keeps its items in a list and runs each on a worker
// goroutine. Workers start on demand and exit when the list is empty, so an
// idle Scheduler holds no goroutine and needs no Close. The decision to start
// or stop a worker is taken under the same lock as the look at the list, so no
// item is ever stranded by a worker that leaves as it arrives.
//
// # Items
//
// An item is a [Task]; [Func] adapts a plain function. [Scheduler.Enqueue]
// returns an [ID] with which [Scheduler.TryDequeue] removes the item before it
// starts. [Barrier] marks an item that runs alone. [WithMaxPending] bounds the
// list: [Scheduler.Enqueue] then fails with [ErrFull] and
// [Scheduler.EnqueueContext] waits for room, on a semaphore from
// golang.org/x/sync. [Scheduler.Reserve] takes room for an item that will be
// queued later, such as a delayed task, so that queuing it then never fails.
//
// # Running on the caller
//
// [Scheduler.TryRun] runs an item on the calling goroutine when the
// Scheduler is idle enough for that to keep FIFO order ([Scheduler.TryAcquire]
// and [Scheduler.Release] do the same around code of the caller's own).
// [Scheduler.Holds] reports whether the calling goroutine is running an item,
// and [Scheduler.RunInline] lets such a goroutine run another item on its own
// slot, which is how a synchronous wait from inside a serial scheduler
// completes instead of deadlocking (.NET's TryExecuteTaskInline rule).
//
// # Panics
//
// A panic in an item is recovered on its worker and handed, as a
// [*PanicError] with the stack of the panic, to the handler set with
// [WithPanicHandler] (by default, the standard logger). The worker goes on
// with the next item. An item that calls runtime.Goexit ends its worker, whose
// slot passes to a new one; no item is lost either way.
package scheduler
