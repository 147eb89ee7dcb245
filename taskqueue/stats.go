package taskqueue

import "github.com/taskqueue-go/taskqueue/scheduler"

// Stats describes the state of a queue and what it has done.
type Stats struct {
	Name      string // the queue's name (see WithName)
	Limit     int    // the most tasks it runs at once (SetLimit): 1 if serial
	Queued    int    // tasks waiting for their turn, a group's runner tasks among them (see Group)
	Delayed   int    // tasks waiting for their due time
	Running   int    // tasks running now, on slots of q (a function RunSync runs in a task's place runs in that task's)
	Completed uint64 // tasks that ran to the end: Succeeded + Failed + Panicked; RunSync's functions, and group members, are tasks
	Succeeded uint64 // tasks that returned nil (tasks of Go that did not panic)
	Failed    uint64 // tasks that returned an error, or called runtime.Goexit
	Panicked  uint64 // tasks that panicked
	Canceled  uint64 // tasks that were accepted and never ran
	Rejected  uint64 // submissions refused: queue closed or full, or context done
	// Wait is how long a sample of the tasks that were queued (one in 64)
	// waited, from submitted (or due, for delayed tasks) to started. A
	// function that RunSync runs on its caller at once was never queued,
	// and is not sampled.
	Wait scheduler.Latency
}

// Stats returns the state of q. Its fields are read one after the other, not
// at one instant: while tasks run they may disagree by the tasks in flight,
// and they add up exactly once q is idle.
func (q *Queue) Stats() Stats {
	q.mustBeMade()
	delayed := q.delayedCount()
	skipped := q.skipped.Load() // before Completed, which counts the skipped tasks
	inner := q.inner.Load()
	s := q.s.Stats()
	panicked, failed := q.panicked.Load(), q.failed.Load()
	completed := max(s.Completed+inner, skipped) - skipped
	return Stats{
		Name:      q.name,
		Limit:     q.s.Limit(),
		Queued:    s.Pending,
		Delayed:   delayed,
		Running:   s.Running,
		Completed: completed,
		Succeeded: completed - min(completed, panicked+failed),
		Failed:    failed,
		Panicked:  panicked,
		Canceled:  q.canceled.Load(),
		Rejected:  q.rejected.Load(),
		Wait:      s.Wait,
	}
}
