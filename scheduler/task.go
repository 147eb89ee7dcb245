package scheduler

import (
	"context"
	"fmt"
)

// A Task is an item of work. Run is called at most once per time the task is
// queued, with the slot the task holds while it runs: work done for the task
// (a nested call of the task's own function, a goroutine it starts and
// waits for) passes that slot to TryRun and Holds, which is how the
// Scheduler knows it for the task's own work.
type Task interface {
	Run(slot Slot)
}

// Func adapts an ordinary function, which has no use for its slot, to a
// Task. A queued Func costs one word of the list.
type Func func()

// Run calls f.
func (f Func) Run(Slot) { f() }

// An ID names an item while it is queued. IDs increase with each item queued
// and are never reused by a Scheduler; the zero ID names no item.
type ID uint64

// barrier marks a task given to Barrier.
type barrier struct{ Task }

// Barrier returns t marked as a barrier, to be queued like any item. A
// barrier starts only when every item queued before it has finished, and
// nothing queued after it starts until it has finished, so it runs alone even
// in a Scheduler with a limit above one (GCD's barrier blocks, .NET's
// ConcurrentExclusiveSchedulerPair). Marking costs one allocation; the items
// that DequeueAll and CloseNow return are t, unmarked.
func Barrier(t Task) Task {
	if t == nil {
		panic("scheduler: Barrier(nil)")
	}
	return &barrier{t}
}

// carried marks an item that Requeue queued: it carries work that its
// Scheduler accepted already, and holds no room of the list.
type carried struct{ Task }

// isCarried reports whether t was queued by Requeue.
func isCarried(t Task) bool {
	_, ok := t.(carried)
	return ok
}

// unwrap returns the task that t marks as a barrier, as carried, or both,
// or t.
func unwrap(t Task) Task {
	if c, ok := t.(carried); ok {
		t = c.Task
	}
	if b, ok := t.(*barrier); ok {
		return b.Task
	}
	return t
}

// isBarrier reports whether t was marked by Barrier.
func isBarrier(t Task) bool {
	if c, ok := t.(carried); ok {
		t = c.Task // Requeue keeps the mark
	}
	_, ok := t.(*barrier)
	return ok
}

// mustCtx panics, naming call, if ctx is nil, even when the call would not
// have needed to wait, so that the misuse shows at once.
func mustCtx(call string, ctx context.Context) {
	if ctx == nil {
		panic("scheduler: " + call + " with a nil context")
	}
}

// mustTask panics, naming call, if t is nil or a nil Func, which could not
// run.
func mustTask(call string, t Task) {
	switch t := t.(type) {
	case nil:
		panic("scheduler: " + call + "(nil)")
	case Func:
		if t == nil {
			panic(fmt.Sprintf("scheduler: %s(Func(nil))", call))
		}
	}
}
