package taskqueue

import (
	"context"
	"runtime/pprof"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/catch"
	"github.com/taskqueue-go/taskqueue/internal/panics"
)

// An Observer sees the tasks of a queue start and end, on the goroutine that
// runs them; see WithObserver. Its methods must not block for long. A metrics
// exporter counts and times tasks with one (see the expvar Example).
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
func (q *Queue) Name() string { return q.name }

// call calls f with ctx, as the function of a task of q, and returns its
// panic, with the stack of the panic, or its error with the stack of the panic. It is the one way the
// queues call the functions of their users. If q is named and ctx carries
// pprof labels, f runs with those and the queue's; an Observer hears of the
// start and the end. Neither costs anything otherwise. If f calls
// runtime.Goexit, goexit runs, after the Observer heard of it, and the Goexit
// goes on.
func (q *Queue) call(ctx context.Context, f func(context.Context) error, goexit func()) (p *PanicError, err error) {
	if q.observer != nil || q.labels != nil {
		return q.callObserved(ctx, f, goexit)
	}
	if c := catch.Call(func() { err = f(ctx) }, goexit); c != nil {
		return panicError(q.name, c), nil
	}
	return nil, err
}

// callObserved is call for a queue with a name or an Observer, kept apart so
// that the common path keeps a small stack frame.
func (q *Queue) callObserved(ctx context.Context, f func(context.Context) error, goexit func()) (p *PanicError, err error) {
	if q.labels != nil && hasLabels(ctx) {
		pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("queue", q.name)))
		defer pprof.SetGoroutineLabels(q.labels) // the worker's own
	}
	obs := q.observer
	if obs == nil {
		p = panics.Recover(q.name, func() { err = f(ctx) }, goexit)
		return p, err
	}
	obs.TaskStarted(q)
	start := time.Now()
	p = panics.Recover(q.name, func() { err = f(ctx) }, func() {
		obs.TaskEnded(q, time.Since(start), ErrGoexit)
		if goexit != nil {
			goexit()
		}
	})
	if p != nil {
		obs.TaskEnded(q, time.Since(start), p)
	} else {
		obs.TaskEnded(q, time.Since(start), err)
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
