// Package scheduler runs items of work in FIFO order with a limit on how many
// run at once. It is the engine under the taskqueue package's serial and
// concurrent queues and under the loom package's background runner, and the
// Go counterpart of .NET's LimitedConcurrencyLevelTaskScheduler.
//
// Start with [Scheduler] in scheduler.go, then worker.go (how workers start,
// take items and exit). list.go is the queue of items, caller.go runs an item
// on the calling goroutine, slots.go keeps the books of who holds a slot,
// room.go bounds the list, target.go, levels.go and lend.go make trees of
// schedulers, and control.go suspends and resizes.
//
// # Items and workers
//
// An item is a [Task]; [Func] adapts a plain function. [Scheduler.Enqueue]
// returns an [ID] with which [Scheduler.TryDequeue] removes the item before it
// starts. [Barrier] marks an item that runs alone. A Scheduler keeps its items
// in a list and runs each on a worker goroutine. Workers start on demand and
// exit when the list is empty. An idle Scheduler holds no goroutine and
// needs no Close. The decision to start or stop a worker is
// taken under the same lock as the look at the list, so no item is ever
// stranded by a worker that leaves as it arrives. A worker of a serial
// Scheduler takes runs of items out of the list at once, which saves a lock
// round trip per item; each stays removable until it starts.
//
// [WithMaxPending] bounds the list: [Scheduler.Enqueue] then fails with
// [ErrFull] and [Scheduler.EnqueueContext] waits for room, on a semaphore from
// golang.org/x/sync. A [Reservation] is room taken for an item that will be
// queued later, such as a delayed task, so that queuing it then never fails.
//
// # Running on the caller
//
// [Scheduler.TryRun] runs a function on the calling goroutine, as an item:
// in the place of the caller's own item if the caller runs one (.NET's
// TryExecuteTaskInline rule, which lets a synchronous wait from inside a
// serial scheduler complete instead of deadlocking), or on a free slot of an
// idle Scheduler. Whoever takes a slot, a worker or a caller, gets a token
// naming the record it took and gives back that one; a goroutine never holds
// two slots of one Scheduler; holders are known by goroutine ID, which no
// later goroutine can have. [Scheduler.Holds] tells a goroutine whether it
// runs an item; [Scheduler.Holders] lists them, for debugging.
//
// # Trees
//
// A Scheduler made [WithTarget] is a child: it has no goroutine of its own,
// ever, and runs its items on its target's slots, its own limit and order
// holding inside the target's. Each of its slots is a turn, an item of the
// target that runs up to a quantum of the child's items ([WithQuantum]) before
// the target's other items and children get theirs; [WithPriority] orders
// children on their target, without starving the lowest. An item that waits
// for work of its own tree lends its slots of the targets above it
// ([Scheduler.Await]). [Scheduler.Suspend], [Scheduler.Resume] and
// [Scheduler.SetLimit] control a Scheduler as it runs; [WithIdleFunc] reports
// when it goes idle.
//
// # Panics
//
// A panic in an item is recovered on its worker and handed, as a
// [*PanicError] with the stack of the panic, to the handler set with
// [WithPanicHandler] (by default, log/slog's default logger). The worker goes on
// with the next item. An item that calls runtime.Goexit ends its worker, whose
// slot passes to a new one; no item is lost either way.
package scheduler
