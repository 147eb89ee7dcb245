package taskqueue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// A Group runs tasks, its members, on a queue and waits for them all
// (errgroup's Group, conc's pool, libdispatch's dispatch_group). Members run
// under the queue's rules, among its other tasks; a group adds no goroutine.
//
// By default a member's failure does not stop the others, and Wait returns
// the errors of all the members that failed, joined. Made WithCancelOnError,
// the group stops at its first failure instead: it cancels the context its
// members receive, members that have not started never run, and Wait returns
// that first error. A member that panics fails with a *PanicError, which holds
// the panic value and stack and which Wait returns (among the others unless
// the group cancels on error); Wait does not re-panic. As with the panics of
// tasks with a Handle, it also goes to the queue's panic handler. A member
// that calls runtime.Goexit fails with ErrGoexit. A member the queue does not
// accept (it is closed, or full) fails with ErrClosed or ErrQueueFull.
//
// The context given to NewGroup bounds the group: once it is done, members
// that have not started never run, and Wait returns as soon as the running
// ones have returned, with the context's error, unless no member was kept
// from running by it.
//
// A Group is safe for use by multiple goroutines; members may add members.
// It must not be copied. The zero Group is not usable; call NewGroup. The
// return of each member happens before Wait returns.
type Group struct {
	q        *Queue
	ctx      context.Context         // what members receive
	cancel   context.CancelCauseFunc // nil unless the group derived ctx
	unwatch  func() bool             // stops the watch of ctx; nil if none
	watch    bool                    // ctx can be done
	failFast bool                    // WithCancelOnError
	limit    int                     // WithGroupLimit; 0: the queue's only

	// state holds the counts of members queued and running, and the
	// flags below, so that a member's start and the group's cancel are one
	// atomic decision: a member starts only while the group is not canceled.
	state atomic.Uint64
	next  atomic.Int64  // the number of members added: the index of the next
	done  chan struct{} // closed when the group is done while Wait waits

	mu       sync.Mutex // guards the fields below
	errs     []memberErr
	first    error      // the cause of the cancel: a member's error, or ctx's
	byMember bool       // first is a member's error
	lost     bool       // a member never ran because the group was canceled
	queuedAt int        // members that had not started when it was canceled
	inQueue  int        // WithGroupLimit: members handed to the queue, not ended
	overflow []groupJob // WithGroupLimit: members waiting for their turn
	cond     sync.Cond  // GroupOf.All waits on it, with mu
	streams  atomic.Int32
}

// The layout of Group.state.
const (
	runningOne  = 1         // members started and not ended: bits 0-29
	queuedOne   = 1 << 30   // members added and not started: bits 30-59
	countMask   = 1<<30 - 1 // one count
	stateClosed = 1 << 60   // done is closed
	stateEnded  = 1 << 61   // Wait has returned
	stateWaited = 1 << 62   // Wait waits: the end closes done
	stateCancel = 1 << 63   // the group is canceled: nothing starts
)

func running(s uint64) uint64 { return s & countMask }
func queued(s uint64) uint64  { return s >> 30 & countMask }

// isDone reports whether the group of state s has nothing left to wait for:
// nothing running, and, unless it is canceled, nothing queued.
func isDone(s uint64) bool {
	return running(s) == 0 && (s&stateCancel != 0 || queued(s) == 0)
}

type memberErr struct {
	i   int64
	err error
}

// A groupJob is a member as the group sees it: a task of the queue, with
// the function to call.
type groupJob interface {
	scheduler.Task
	index() int64
	call(ctx context.Context) error
	// end records how the member ended; it runs before the member counts
	// as ended.
	end(err error)
}

// A GroupOption configures a Group; options are given to NewGroup and
// NewGroupOf.
type GroupOption interface {
	applyGroup(*Group)
}

type groupOptionFunc func(*Group)

func (f groupOptionFunc) applyGroup(g *Group) { f(g) }

// WithCancelOnError makes a group stop at its first failure (errgroup's
// WithContext, conc's WithCancelOnError): the first member to fail cancels
// the context the members receive, with its error as the cause
// (context.Cause), members that have not started never run, and Wait
// returns that first error alone.
func WithCancelOnError() GroupOption {
	return groupOptionFunc(func(g *Group) { g.failFast = true })
}

// WithGroupLimit bounds how many members of a group are in the queue at
// once, waiting or running, at n, below the queue's own limit (errgroup's
// SetLimit). The others wait in the group, in the order they were added,
// and Go still never blocks. WithGroupLimit panics if n < 1.
func WithGroupLimit(n int) GroupOption {
	if n < 1 {
		panic(fmt.Sprintf("taskqueue: WithGroupLimit(%d): the limit must be positive", n))
	}
	return groupOptionFunc(func(g *Group) { g.limit = n })
}

// NewGroup returns a group whose members run on q and receive a context
// derived from ctx. NewGroup panics if q is nil.
func NewGroup(ctx context.Context, q *Queue, opts ...GroupOption) *Group {
	g := &Group{}
	g.init(ctx, q, "NewGroup", opts)
	return g
}

func (g *Group) init(ctx context.Context, q *Queue, call string, opts []GroupOption) {
	if q == nil {
		panic("taskqueue: " + call + " with a nil queue")
	}
	g.q, g.ctx, g.done = q, ctx, make(chan struct{})
	g.cond.L = &g.mu
	for _, o := range opts {
		o.applyGroup(g)
	}
	if g.failFast {
		g.ctx, g.cancel = context.WithCancelCause(ctx)
	}
	if g.ctx.Done() != nil {
		g.watch = true
		// A done context cancels the members still queued at once, so that
		// Wait need not wait for the queue to reach them.
		g.unwatch = context.AfterFunc(g.ctx, func() { g.abort(context.Cause(g.ctx), false) })
	}
}

// Go adds a member that runs f on the group's queue, with the group's
// context, and returns at once. Go panics if f is nil, and if Wait has
// returned: a group is used once. Calls of Go from outside the group's
// members must happen before Wait is called, as with sync.WaitGroup.Add.
func (g *Group) Go(f func(context.Context) error) {
	if f == nil {
		nilFunc("Group.Go")
	}
	g.add(&member{g: g, f: f, i: g.next.Add(1) - 1})
}

type member struct {
	g *Group
	f func(context.Context) error
	i int64
}

func (m *member) Run()                           { m.g.run(m) }
func (m *member) index() int64                   { return m.i }
func (m *member) call(ctx context.Context) error { return m.f(ctx) }
func (m *member) end(error)                      {}

// add counts j as queued and hands it to the queue, or, on a group with a
// limit, to the group's own list if the group has as many in the queue as
// it allows.
func (g *Group) add(j groupJob) {
	if g.watch && g.ctx.Err() != nil {
		g.abort(context.Cause(g.ctx), false)
	}
	for {
		s := g.state.Load()
		if s&stateEnded != 0 {
			panic("taskqueue: Group.Go after Wait returned: a group is used once")
		}
		if s&stateCancel != 0 {
			g.mu.Lock()
			g.lost = true
			g.mu.Unlock()
			return
		}
		if g.state.CompareAndSwap(s, s+queuedOne) {
			break
		}
	}
	if g.limit > 0 {
		g.mu.Lock()
		if g.inQueue >= g.limit {
			g.overflow = append(g.overflow, j)
			g.mu.Unlock()
			return
		}
		g.inQueue++
		g.mu.Unlock()
	}
	g.submit(j)
}

// submit hands j to the queue. A member the queue refuses ends with the
// queue's error, without running.
func (g *Group) submit(j groupJob) {
	if _, err := g.q.enqueue(g.ctx, j); err != nil {
		g.q.rejected.Add(1)
		if g.watch && g.ctx.Err() != nil {
			// Refused for the group's own context: lost, not failed.
			g.abort(context.Cause(g.ctx), false)
			g.release()
			g.change(-queuedOne)
			return
		}
		g.settle(j, -queuedOne, err)
	}
}

// run is the member j run by the queue: it starts if the group is not
// canceled, and ends with its outcome.
func (g *Group) run(j groupJob) {
	if !g.start() {
		g.q.skipped.Add(1)
		g.q.canceled.Add(1)
		return
	}
	normal := false
	defer func() {
		if !normal {
			g.abortMember(j, recover())
		}
	}()
	var err error
	if g.q.observer == nil && g.q.labels == nil {
		err = j.call(g.ctx)
	} else {
		err = g.q.invoke(g.ctx, j.call)
	}
	normal = true
	if err != nil {
		g.q.failed.Add(1)
	}
	g.settle(j, -runningOne, err)
}

// start moves a member from queued to running, reporting whether it may
// run: not if the group is canceled, or its context done.
func (g *Group) start() bool {
	if g.watch && g.ctx.Err() != nil {
		g.abort(context.Cause(g.ctx), false)
	}
	for {
		s := g.state.Load()
		if s&stateCancel != 0 {
			g.change(-queuedOne)
			return false
		}
		if g.state.CompareAndSwap(s, s-queuedOne+runningOne) {
			return true
		}
	}
}

// abortMember ends a member that panicked with v, or that called
// runtime.Goexit if v is nil, from the deferred call that recovered v.
func (g *Group) abortMember(j groupJob, v any) {
	var err error = ErrGoexit
	if v == nil {
		g.q.failed.Add(1)
	} else {
		p := newPanicError(v, g.q)
		g.q.panicked.Add(1)
		g.q.onPanic(p)
		err = p
	}
	g.settle(j, -runningOne, err)
}

// settle ends member j, which ran or which the queue refused, with err: it
// records err, lets the next member of a limited
// group into the queue, and takes j off the counts by delta.
func (g *Group) settle(j groupJob, delta int64, err error) {
	if err != nil {
		g.fail(j.index(), err)
	}
	j.end(err)
	g.release()
	g.change(delta)
}

// fail records the error of member i, canceling a group made
// WithCancelOnError.
func (g *Group) fail(i int64, err error) {
	if g.failFast {
		g.abort(err, true)
		return
	}
	g.mu.Lock()
	g.errs = append(g.errs, memberErr{i, err})
	g.mu.Unlock()
}

// release gives a limited group's place in the queue to the next member
// waiting in the group, if any.
func (g *Group) release() {
	if g.limit == 0 {
		return
	}
	g.mu.Lock()
	if len(g.overflow) == 0 || g.state.Load()&stateCancel != 0 {
		g.inQueue--
		g.mu.Unlock()
		return
	}
	j := g.overflow[0]
	g.overflow[0] = nil
	g.overflow = g.overflow[1:]
	g.mu.Unlock()
	g.submit(j)
}

// abort cancels the group with cause, from a member that failed if
// byMember: members that have not started never run. Only the first call
// counts.
func (g *Group) abort(cause error, byMember bool) {
	g.mu.Lock()
	s := g.state.Load()
	if s&stateCancel != 0 {
		g.mu.Unlock()
		return
	}
	g.first, g.byMember = cause, byMember
	clear(g.overflow) // counted as queued, and so as lost below
	g.overflow = nil
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
}

// change adds delta to the counts and wakes Wait if the group is done.
func (g *Group) change(delta int64) {
	for {
		s := g.state.Load()
		ns := uint64(int64(s) + delta)
		if g.state.CompareAndSwap(s, ns) {
			g.woke(ns)
			return
		}
	}
}

// woke is called after each change of the state that may end the group,
// with the new state ns: it ends the wait of Wait, and wakes the iterators
// of GroupOf.All. Of the changes that find the group done while Wait waits,
// the one that marks done closed closes it; a change that fails to mark it
// was overtaken by another, which calls woke in turn.
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

// Wait blocks until every member has ended, or, once the group is canceled,
// until every member that started has, and returns how the group ended:
//
//   - for a group made WithCancelOnError, the first error of a member, or
//     the error of the group's context if that was done first and kept a
//     member from running;
//   - otherwise the errors of the members that failed, in the order the
//     members were added, followed by the error of the group's context if
//     that kept a member from running: one error alone, several joined
//     (errors.Join), so that errors.Is and errors.As see each.
//
// Wait returns nil if every member returned nil. It then cancels the
// context the members received, and the group may not be used again.
//
// Waiting for a group from a task of its own queue, when that queue runs one
// task at a time, could only wait forever: Wait panics instead. From a task
// of a queue of the same tree, it lends the waiting task's slots, as
// Handle.Wait does.
func (g *Group) Wait() error {
	g.waitMembers("Group.Wait")
	return g.result()
}

func (g *Group) waitMembers(call string) {
	for {
		s := g.state.Load()
		if isDone(s) {
			break
		}
		g.mustNotWaitForItself(call)
		if s&stateWaited != 0 || g.state.CompareAndSwap(s, s|stateWaited) {
			g.q.s.Await(func() { <-g.done })
			break
		}
	}
	g.end()
}

// end ends the group once it is done: it stops the watch of its context and
// cancels the one its members received.
func (g *Group) end() {
	if g.unwatch != nil {
		g.unwatch()
	}
	if g.cancel != nil {
		g.cancel(context.Canceled)
	}
	for {
		s := g.state.Load()
		if s&stateEnded != 0 || g.state.CompareAndSwap(s, s|stateEnded) {
			return
		}
	}
}

// mustNotWaitForItself panics when the caller runs a task of the group's
// queue and that queue runs one task at a time: its members could never
// start.
func (g *Group) mustNotWaitForItself(call string) {
	if g.q.Limit() == 1 && g.q.s.Holds() {
		panic("taskqueue: " + call + " from a task of the group's own serial queue, which would wait for itself")
	}
}

// result returns the outcome of the group once it is done, as Wait does.
func (g *Group) result() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var ctxErr error
	if g.lost {
		ctxErr = g.first // the context's cause, for a group not byMember
	}
	if g.failFast && g.byMember {
		return g.first
	}
	if g.failFast {
		return ctxErr
	}
	if len(g.errs) == 0 {
		return ctxErr
	}
	slices.SortFunc(g.errs, func(a, b memberErr) int { return cmp.Compare(a.i, b.i) })
	errs := make([]error, 0, len(g.errs)+1)
	for _, e := range g.errs {
		errs = append(errs, e.err)
	}
	if ctxErr != nil {
		errs = append(errs, ctxErr)
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
