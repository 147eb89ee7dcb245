package loom

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// A Task is a coroutine that produces a value and an error: the typed form of
// a Coroutine, started with StartTask. Another coroutine waits for it with
// WaitFor(t), which resumes it in the pass in which t ends, as for any
// coroutine of the same loom, and then reads Result; a goroutine waits with
// Wait.
type Task[T any] struct {
	*Coroutine
	val T     // written by the body before the coroutine ends
	err error // the body's error
}

// StartTask starts body as a coroutine of l, as StartCoroutine does, and
// returns its Task. The body yields instructions as any coroutine body does
// and returns its value and error.
func StartTask[T any](l *Loom, body func(yield func(Instruction) bool) (T, error)) *Task[T] {
	if body == nil {
		panic("loom: StartTask(nil)")
	}
	t := &Task[T]{}
	t.Coroutine = l.StartCoroutine(func(yield func(Instruction) bool) {
		t.val, t.err = body(yield)
	})
	return t
}

// Result returns the value and error of t's body once t has ended; before,
// or if the body did not return (it panicked, or was stopped or closed
// first), the zero T and, respectively, nil or the coroutine's Err. It does
// not block.
func (t *Task[T]) Result() (T, error) {
	if !t.IsDone() {
		var zero T
		return zero, nil
	}
	if err := t.Coroutine.Err(); err != nil {
		var zero T
		return zero, err
	}
	return t.val, t.err
}

// Err returns the body's error once t has ended, or the coroutine's (see
// Coroutine.Err).
func (t *Task[T]) Err() error {
	_, err := t.Result()
	return err
}

// Wait blocks until t has ended, or until ctx is done, and returns its
// result, or ctx.Err(). It is for goroutines other than the loom's: on the
// loom's goroutine, a coroutine yields WaitFor(t) instead, and the loop
// itself must not block on a coroutine it runs.
func (t *Task[T]) Wait(ctx context.Context) (T, error) {
	select {
	case <-t.Done():
		return t.Result()
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// coroutine makes WaitFor(t) wait as for the coroutine itself.
func (t *Task[T]) coroutine() *Coroutine { return t.Coroutine }

// A Goer runs functions off the loom's goroutine: a *taskqueue.Queue, or any
// pool with a Go(func()) error method.
type Goer interface {
	Go(f func()) error
}

// An Off is the result of a function run off the frame by RunOff: a Waitable
// that a coroutine yields WaitFor on, then reads with Result.
type Off[T any] struct {
	done atomic.Bool // val and err are set
	val  T
	err  error

	mu sync.Mutex
	ch chan struct{} // made by Done, for goroutines that wait
}

// RunOff runs f on q, off the loom's goroutine, and returns at once. A
// coroutine yields WaitFor on the result and resumes in the first frame after
// f has returned, then reads Result: heavy work goes to a queue and its
// result comes back to the frame, and nothing, neither the coroutine nor a
// slot of q, waits while the other runs. A panic in f becomes the result's
// error, as a *PanicError; if q refuses f (it is closed), the result is done
// at once with q's error.
//
// The other way, from a queue's task into a loom, is Post and, for the main
// thread, mainthread.Call and taskqueue.RunSyncOnMainThread.
func RunOff[T any](q Goer, f func() (T, error)) *Off[T] {
	if f == nil {
		panic("loom: RunOff(nil)")
	}
	o := new(Off[T])
	err := q.Go(func() {
		defer o.finish()
		defer func() {
			if v := recover(); v != nil {
				o.err = scheduler.NewPanicError(v)
			}
		}()
		o.val, o.err = f()
	})
	if err != nil {
		o.err = err
		o.finish()
	}
	return o
}

// finish publishes the result, once val and err are set.
func (o *Off[T]) finish() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.done.Store(true)
	if o.ch != nil {
		close(o.ch)
	}
}

// Done returns a channel closed once f has returned. The channel is made by
// the first call: a coroutine's WaitFor polls IsDone and makes none.
func (o *Off[T]) Done() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ch == nil {
		o.ch = make(chan struct{})
		if o.done.Load() {
			close(o.ch)
		}
	}
	return o.ch
}

// IsDone reports, without blocking, whether f has returned.
func (o *Off[T]) IsDone() bool { return o.done.Load() }

// Result returns f's value and error once it has returned, and the zero T
// and nil before. It does not block.
func (o *Off[T]) Result() (T, error) {
	if !o.IsDone() {
		var zero T
		return zero, nil
	}
	return o.val, o.err
}

// Err returns f's error once it has returned, and nil before.
func (o *Off[T]) Err() error {
	_, err := o.Result()
	return err
}
