package loom

import (
	"context"
)

// A Task is a coroutine that produces a value and an error: the typed form of
// a Coroutine, started with StartTask. Another coroutine waits for it with
// WaitFor(t), which resumes it in the pass in which t ends, as for any
// coroutine of the same loom, and then reads Result; a goroutine waits with
// Wait.
//
// A Task is safe for use by multiple goroutines. Only StartTask makes one:
// the methods of the zero Task panic.
type Task[T any] struct {
	c   *Coroutine
	val T     // written by the body before the coroutine ends
	err error // the body's error
}

// A Starter starts coroutines: a *Loom, or a *Scope, whose Close stops them.
type Starter interface {
	StartCoroutine(body func(yield func(Instruction) bool)) *Coroutine
}

// StartTask starts body as a coroutine on on (a Loom or a Scope), as
// StartCoroutine does, and returns its Task. The body yields instructions as
// any coroutine body does and returns its value and error.
func StartTask[T any](on Starter, body func(yield func(Instruction) bool) (T, error)) *Task[T] {
	if on == nil {
		panic("loom: StartTask with a nil Loom or Scope")
	}
	if body == nil {
		panic("loom: StartTask(nil)")
	}
	t := &Task[T]{}
	t.c = on.StartCoroutine(func(yield func(Instruction) bool) {
		t.val, t.err = body(yield)
	})
	return t
}

// Result returns, without blocking, the value and error of t once it has
// ended: those its body returned, or, if the body did not return (it
// panicked, or was stopped or closed first), the zero T and the coroutine's
// error (a *PanicError, ErrStopped, ErrClosed). While t runs, Result returns
// the zero T and nil, and IsDone reports false.
func (t *Task[T]) Result() (T, error) {
	t.mustBeMade("Result")
	if !t.c.IsDone() {
		var zero T
		return zero, nil
	}
	if err := t.c.Err(); err != nil {
		var zero T
		return zero, err
	}
	return t.val, t.err
}

// Err returns the error of Result.
func (t *Task[T]) Err() error {
	_, err := t.Result()
	return err
}

// Wait blocks until t has ended and returns Result, or until ctx is done and
// returns the zero T and ctx.Err(); a t that has ended already returns its
// Result even if ctx is done. It is for goroutines other than the
// loop's: a coroutine yields WaitFor(t) instead, and the loop itself must
// not block on a coroutine it runs.
func (t *Task[T]) Wait(ctx context.Context) (T, error) {
	t.mustBeMade("Wait")
	mustCtx("Task.Wait", ctx)
	if !waitDone(ctx, t.c.Done()) {
		var zero T
		return zero, ctx.Err()
	}
	return t.Result()
}

// Done returns a channel that is closed when t has ended.
func (t *Task[T]) Done() <-chan struct{} {
	t.mustBeMade("Done")
	return t.c.Done()
}

// IsDone reports, without blocking, whether t has ended.
func (t *Task[T]) IsDone() bool {
	t.mustBeMade("IsDone")
	return t.c.IsDone()
}

// Stop stops t as Coroutine.Stop does; Err then reports ErrStopped.
func (t *Task[T]) Stop() bool {
	t.mustBeMade("Stop")
	return t.c.Stop()
}

// mustBeMade panics, naming call, on a Task that StartTask did not make.
func (t *Task[T]) mustBeMade(call string) {
	if t == nil || t.c == nil {
		panic("loom: Task." + call + " of a Task not made by StartTask")
	}
}

// coroutine makes WaitFor(t) wait as for the coroutine itself.
func (t *Task[T]) coroutine() *Coroutine {
	if t == nil {
		return nil
	}
	return t.c
}
