package taskqueue

import (
	"context"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// runnerQuantum is how many members a runner runs on one turn of its
// queue's slot before it queues itself again behind the queue's other tasks,
// when members are left: enough to make a member's share of the hand-off
// small, few enough that other work of the queue waits little.
const runnerQuantum = 64

// A groupRunner is a task of a group's queue that runs the group's members,
// one after the other, in the order they were added. A group keeps at most
// its width of runners queued or running; a runner exits when no member
// waits, so an idle group has none. While a group has runners, its queue
// lists it (Queue.groups), so that CloseNow finds the members waiting in it.
type groupRunner struct {
	g *Group
}

// wakeRunner queues a runner for the pending members unless the group has
// as many as it may.
func (g *Group) wakeRunner() {
	if g.runners.Load() >= g.width {
		return // the common case, with no lock: the runners take the members
	}
	q := g.q
	q.mu.Lock()
	if g.runners.Load() >= g.width {
		q.mu.Unlock()
		return
	}
	if g.runners.Add(1) == 1 {
		if q.groups == nil {
			q.groups = make(map[*Group]struct{})
		}
		q.groups[g] = struct{}{}
	}
	q.mu.Unlock()
	if _, err := q.enqueue(g.ctx, &groupRunner{g: g}); err != nil {
		q.rejected.Add(1)
		g.runnerGone(err)
	}
}

// runnerGone is called as a runner leaves the group's count: it exits, or
// the queue refused it (err is not nil). Members pushed meanwhile get a
// runner, or, if the queue refuses every runner, the queue's error.
func (g *Group) runnerGone(err error) {
	q := g.q
	q.mu.Lock()
	left := g.runners.Add(-1)
	if left == 0 {
		delete(q.groups, g)
	}
	q.mu.Unlock()
	if !g.hasWaiting() {
		return
	}
	if err == nil {
		g.wakeRunner()
		return
	}
	if g.watch && g.ctx.Err() != nil {
		g.abort(context.Cause(g.ctx), false) // refused while waiting for room
	}
	if left == 0 {
		g.refuse(g.takeAll(), err)
	}
}

// CatchesPanics: see errTask.
func (r *groupRunner) CatchesPanics() {}

// Run runs members, on the slot sl, until none is left, or until the
// runner's quantum is spent, when it queues itself again.
func (r *groupRunner) Run(sl scheduler.Slot) {
	g := r.g
	g.q.skipped.Add(1) // the members count as the queue's tasks, not the runner
	normal := false
	defer func() {
		if !normal {
			r.handOn() // a member called runtime.Goexit
		}
	}()
	for n := 1; ; n++ {
		m := g.pop()
		if m == nil {
			normal = true
			g.runnerGone(nil)
			return
		}
		if g.q.closedNow.Load() {
			// CloseNow stops the members that have not started, those a
			// running runner would reach after it included.
			m.next = g.takeAll()
			g.refuse(m, ErrClosed)
			normal = true
			g.runnerGone(nil)
			return
		}
		g.runMember(m, sl)
		if n == runnerQuantum && g.hasWaiting() {
			n = 0
			if _, err := g.q.s.Enqueue(r); err == nil {
				normal = true
				return // the rest on the next turn
			}
			// The queue takes no more tasks: run on in this turn.
		}
	}
}

// hasWaiting reports whether members wait for a runner.
func (g *Group) hasWaiting() bool {
	return g.pending.Load() != nil || g.out.Load() != nil
}

// handOn queues the runner again when the goroutine that ran it exits, so
// that the members still run; if the queue refuses, they fail, unless another
// runner is left to run them.
func (r *groupRunner) handOn() {
	if _, err := r.g.q.s.Enqueue(r); err != nil {
		r.drop(queueError(err))
	}
}

// drop ends a runner the queue will not run: CloseNow took it out of the
// queue, or the queue refused it. If no other runner is left, the members
// waiting fail with err.
func (r *groupRunner) drop(err error) {
	r.g.runnerGone(err)
}

// cancelWaiting ends, with err, the members of g that have not started, for
// the queue's CloseNow or CancelKey, and returns how many.
func (g *Group) cancelWaiting(err error) int {
	return g.refuse(g.takeAll(), err)
}
