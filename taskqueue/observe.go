package taskqueue

import (
	"context"
	"runtime/pprof"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/catch"
	"github.com/taskqueue-go/taskqueue/internal/panics"
)

// An Observer sees the tasks of a queue start and end, on the goroutine that
// runs them; see WithObserver. Its methods must not block for long. A panic
// in TaskStarted is the task's own: the task's function does not run, and
// the task ends with that panic; one in TaskEnded goes to the queue's
// panic handler (see WithPanicHandler), and the task's outcome stays. A
// method that calls runtime.Goexit (as testing.T.FailNow does) ends the task
// as the task's own Goexit would: its handle completes with ErrGoexit. A
// metrics exporter counts and times tasks with one (see the expvar Example).
type Observer interface {
	// TaskStarted is called as a task of q starts.
	TaskStarted(q *Queue)
	// TaskEnded is called as a task of q ends, with how long it ran and how:
	// with nil if it returned nil, with the error it returned, with a
	// *PanicError if it panicked, or with ErrGoexit if it called
	// runtime.Goexit.
	TaskEnded(q *Queue, ran time.Duration, err error)
}

// Name returns the name q was made with (see WithName), or "".
func (q *Queue) Name() string {
	q.mustBeMade()
	return q.name
}

// call calls f with ctx, as the function of a task of q on a worker, and
// returns its panic, with the stack of the panic, or its error. It and
// callHere are the one way the queues call the functions of their users. If
// q is named and ctx carries pprof labels, f runs with those and the
// queue's; an Observer hears of the start and the end. Neither costs
// anything otherwise. If f calls runtime.Goexit, goexit runs, after the
// Observer heard of it, and the Goexit goes on.
func (q *Queue) call(ctx context.Context, f func(context.Context) error, goexit func()) (p *PanicError, err error) {
	if q.observed() {
		// The worker carries q's labels already (the scheduler sets them);
		// they are what the goroutine gets back.
		return q.callObserved(ctx, f, goexit, q.ownLabels(ctx), q.labels)
	}
	if c := catch.Call(func() { err = f(ctx) }, goexit); c != nil {
		return panicError(q.name, c), nil
	}
	return nil, err
}

// observed reports whether q calls its functions with more than a recover:
// it has an Observer, or a name of its own or of a target that labels them.
func (q *Queue) observed() bool { return q.observer != nil || q.labels != nil }

// callHere is call for a function that runs on its caller's goroutine
// (RunSync on an idle queue, or in a task's place), with c, its context: it
// runs with the labels a worker of q would give it, and the caller's come
// back once it returns.
func (q *Queue) callHere(c *taskCtx, f func(context.Context) error, goexit func()) (p *PanicError, err error) {
	if labels := q.workLabels(c.Context); labels != nil {
		return q.callObserved(c, f, goexit, labels, callerLabels(c.Context))
	}
	return q.call(c, f, goexit)
}

// ownLabels returns the labels of q's work submitted with ctx when they are
// not a worker's: ctx's and the label "queue" of q (its name, or the nearest
// named target's), if it has one and ctx carries labels; nil otherwise.
func (q *Queue) ownLabels(ctx context.Context) context.Context {
	if q.labels == nil || !hasLabels(ctx) {
		return nil
	}
	return pprof.WithLabels(ctx, pprof.Labels("queue", q.labelName))
}

// workLabels returns the pprof labels that work of q submitted with ctx runs
// with: its own (see ownLabels), or else q's label "queue", which the worker
// or turn that runs it carries already; nil if neither q nor a target of it
// is named.
func (q *Queue) workLabels(ctx context.Context) context.Context {
	if l := q.ownLabels(ctx); l != nil {
		return l
	}
	return q.labels
}

// callerLabels returns the pprof labels that the goroutine calling with ctx
// carries: those of the innermost work of a queue that ctx comes from
// (see workLabels), or ctx's own for a caller that is no queue's work.
func callerLabels(ctx context.Context) context.Context {
	if c := workOf(ctx); c != nil {
		if l := c.q.workLabels(c.Context); l != nil {
			return l
		}
		return context.Background()
	}
	return ctx
}

// callObserved is call for a queue with a name or an Observer, kept apart so
// that the common path keeps a small stack frame. If labels is not nil, f
// runs with them, and the goroutine gets restore back once f returns.
func (q *Queue) callObserved(ctx context.Context, f func(context.Context) error, goexit func(), labels, restore context.Context) (p *PanicError, err error) {
	if labels != nil {
		pprof.SetGoroutineLabels(labels)
		defer pprof.SetGoroutineLabels(restore)
	}
	obs := q.observer
	if obs == nil {
		p = panics.Recover(q.name, func() { err = f(ctx) }, goexit)
		return p, err
	}
	// The Observer's methods run inside the recovery of the task's: one that
	// calls runtime.Goexit (testing.T.FailNow does) ends the task as the
	// task's own Goexit would, with its accounting, rather than strand it.
	var start time.Time
	started, ended := false, false
	p = panics.Recover(q.name, func() {
		started, start = true, time.Now() // TaskEnded follows even a TaskStarted that panicked
		obs.TaskStarted(q)
		err = f(ctx)
	}, func() {
		if started && !ended {
			ended = true
			obs.TaskEnded(q, time.Since(start), ErrGoexit)
		}
		if goexit != nil {
			goexit()
		}
	})
	outcome := err
	if p != nil {
		outcome = p
	}
	if started {
		ended = true
		if c := catch.Call(func() { obs.TaskEnded(q, time.Since(start), outcome) }, goexit); c != nil {
			q.onPanic(panicError(q.name, c)) // the Observer's, not the task's: the outcome stays
		}
	}
	return p, err
}

// panicError returns the *PanicError of a panic caught in a task of the
// queue named source.
func panicError(source string, c *catch.Panic) *PanicError {
	if p, ok := c.Value.(*PanicError); ok {
		return p
	}
	return &PanicError{Value: c.Value, Stack: c.Stack, Source: source}
}

// hasLabels reports whether ctx carries pprof labels.
func hasLabels(ctx context.Context) bool {
	found := false
	pprof.ForLabels(ctx, func(string, string) bool { found = true; return false })
	return found
}
