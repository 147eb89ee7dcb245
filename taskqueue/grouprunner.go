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
	g     *Group
	first *member // a member that TryGo gave it, to run before the others; nil once it ran
	// barriers is the count of barriers queued on the group's queue when
	// the runner was queued, or less: the members added after a barrier
	// queued behind the runner wait for that barrier (see Run).
	barriers uint64
}

// wakeRunner queues a runner for the pending members unless the group has
// as many as it may.
func (g *Group) wakeRunner() {
	if !g.addRunner() {
		return
	}
	if _, err := g.q.enqueue(g.ctx, &groupRunner{g: g, barriers: g.q.s.Barriers()}); err != nil {
		// A runner is no submission of the user's: the members it leaves
		// count as canceled (see refuse).
		g.runnerGone(err)
	}
}

// addRunner counts a new runner, reporting false if the group has as many
// as it may. While a group has runners, its queue lists it, so that
// CloseNow finds the members waiting in it.
func (g *Group) addRunner() bool {
	if g.runners.Load() >= g.width {
		return false // the common case, with no lock: the runners take the members
	}
	q := g.q
	q.mu.Lock()
	defer q.mu.Unlock()
	if g.runners.Load() >= g.width {
		return false
	}
	if g.runners.Add(1) == 1 {
		if q.groups == nil {
			q.groups = make(map[*Group]struct{})
		}
		q.groups[g] = struct{}{}
	}
	return true
}

// tryGo adds m, to start at once on a free slot of the group's queue, on a
// runner of its own, if nothing holds it back (see Group.TryGo), reporting
// whether it did. The member's index is taken from the group's count as Go
// takes it; a member refused has its index given back (see skipped).
func (g *Group) tryGo(m *member) bool {
	if g.state.Load()&(stateEnded|stateCancel) != 0 {
		if g.state.Load()&stateEnded != 0 {
			panic("taskqueue: Group.TryGo after Wait returned: a group is used once")
		}
		return false
	}
	if g.q.isClosed() || g.hasWaiting() || (g.watch && g.ctx.Err() != nil) || !g.addRunner() {
		return false
	}
	if s := g.addState(queuedOne); s&(stateEnded|stateCancel) != 0 {
		g.change(-queuedOne)
		g.runnerGone(nil)
		return false
	}
	m.i = g.next.Add(1) - 1
	if !g.q.s.TryEnqueue(&groupRunner{g: g, first: m, barriers: g.q.s.Barriers()}) {
		g.skip(m.i)
		g.change(-queuedOne)
		g.runnerGone(nil)
		return false
	}
	return true
}

// runnerGone is called as a runner leaves the group's count: it exits, or
// the queue refused it (err is not nil). Members pushed meanwhile get a
// runner, or, if the queue refuses every runner, the queue's error: it
// returns how many members it ended so.
func (g *Group) runnerGone(err error) int {
	q := g.q
	q.mu.Lock()
	left := g.runners.Add(-1)
	if left == 0 {
		delete(q.groups, g)
	}
	q.mu.Unlock()
	if !g.hasWaiting() {
		return 0
	}
	if err == nil {
		g.wakeRunner()
		return 0
	}
	if g.watch && g.ctx.Err() != nil {
		g.abort(context.Cause(g.ctx), false) // refused while waiting for room
	}
	if left == 0 {
		return g.refuse(g.takeAll(), err)
	}
	return 0
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
		m := r.first
		if m != nil {
			r.first = nil
		} else {
			m = g.pop()
		}
		if m == nil {
			normal = true
			g.runnerGone(nil)
			return
		}
		if m.barriers > r.barriers {
			// m was added after a barrier that was queued behind this
			// runner: no task submitted after a barrier starts before it
			// has run. The runner goes behind it, m and the rest with it.
			g.unpop(m)
			normal = true
			r.requeue()
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
		// Members are tasks of the queue: Suspend, and SetLimit lowering
		// the limit, hold them back, and after a quantum the queue's other
		// tasks go first. The runner hands the rest back to the queue's
		// list, which takes it whatever the queue's state: the members
		// were accepted.
		if g.hasWaiting() && (n == runnerQuantum || g.q.s.Held()) {
			normal = true
			r.requeue()
			return
		}
	}
}

// hasWaiting reports whether members wait for a runner.
func (g *Group) hasWaiting() bool {
	return g.pending.Load() != nil || g.out.Load() != nil
}

// handOn queues the runner again when the goroutine that ran it exits, so
// that the members still run.
func (r *groupRunner) handOn() {
	r.requeue()
}

// requeue hands r back to its queue's list, whatever the queue's state: the
// members it runs were accepted.
func (r *groupRunner) requeue() {
	s := r.g.q.s
	r.barriers = s.Barriers()
	s.Requeue(r)
}

// drop ends a runner that CloseNow took out of the queue. If no other
// runner is left, the members waiting fail with err; it returns how many.
func (r *groupRunner) drop(err error) int {
	return r.g.runnerGone(err)
}

// cancelWaiting ends, with err, the members of g that have not started, for
// the queue's CloseNow or CancelKey, and returns how many.
func (g *Group) cancelWaiting(err error) int {
	return g.refuse(g.takeAll(), err)
}

// take returns the members of the pending list in the order they were added,
// linked by next, and empties the list. Adding to the list costs a member one
// compare-and-swap and no lock; the runners take it at once.
func (g *Group) take() *member {
	var batch *member
	for m := g.pending.Swap(nil); m != nil; {
		next := m.next
		m.next = batch
		batch = m
		m = next
	}
	return batch
}

// pop returns the member to run next, or nil if none waits.
func (g *Group) pop() *member {
	g.outMu.Lock()
	m := g.out.Load()
	if m == nil {
		m = g.take()
	}
	if m != nil {
		g.out.Store(m.next)
		m.next = nil
	}
	g.outMu.Unlock()
	return m
}

// unpop puts m, which pop returned, back at the front.
func (g *Group) unpop(m *member) {
	g.outMu.Lock()
	m.next = g.out.Load()
	g.out.Store(m)
	g.outMu.Unlock()
}

// takeAll returns every member waiting, in order, and empties the lists.
func (g *Group) takeAll() *member {
	g.outMu.Lock()
	defer g.outMu.Unlock()
	first := g.out.Swap(nil)
	rest := g.take()
	if first == nil {
		return rest
	}
	last := first
	for last.next != nil {
		last = last.next
	}
	last.next = rest
	return first
}
