package scheduler

import "fmt"

// A Task is an item of work. Run is called at most once per time the task is
// queued.
type Task interface {
	Run()
}

// Func adapts an ordinary function to a Task.
type Func func()

// Run calls f.
func (f Func) Run() { f() }

// An ID names an item while it is queued. IDs increase with each item queued
// and are never reused by a Scheduler; the zero ID names no item.
type ID uint64

// barrier marks a task given to Barrier.
type barrier struct{ Task }

// Barrier returns t marked as a barrier, to be queued like any item. A
// barrier starts only when every item queued before it has finished, and
// nothing queued after it starts until it has finished, so it runs alone even
// in a Scheduler with a limit above one (GCD's barrier blocks, .NET's
// ConcurrentExclusiveSchedulerPair). Marking costs one allocation; the mark is
// dropped when the item is queued, and [Scheduler.DequeueAll] returns t.
func Barrier(t Task) Task {
	if t == nil {
		panic("scheduler: Barrier(nil)")
	}
	return &barrier{t}
}

// unwrap returns the task to queue for t and whether it is a barrier. It
// panics, naming call, if t is nil or holds a nil pointer or function, which
// could not run.
func unwrap(call string, t Task) (Task, bool) {
	if t == nil {
		panic("scheduler: " + call + "(nil)")
	}
	b, isBarrier := t.(*barrier)
	if isBarrier {
		t = b.Task
	}
	if split(t).data == nil {
		panic(fmt.Sprintf("scheduler: %s(%T(nil))", call, t))
	}
	return t, isBarrier
}
