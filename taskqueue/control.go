package taskqueue

import "fmt"

// Suspend stops q from starting tasks until Resume: the running tasks go on
// to their end, and submissions are still accepted (libdispatch's
// dispatch_suspend, workerpool's Pause). Suspending a child queue holds back
// its subtree only. Suspend and Resume nest: q starts tasks again once each
// Suspend has had its Resume. Members of groups are tasks too: none starts
// while q is suspended. A RunSync on a suspended queue waits, unless it
// comes from one of q's running tasks, in whose place it runs, or would wait
// for itself, when it panics as Handle.Wait says. So does a RunSync on a
// queue below q, but that one of q's running tasks makes on an idle queue
// below it runs at once, in the task's place on its slot of q, and on a new
// slot below. Unlike workerpool's Pause,
// Suspend returns at once, without waiting for the running tasks.
func (q *Queue) Suspend() {
	q.mustBeMade()
	q.suspends.Add(1)
	q.s.Suspend()
}

// Resume undoes a Suspend. Resume panics if q is not suspended.
func (q *Queue) Resume() {
	q.mustBeMade()
	if q.suspends.Add(-1) < 0 {
		q.suspends.Add(1)
		panic("taskqueue: Resume of a queue that is not suspended")
	}
	q.s.Resume()
}

// mustBeMade panics if q is the zero Queue, with a message that says how to
// make one, rather than a nil dereference deep inside.
func (q *Queue) mustBeMade() {
	if q.s == nil {
		panic("taskqueue: use of a zero Queue; make one with NewSerial or NewConcurrent")
	}
}

// SetLimit changes how many tasks a concurrent queue runs at once (pond's
// Resize, errgroup's SetLimit): raising it starts waiting tasks at once;
// lowering it lets the running tasks finish, after which no more than n
// run (a task that a worker was taking as SetLimit was called counts among
// the running ones: it may begin after SetLimit returns); a limit above
// 1<<30 is taken as 1<<30, which Stats then reports.
// SetLimit panics if n < 1, and on a queue made by NewSerial, whose tasks
// rely on running one at a time.
func (q *Queue) SetLimit(n int) {
	q.mustBeMade()
	if q.serial {
		panic(fmt.Sprintf("taskqueue: SetLimit(%d) on a serial queue", n))
	}
	if n < 1 {
		panic(fmt.Sprintf("taskqueue: SetLimit(%d): limit must be positive", n))
	}
	q.s.SetLimit(n)
}

// isClosed reports whether q is closed: Close, Shutdown or CloseNow was called
// on it or on a target above it.
func (q *Queue) isClosed() bool { return q.s.Closed() }

// idle reports whether q has no task queued, delayed or running: its
// scheduler is idle, reservations included, which a delayed task holds from
// its submission until it is queued (also while runDue moves it, out of the
// heap and not yet queued).
func (q *Queue) idle() bool { return q.s.Idle() }
