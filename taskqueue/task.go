package taskqueue

import (
	"context"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// runner is a task the queue runs: a scheduler.Task with a Handle.
type runner interface {
	scheduler.Task
	handle() *Handle
}

// errTask is an untyped task: a single allocation per RunAsync.
type errTask struct {
	Handle
	fn func(context.Context) error
}

func (t *errTask) Run(sl scheduler.Slot) { t.run(sl, t.fn) }
func (t *errTask) handle() *Handle       { return &t.Handle }

// CatchesPanics tells the scheduler that the task recovers its own panics:
// the tasks of this package call their functions through Queue.call.
func (t *errTask) CatchesPanics() {}

// run calls f, on the slot sl, with the task's context and completes the
// task with the outcome. A task whose context is done before it starts does
// not run.
func (h *Handle) run(sl scheduler.Slot, f func(context.Context) error) {
	q := h.tc.q
	if err := h.ctx().Err(); err != nil {
		q.skipped.Add(1)
		q.canceled.Add(1)
		h.finish(err)
		return
	}
	h.tc.slot = sl
	p, err := q.call(&h.tc, f, func() {
		h.tc.end()
		q.failed.Add(1)
		h.finish(aborted{})
	})
	h.tc.end()
	switch {
	case p != nil:
		q.panicked.Add(1)
		if !h.finish(aborted{p}) && !h.awaited {
			q.onPanic(p) // nobody waited for the task, nor will: nobody else sees it
		}
	case err != nil:
		q.failed.Add(1)
		h.finish(err)
	default:
		h.finish(nil)
	}
}

// A Future is the Handle of a task that returns a value of type T, made by
// the generic functions RunAsync, RunAfter and Then. Its methods are those of
// Handle, and Result and Wait, which also give the value.
type Future[T any] struct {
	Handle
	fn  func(context.Context) (T, error)
	val T // written by the task before it is done
}

// Result returns, without blocking, the value and error of the task once it
// is done: as Err says for the error, and the value the task returned with
// it, or the zero T if it did not return. While the task is pending or
// running, Result returns the zero T and nil, and IsDone reports false. A
// coroutine of a loom that yields WaitFor on the Future reads its result
// with Result once it resumes.
func (f *Future[T]) Result() (T, error) {
	if !f.IsDone() {
		var zero T
		return zero, nil
	}
	return f.val, f.Err() // val stays zero unless the task returned
}

// Wait waits for the task as Handle.Wait does and returns the value and
// error the task returned, as Result does. If ctx is done first, it returns
// the zero T and ctx.Err(), and the task goes on.
func (f *Future[T]) Wait(ctx context.Context) (T, error) {
	mustCtx("Future.Wait", ctx)
	if err := f.Handle.Wait(ctx); !f.IsDone() {
		var zero T
		return zero, err
	}
	return f.Result()
}

// futureTask is a Future seen by the scheduler: the same memory with a Run
// method, which Future itself does not export.
type futureTask[T any] Future[T]

func (t *futureTask[T]) Run(sl scheduler.Slot) {
	t.run(sl, func(ctx context.Context) error {
		v, err := t.fn(ctx)
		t.val = v
		return err
	})
}

func (t *futureTask[T]) handle() *Handle { return &t.Handle }
func (t *futureTask[T]) CatchesPanics()  {}
