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
// in TaskStarted is the task's own; one in TaskEnded is not recovered. A
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

// call calls f with ctx, as the function of a task of q, and returns its
// panic, with the stack of the panic, or its error with the stack of the panic. It is the one way the
// queues call the functions of their users. If q is named and ctx carries
// pprof labels, f runs with those and the queue's; an Observer hears of the
// start and the end. Neither costs anything otherwise. If f calls
// runtime.Goexit, goexit runs, after the Observer heard of it, and the Goexit
// goes on.
func (q *Queue) call(ctx context.Context, f func(context.Context) error, goexit func()) (p *PanicError, err error) {
	if q.observer != nil || q.labels != nil {
		return q.callObserved(ctx, f, goexit, q.labels)
	}
	if c := catch.Call(func() { err = f(ctx) }, goexit); c != nil {
		return panicError(q.name, c), nil
	}
	return nil, err
}

// callHere is call for a function that runs on its caller's goroutine
// (RunSync on an idle queue, or in a task's place): the labels it set come
// back off as the caller's context carries them, not as a worker's.
func (q *Queue) callHere(ctx context.Context, f func(context.Context) error, goexit func()) (p *PanicError, err error) {
	if q.observer != nil || q.labels != nil {
		return q.callObserved(ctx, f, goexit, ctx)
	}
	return q.call(ctx, f, goexit)
}

// callObserved is call for a queue with a name or an Observer, kept apart so
// that the common path keeps a small stack frame. restore holds the labels
// the goroutine gets back once f returns: a worker's own, or its caller's.
func (q *Queue) callObserved(ctx context.Context, f func(context.Context) error, goexit func(), restore context.Context) (p *PanicError, err error) {
	if q.labels != nil && hasLabels(ctx) {
		pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("queue", q.name)))
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
		obs.TaskStarted(q)
		started, start = true, time.Now()
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
			panic(c.Value) // an Observer must not panic
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
