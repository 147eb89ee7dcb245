package taskqueue

import (
	"context"
	"runtime/pprof"
	"time"

	"github.com/taskqueue-go/taskqueue/scheduler"
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

// invoke calls f, the function of a task that a worker runs, with the
// task's context: observed, if q has an Observer, and with the context's
// pprof labels, if q is named and the context carries some. Neither costs
// anything otherwise.
func (q *Queue) invoke(ctx context.Context, f func(context.Context) error) error {
	if q.observer == nil && q.labels == nil {
		return f(ctx)
	}
	if q.labels != nil && hasLabels(ctx) {
		pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("queue", q.name)))
		defer pprof.SetGoroutineLabels(q.labels) // the worker's own
	}
	if q.observer == nil {
		return f(ctx)
	}
	return q.observe(func() error { return f(ctx) })
}

// observe calls f for a queue with an Observer, telling it of f's start
// and end; a panic or runtime.Goexit goes on after the report.
func (q *Queue) observe(f func() error) (err error) {
	q.observer.TaskStarted(q)
	start := time.Now()
	normal := false
	defer func() {
		if normal {
			return
		}
		if v := recover(); v != nil {
			q.observer.TaskEnded(q, time.Since(start), newPanicError(v, q))
			panic(v) // on to the task's own recovery, which reports it
		}
		q.observer.TaskEnded(q, time.Since(start), ErrGoexit)
	}()
	err = f()
	normal = true
	q.observer.TaskEnded(q, time.Since(start), err)
	return err
}

// hasLabels reports whether ctx carries pprof labels.
func hasLabels(ctx context.Context) bool {
	found := false
	pprof.ForLabels(ctx, func(string, string) bool { found = true; return false })
	return found
}

// newPanicError returns the *PanicError of v, recovered from a task of q.
// Call it from the deferred function that recovered v, so that the stack
// shows where the panic happened.
func newPanicError(v any, q *Queue) *PanicError {
	p := scheduler.NewPanicError(v)
	p.Source = q.name
	return p
}
