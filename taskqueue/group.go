package taskqueue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// A Group runs tasks, its members, on a queue and waits for them all
// (errgroup's Group, conc's pool, libdispatch's dispatch_group). Members run
// under the queue's rules, among its other tasks, and a group adds no
// goroutine: members wait in the group, and a few tasks of the queue (its
// limit when the group was made, or WithGroupLimit's, even above the
// queue's: the extra ones wait their turn as tasks do), run them one after
// the other, so that a member costs no hand-off of its own; each such task lets the queue's other tasks go first
// every 64 members. On a queue that runs one task at a
// time, or WithGroupLimit(1), members run in the order they were added.
//
// By default a member's failure does not stop the others, and Wait returns
// the errors of all the members that failed, joined. Made WithCancelOnError,
// the group stops at its first failure instead: it cancels the context its
// members receive, members that have not started never run, and Wait returns
// that first error. A member that panics fails with a *PanicError, which holds
// the panic value and stack and which Wait returns (among the others unless
// the group cancels on error); Wait does not re-panic. A member's panic goes
// to the queue's panic handler only if Wait will not return it (a group
// made WithCancelOnError returns the first failure alone). A member that
// calls runtime.Goexit fails with ErrGoexit. Members added to a closed
// queue, or left waiting in the group when CloseNow drops the group's tasks,
// fail with ErrClosed.
//
// The context given to NewGroup bounds the group: once it is done, members
// that have not started never run, and Wait returns as soon as the running
// ones have returned, with the context's error, unless no member was kept
// from running by it.
//
// Members are tasks of the queue: a member added after a barrier (see
// RunBarrier) starts once the barrier has run, and one added before it ends
// before the barrier starts.
//
// The queue's Stats count members as its tasks once they end: Completed,
// Failed and Panicked for those that ran, Canceled for those that never
// started. Members waiting in the group do not count as Queued; the
// group's runner tasks (up to its limit), which take them in turn, do while
// they wait for a slot, and take room in a queue made WithMaxQueued, but
// never count as Completed or Canceled themselves.
//
// A Group is safe for use by multiple goroutines; members may add members.
// It must not be copied. The zero Group is not usable: its methods panic; call NewGroup. The
// return of each member happens before Wait returns.
type Group struct {
	q        *Queue
	ctx      context.Context         // what members receive
	cancel   context.CancelCauseFunc // cancels ctx
	unwatch  func() bool             // stops the watch of ctx; nil if none
	watch    bool                    // ctx can be done
	failFast bool                    // WithCancelOnError
	width    int32                   // the most runners: WithGroupLimit, or the queue's limit

	// state holds the counts of members queued and running, and the
	// flags below, so that a member's start and the group's cancel are one
	// atomic decision: a member starts only while the group is not canceled.
	// The words that the adding goroutines and the runners write often
	// stand on cache lines of their own.
	_       [cacheLine]byte
	state   atomic.Uint64
	_       [cacheLine - 8]byte
	next    atomic.Int64           // the number of members added: the index of the next
	pending atomic.Pointer[member] // members added since a runner last took them, the newest first
	_       [cacheLine - 16]byte
	outMu   sync.Mutex             // guards out, for the runners
	out     atomic.Pointer[member] // members taken from pending, in order: the next to run first
	_       [cacheLine - 16]byte
	runners atomic.Int32  // runners queued or running
	streams atomic.Int32  // GroupOf.Completed iterations waiting on cond
	done    chan struct{} // closed when the group is done while Wait waits

	mu       sync.Mutex // guards the fields below
	skipped  []int64    // the indexes of members that TryGo took and then refused
	errs     []memberErr
	first    error // the cause of the cancel: a member's error, or ctx's
	byMember bool  // first is a member's error
	lost     bool  // a member never ran because the group was canceled
	late     error // WithCancelOnError: the first error of a member that failed after the context canceled the group
	queuedAt int   // members that had not started when it was canceled
	cond     sync.Cond
}

// cacheLine is the size of the cache lines that keep apart the words of a
// group that different goroutines write.
const cacheLine = 64

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

// WithGroupLimit bounds how many members of a group run at once at n, below
// the queue's own limit (errgroup's SetLimit); the others wait in the group,
// and Go does not block for them. Without it, a group runs as many members
// at once as its queue's limit when the group was made. WithGroupLimit
// panics if n < 1.
func WithGroupLimit(n int) GroupOption {
	if n < 1 {
		panic(fmt.Sprintf("taskqueue: WithGroupLimit(%d): the limit must be positive", n))
	}
	return groupOptionFunc(func(g *Group) { g.width = int32(min(n, 1<<30)) })
}

// NewGroup returns a group whose members run on q and receive a context
// derived from ctx. NewGroup panics if q is nil.
func NewGroup(ctx context.Context, q *Queue, opts ...GroupOption) *Group {
	mustCtx("NewGroup", ctx)
	g := &Group{}
	g.init(ctx, q, "NewGroup", opts)
	return g
}

// isMember reports whether c is the context of a member of g as it runs.
// A member runs with the group's own context, which init made and nothing
// else is given: that is how its work is told, without a mark of its own
// in the record of every task.
func (g *Group) isMember(c *taskCtx) bool { return c.Context == g.ctx }

func (g *Group) init(ctx context.Context, q *Queue, call string, opts []GroupOption) {
	if q == nil {
		panic("taskqueue: " + call + " with a nil queue")
	}
	q.mustBeMade()
	g.q, g.ctx, g.done = q, ctx, make(chan struct{})
	g.cond.L = &g.mu
	for _, o := range opts {
		o.applyGroup(g)
	}
	if g.width == 0 {
		g.width = int32(q.s.Limit())
	}
	// The members' context is the group's own, which Wait cancels once the
	// group is done (and a failure, made WithCancelOnError, before).
	g.ctx, g.cancel = context.WithCancelCause(ctx)
	if g.ctx.Done() != nil {
		g.watch = true
		// A done context cancels the members still waiting at once, so that
		// Wait need not wait for a runner to reach them.
		g.unwatch = context.AfterFunc(g.ctx, func() { g.abort(context.Cause(g.ctx), false) })
	}
}

// Go adds a member that runs f on the group's queue, with the group's
// context, and returns at once. Go panics if f is nil, and if Wait has
// returned: a group is used once. Calls of Go from outside the group's
// members must happen before Wait is called, as with sync.WaitGroup.Add.
//
// Go blocks only where RunAsync would, and only while the group has fewer
// tasks on the queue than it may: on a full queue made WithMaxQueued and
// without WithFailWhenFull, until there is room or the group's context is done.
func (g *Group) Go(f func(context.Context) error) {
	g.mustBeMade("Group")
	if f == nil {
		nilFunc("Group.Go")
	}
	g.add(&member{f: f, i: g.next.Add(1) - 1})
}

// TryGo adds a member that runs f only if it can start at once, and reports
// whether it did (errgroup's TryGo): the group has fewer members running
// than its limit, no member waits for its turn, and a slot of the group's
// queue is free now, with no task waiting before it (see Queue.TryGo). A
// member TryGo refuses is not added: it never runs, counts nowhere, and
// takes no place in GroupOf's results. TryGo never blocks. It reports false
// once the group is canceled or its queue closed, and panics if f is nil or
// Wait has returned.
func (g *Group) TryGo(f func(context.Context) error) bool {
	g.mustBeMade("Group")
	if f == nil {
		nilFunc("Group.TryGo")
	}
	return g.tryGo(&member{f: f})
}

// add counts m as queued and puts it in the group's pending list, for a
// runner to take.
func (g *Group) add(m *member) {
	if g.watch && g.ctx.Err() != nil {
		g.abort(context.Cause(g.ctx), false)
	}
	if g.q.isClosed() {
		if g.state.Load()&stateEnded != 0 {
			panic("taskqueue: Group.Go after Wait returned: a group is used once")
		}
		g.q.rejected.Add(1)
		g.settle(m, 0, ErrClosed)
		return
	}
	// One add and no loop, however many goroutines add members and runners
	// start them: a member added to a canceled group takes itself back out.
	if s := g.addState(queuedOne); s&(stateEnded|stateCancel) != 0 {
		g.addState(-queuedOne) // the counts of a canceled group no longer matter
		if s&stateEnded != 0 {
			panic("taskqueue: Group.Go after Wait returned: a group is used once")
		}
		g.q.canceled.Add(1) // accepted, and never to run
		g.mu.Lock()
		g.lost = true
		g.mu.Unlock()
		return
	}
	m.barriers = g.q.s.Barriers()
	for {
		top := g.pending.Load()
		m.next = top
		if g.pending.CompareAndSwap(top, m) {
			break
		}
	}
	g.wakeRunner()
}

// Wait blocks until no member of the group runs or will ever run: every
// member has ended, or, once the group is canceled, every member that had
// started has ended and the others never will. So nothing of the group runs
// after Wait returns, whatever failed and whatever was canceled, as with
// errgroup and sync.WaitGroup. Wait returns how the group ended:
//
//   - for a group made WithCancelOnError, the first error of a member, or
//     the error of the context that was done first, if that kept a member
//     from running;
//   - otherwise the errors of the members that failed, in the order the
//     members were added, followed by the error of the context that kept a
//     member from running, if one did: one error alone, several joined
//     (errors.Join), so that errors.Is and errors.As see each.
//
// Wait returns nil if every member returned nil. It then cancels the
// context the members received, and the group may not be used again.
//
// If ctx is done before the group, Wait cancels the group as its own
// context would: the members that have not started never will, and Wait
// returns once those running have returned. ctx may be the group's own
// context (the errgroup pattern): nothing runs after Wait returns either
// way. The context a member received may be passed too, once that member has
// returned; while it runs, a Wait with it would wait for itself.
//
// Wait panics when called from a member of the group (with the member's
// context, or one derived from it), or from a task that holds the one slot
// of a serial queue that the members need (a task of the group's serial
// queue, say): it would wait for itself. A task is told by its context, as
// RunSync tells it: with another context, such as context.Background(), the
// wait cannot be told from an outsider's and lasts until its members can
// run.
func (g *Group) Wait(ctx context.Context) error {
	mustCtx("Group.Wait", ctx)
	g.mustBeMade("Group")
	g.waitMembers(ctx, "Group.Wait")
	return g.result()
}

// waitMembers waits until the group is done, canceling it if ctx is done
// first, then ends it.
func (g *Group) waitMembers(ctx context.Context, call string) {
	if !isDone(g.state.Load()) {
		await(ctx, call, waited{q: g.q, group: g}, func() error {
			if !g.markWaited() {
				return nil // done meanwhile
			}
			select {
			case <-g.done:
			case <-ctx.Done():
				g.abort(context.Cause(ctx), false)
				<-g.done
			}
			return nil
		})
	}
	g.end()
}

// markWaited marks the group as waited for, so that the change of state that
// finds it done closes done, and reports whether it was not done yet.
func (g *Group) markWaited() bool {
	for {
		s := g.state.Load()
		if isDone(s) {
			return false
		}
		if s&stateWaited != 0 || g.state.CompareAndSwap(s, s|stateWaited) {
			return true
		}
	}
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
	if g.failFast && ctxErr == nil {
		return g.late // the context kept no member from running: a member's error counts
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

// mustBeMade panics on a zero Group, or the zero GroupOf (typ) holding it.
func (g *Group) mustBeMade(typ string) {
	if g.q == nil {
		panic("taskqueue: use of a zero " + typ + "; make one with New" + typ)
	}
}
