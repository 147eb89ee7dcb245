package taskqueue

import "context"

// The one path of every blocking wait of this package: Handle.Wait (and
// Future.Wait), Group.Wait, GroupOf.Wait and Completed, RunSync waiting for
// its turn, the caller of Apply and Map waiting for its helpers, and
// Shutdown. Each decides through await, from the caller's context, whether
// the caller works for a task, and whether its wait could ever end.
//
// A task keeps its slots while it waits: of its queue, and of each target
// above it. No slot is lent to the work waited for. So a wait from a task
// for work that needs a slot the task holds waits until that slot is free,
// which, when the slot is the one of a serial queue, is never: await panics
// then, naming the call, as errgroup, sync.WaitGroup and libdispatch leave
// such a wait to hang. Waits of tasks of concurrent queues for work of the
// same queue or tree hold their slots as a pool's workers do: when every
// slot is held so, the waits last until their contexts end.

// waited describes the work a blocking call waits for.
type waited struct {
	q       *Queue   // the queue whose work it waits for
	all     bool     // all of q's work, that of its children included (Shutdown)
	started bool     // work that has started: the helpers of Apply at work
	task    *taskCtx // the task waited for, or nil
	after   *Handle  // the task that the continuation waited for waits for, or nil
	group   *Group   // the group waited for, or nil
}

// await panics, naming call, if the work that ctx tells would wait for
// itself in waiting for w (see selfWait), and otherwise calls wait, which
// blocks until w's work is done or ctx is done, and returns its error.
func await(ctx context.Context, call string, w waited, wait func() error) error {
	if why := w.selfWait(ctx); why != "" {
		panic("taskqueue: " + call + " " + why + ", which would wait for itself")
	}
	return wait()
}

// selfWait reports why work with ctx could never see w's work done while it
// waits for it, or "" if it could. The work of ctx is each task, or
// function run in a task's place, whose context ctx is or derives from,
// while it runs (see workOf): such work
//
//   - is the task waited for, or a member of the group waited for;
//   - holds a slot of w.q, when it waits for all of w.q's work;
//   - holds the one slot of a serial queue (made by NewSerial) that w's work
//     needs to start: of w.q, or of a target above it; unless that work has
//     started already (w.started).
func (w waited) selfWait(ctx context.Context) string {
	if w.started {
		return "" // work that runs already needs no slot of the caller's
	}
	// A continuation needs the tasks it follows to run first: a wait for it
	// waits for them too.
	for a := w.after; a != nil; a = a.antecedent() {
		if why := (waited{q: a.tc.q, task: &a.tc}).selfWait(ctx); why != "" && !a.settled() {
			return why
		}
	}
	for c := workOf(ctx); c != nil; c = workOf(c.Context) {
		if c.ended() {
			continue // the task has returned: its context is an outsider's
		}
		if why := w.waitsFor(c); why != "" {
			return why
		}
	}
	return ""
}

// waitsFor reports why the running work c could never see w's work done
// while it waits for it, or "".
func (w waited) waitsFor(c *taskCtx) string {
	switch {
	case w.task != nil && c == w.task:
		return "from the task it waits for"
	case w.group != nil && w.group.isMember(c):
		return "from a member of the group"
	case w.all && w.q.s.Holds(c.slot):
		return "from a task of the queue"
	}
	for a := w.q; a != nil; a = a.target {
		switch {
		case !a.serial || !a.s.Holds(c.slot):
		case a == w.q:
			return "from a task of the serial queue it waits for"
		default:
			return "from a task that holds the one slot of a serial queue that the queue it waits for runs on"
		}
	}
	return ""
}
