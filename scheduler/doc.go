// Package scheduler runs items of work in FIFO order with a limit on how many
// run at once: the engine under package taskqueue's serial and concurrent
// queues and under the loom's background runner, and the Go counterpart of
// .NET's LimitedConcurrencyLevelTaskScheduler. Use it directly to build a
// pool of your own; most programs want package taskqueue instead.
//
// # Items and workers
//
// An item is a [Task]; [Func] adapts a plain function. [Scheduler.Enqueue]
// returns an [ID] with which [Scheduler.TryDequeue] removes the item before it
// starts; [Barrier] marks an item that runs alone. A [Scheduler] runs at most
// its limit of items at once, starting them in the order they were queued,
// on worker goroutines that start on demand and exit once the list is empty:
// an idle Scheduler holds no goroutine and needs no Close. The decision to
// start or stop a worker is taken under the same lock as the look at the
// list, so no item is ever stranded by a worker that leaves as it arrives.
//
// [WithMaxPending] bounds the list: [Scheduler.Enqueue] then fails with
// [ErrFull] and [Scheduler.EnqueueContext] waits for room. A [Reservation] is
// room taken for an item that will be queued later, such as a delayed task,
// so that queuing it then never fails.
//
// # Slots
//
// An item runs on a slot of its Scheduler and receives it as a [Slot] value.
// Work done for the item carries that value (package taskqueue puts it in the
// context its tasks receive), whatever goroutine does the work: the runtime
// gives goroutines no identity to ask for, and work for one item often runs
// on several, an iter.Pull body the item drives or a helper it waits for.
// With it:
//
//   - [Scheduler.TryRun] runs a function in the item's place, on its slot,
//     ahead of the queued items: the rule of .NET's TryExecuteTaskInline,
//     which lets an item of a serial Scheduler wait for more of its own
//     work instead of deadlocking. Without a Slot that holds one of its
//     slots, TryRun runs a function on the caller only when the Scheduler is
//     idle, as libdispatch runs dispatch_sync.
//   - [Scheduler.Holds] tells whether the work holds a slot, for checks such
//     as "this wait would wait for itself".
//
// An item that waits keeps its slot: a Scheduler lends no slot to the work
// its items wait for. Items of a Scheduler of limit n that wait for other
// items of it, or of its tree, hold slots those items need: when all n wait
// so, the waits last until they give up, as with any pool of n workers.
//
// A Slot is valid while its item runs; once the item has returned it holds
// nothing, whoever kept a copy.
//
// # Trees
//
// A Scheduler made [WithTarget] is a child: it has no goroutine of its own,
// ever, and runs its items on its target's slots, its own limit and order
// holding inside the target's. Each of its slots is a turn: a place in the
// target's list that runs up to a quantum of the child's items
// ([WithQuantum]) before the target's other items and children get theirs;
// which child a turn goes to is decided by priority ([WithPriority]) when it
// starts, without starving the lowest. [Scheduler.Suspend],
// [Scheduler.Resume] and [Scheduler.SetLimit] control a Scheduler as it runs,
// its subtree included; [WithIdleFunc] reports when it goes idle.
//
// # Locks and callbacks
//
// No function of the caller's (an item, an idle function, a panic handler)
// runs while a lock of this package is held. A caller must not hold a lock
// that such a function takes while it calls a method of a Scheduler: the
// method may run the idle function, on the caller's goroutine, once it has
// released its own.
//
// # In a browser
//
// Built for js/wasm, a Scheduler works as elsewhere, its workers being
// goroutines that take turns on the page's one thread.
//
// # Panics
//
// A panic in an item is recovered on its worker and handed, as a
// [*PanicError] with the stack of the panic, to the handler set with
// [WithPanicHandler] (by default, log/slog's default logger). The worker goes on
// with the next item. An item that calls runtime.Goexit ends its worker, whose
// slot passes to a new one; no item is lost either way.
//
// A programmer's error panics at once with a message naming the call: a nil
// Task or Func, a nil context, a limit or bound out of range, a method of the
// zero Scheduler.
package scheduler
