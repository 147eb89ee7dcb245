package taskqueue

import (
	"context"

	"github.com/taskqueue-go/taskqueue/internal/mainhook"
)

// HasTimer reports whether q holds a timer for delayed tasks.
func (q *Queue) HasTimer() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.timer != nil
}

// Slots returns the number of items running on the slots of q.s scheduler.
func (q *Queue) Slots() int { return q.s.Stats().Running }

// Wait waits until q is idle.
func (q *Queue) Wait(ctx context.Context) error { return q.s.Wait(ctx) }

// MainError exposes the mapping of the main-thread helpers' errors.
var MainError = mainError

// WithoutMainThread runs f as in a program that does not import package
// mainthread.
func WithoutMainThread(f func()) {
	call, goFn := mainhook.Call, mainhook.Go
	mainhook.Call, mainhook.Go = nil, nil
	defer func() { mainhook.Call, mainhook.Go = call, goFn }()
	f()
}

// A HandleProbe drives a Handle's node list directly, for the model test.
type HandleProbe struct{ h *Handle }

// NewHandleProbe returns a probe of a pending handle of q.
func NewHandleProbe(q *Queue) *HandleProbe {
	h := &Handle{}
	h.init(context.Background(), q)
	return &HandleProbe{h}
}

func (p *HandleProbe) Handle() *Handle { return p.h }

// Finish completes the handle with err and reports whether anyone watched.
func (p *HandleProbe) Finish(err error) bool { return p.h.finish(err) }

// Notify adds a callback node.
func (p *HandleProbe) Notify(f func()) { p.h.notify(func() bool { f(); return true }) }

// PushWait adds a node of a Wait that watches a context and returns its
// channel, or nil if the task was done already.
func (p *HandleProbe) PushWait() <-chan struct{} {
	w := &node{kind: waitChan, ch: make(chan struct{}, 1)}
	if !p.h.push(w) {
		return nil
	}
	return w.ch
}

// GroupProbe drives a Group's state word through the functions the group
// uses, on a queue that never runs the group's runners.
type GroupProbe struct{ g *Group }

func NewGroupProbe(q *Queue, failFast bool) *GroupProbe {
	var opts []GroupOption
	if failFast {
		opts = append(opts, WithCancelOnError())
	}
	return &GroupProbe{NewGroup(context.Background(), q, opts...)}
}

func (p *GroupProbe) Group() *Group { return p.g }

// Add adds a member that records its runs.
func (p *GroupProbe) Add(f func(context.Context) error) { p.g.Go(f) }

// Take takes the next waiting member out of the group's list, as a runner
// does before it starts it, or reports false if none waits.
func (p *GroupProbe) Take() (*member, bool) {
	m := p.g.pop()
	return m, m != nil
}

// Start starts a member taken, as a runner would, reporting false if the
// group was canceled meanwhile.
func (p *GroupProbe) Start() bool { return p.g.start() }

// End ends a started member with err.
func (p *GroupProbe) End(m *member, err error) { p.g.settle(m, -runningOne, err) }

// Cancel cancels the group as its context would.
func (p *GroupProbe) Cancel(cause error) { p.g.abort(cause, false) }

// Counts returns the state word's counts and flags.
func (p *GroupProbe) Counts() (q, r int, canceled, done bool) {
	s := p.g.state.Load()
	return int(queued(s)), int(running(s)), s&stateCancel != 0, isDone(s)
}

// Member is a started member, for the model test.
type Member = *member

// QueuedAtCancel returns how many members of g had not started at the
// instant g was canceled: those never run.
func (g *Group) QueuedAtCancel() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.queuedAt
}
