package taskqueue

import "context"

// Then submits f to q once h's task is done, and returns the handle of the
// continuation. f receives how h's task ended (see Handle.Err). Nothing
// waits in the meantime: no goroutine and no slot of any queue, so that a
// pipeline of stages (read on an I/O queue, then decode on a CPU queue)
// never holds a slot of one stage while it waits for another.
//
// The continuation is queued on q by the goroutine that completes h's task,
// right after it completes, and from then on it is a task like any other:
// it runs with ctx, and a done ctx, a closed or full q complete it without
// running f, as RunAsync would. Before it is queued, Cancel on its handle
// reports false; to give it up then, cancel ctx.
func (h *Handle) Then(ctx context.Context, q *Queue, f func(ctx context.Context, err error) error) *Handle {
	if f == nil {
		nilFunc("Then")
	}
	t := &errTask{fn: func(ctx context.Context) error { return f(ctx, h.Err()) }}
	t.ctx, t.q = ctx, q
	h.notify(func() { q.queue(&t.Handle, t) })
	return &t.Handle
}

// Then runs f on q with the result of fut's task once it is done, and
// returns a Future for f's result, as Handle.Then does. If fut's task did
// not succeed, f does not run and the new Future completes with the same
// error.
func Then[T, U any](ctx context.Context, fut *Future[T], q *Queue, f func(ctx context.Context, v T) (U, error)) *Future[U] {
	if f == nil {
		nilFunc("Then")
	}
	t := &Future[U]{}
	t.fn = func(ctx context.Context) (U, error) {
		if err := fut.Err(); err != nil {
			var zero U
			return zero, err
		}
		return f(ctx, fut.val)
	}
	t.ctx, t.q = ctx, q
	fut.notify(func() { q.queue(&t.Handle, (*futureTask[U])(t)) })
	return t
}
