package taskqueue

import (
	"context"
	"slices"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

type memberErr struct {
	i   int64
	err error
}

// A member is a function added to a group, waiting in it, then run.
type member struct {
	tc   taskCtx // the context it runs with: the group's, with its runner's slot
	next *member // in the group's pending list, then in a runner's batch
	f    func(context.Context) error
	i    int64
	typ  typedMember // the GroupOf member that embeds this one, or nil
	// barriers is the count of barriers queued on the group's queue when
	// the member was added (see scheduler.Scheduler.Barriers): a runner
	// queued before a later barrier leaves the member to one behind it.
	barriers uint64
}

// A typedMember is a member of a GroupOf.
type typedMember interface {
	call(ctx context.Context) error
	// end records how the member ended: before it counts as ended.
	end(err error)
}

func (m *member) call(ctx context.Context) error {
	if m.typ != nil {
		return m.typ.call(ctx)
	}
	return m.f(ctx)
}

func (m *member) end(err error) {
	if m.typ != nil {
		m.typ.end(err)
	}
}

// runMember runs m on a runner, on its slot sl: if the group is not
// canceled, m starts, and ends with its outcome.
func (g *Group) runMember(m *member, sl scheduler.Slot) {
	if !g.start() {
		g.q.canceled.Add(1)
		return
	}
	q := g.q
	q.inner.Add(1)
	m.tc.start(g.q, g.ctx, sl)
	p, err := q.call(&m.tc, m.call, func() {
		m.tc.end()
		q.failed.Add(1)
		g.settle(m, -runningOne, ErrGoexit)
	})
	m.tc.end()
	switch {
	case p != nil:
		q.panicked.Add(1)
		if !g.settle(m, -runningOne, p) {
			q.onPanic(p) // Wait will not return it: nobody else would see it
		}
		return
	case err != nil:
		q.failed.Add(1)
	}
	g.settle(m, -runningOne, err)
}

// start moves a member from queued to running, reporting whether it may
// run: not if the group is canceled, or its context done.
func (g *Group) start() bool {
	if g.watch && g.ctx.Err() != nil {
		g.abort(context.Cause(g.ctx), false)
	}
	if s := g.addState(runningOne - queuedOne); s&stateCancel != 0 {
		g.change(-runningOne) // canceled first: it never started
		return false
	}
	return true
}

// settle ends member m, which ran or which the queue refused, with err: it
// records err and takes m off the counts by delta. It reports whether Wait
// will return err: every error, unless the group stops at its first failure
// and err is not that one.
func (g *Group) settle(m *member, delta int64, err error) (kept bool) {
	if err != nil {
		kept = g.fail(m.i, err)
	}
	m.end(err)
	if delta != 0 {
		g.change(delta)
	}
	return kept
}

// refuse ends the members of the list from m, which never ran, with err:
// dropped if the group is canceled, failed otherwise, and counted as
// canceled tasks of the queue either way. It returns how many it ended.
func (g *Group) refuse(m *member, err error) int {
	n := 0
	for m != nil {
		next := m.next
		m.next = nil
		g.q.canceled.Add(1)
		if g.state.Load()&stateCancel != 0 {
			g.change(-queuedOne)
		} else {
			g.settle(m, -queuedOne, err)
		}
		m = next
		n++
	}
	return n
}

// fail records the error of member i, canceling a group made
// WithCancelOnError, and reports whether Wait will return it.
func (g *Group) fail(i int64, err error) bool {
	if g.failFast {
		return g.abort(err, true) || g.failLate(err)
	}
	g.mu.Lock()
	g.errs = append(g.errs, memberErr{i, err})
	g.mu.Unlock()
	return true
}

// failLate records err, the error of a member of a group made
// WithCancelOnError that failed once the group was canceled, and reports
// whether Wait will return it: the first such error, if the group's context
// canceled it and kept no member from running (see result).
func (g *Group) failLate(err error) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.byMember || g.lost || g.late != nil {
		return false
	}
	g.late = err
	return true
}

// abort cancels the group with cause, from a member that failed if
// byMember: members that have not started never run. Only the first call
// counts; it reports whether it was that one.
func (g *Group) abort(cause error, byMember bool) bool {
	g.mu.Lock()
	s := g.state.Load()
	if s&stateCancel != 0 {
		g.mu.Unlock()
		return false
	}
	g.first, g.byMember = cause, byMember
	for !g.state.CompareAndSwap(s, s|stateCancel) {
		s = g.state.Load()
	}
	g.queuedAt = int(queued(s))
	if queued(s) > 0 {
		g.lost = true
	}
	g.mu.Unlock()
	g.woke(s | stateCancel)
	if g.cancel != nil {
		g.cancel(cause)
	}
	g.refuse(g.takeAll(), nil) // dropped: the group is canceled
	return true
}

// change adds delta to the counts and wakes Wait if the group is done.
func (g *Group) change(delta int64) {
	g.woke(g.addState(delta))
}

// addState adds delta to the counts and returns the new state.
func (g *Group) addState(delta int64) uint64 {
	return g.state.Add(uint64(delta))
}

// woke is called after each change of the state that may end the group,
// with the new state ns: it ends the wait of Wait, and wakes the iterations
// of GroupOf.Completed. Of the changes that find the group done while Wait
// waits, the one that marks done closed closes it; a change that fails to
// mark it was overtaken by another, which calls woke in turn.
func (g *Group) woke(ns uint64) {
	if isDone(ns) && ns&(stateWaited|stateClosed) == stateWaited &&
		g.state.CompareAndSwap(ns, ns|stateClosed) {
		close(g.done)
	}
	if g.streams.Load() > 0 {
		g.mu.Lock()
		g.cond.Broadcast()
		g.mu.Unlock()
	}
}

// skip gives back index i, which TryGo took for a member it then refused.
func (g *Group) skip(i int64) {
	g.mu.Lock()
	g.skipped = append(g.skipped, i)
	g.mu.Unlock()
}

// skippedIndexes returns the indexes that TryGo gave back, in order.
func (g *Group) skippedIndexes() []int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	slices.Sort(g.skipped)
	return slices.Clone(g.skipped)
}
