package loom

import (
	"context"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// RunAsync runs f on a background goroutine, off the loom's thread, with at
// most WithBackgroundLimit functions (8 by default) running at once; the rest
// wait their turn in order. It never blocks: where the Loom this package
// ports slept in a loop until a thread was free, RunAsync queues f on a
// scheduler.Scheduler. A panic in f goes to the panic handler. To use a
// result on the loom's thread, post it from f; for work off the frame that
// returns a result, submit it to a taskqueue queue instead: its Future is a
// Waitable, so a coroutine yields WaitFor(future) and reads future.Result()
// once it resumes (see WaitFor). RunAsync returns ErrClosed if l is closed.
func (l *Loom) RunAsync(f func()) error {
	l.mustBeMade()
	if f == nil {
		panic("loom: RunAsync(nil)")
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	if l.bg == nil {
		l.bg = scheduler.New(l.cfg.bgLimit, scheduler.WithPanicHandler(l.handlePanic))
	}
	bg := l.bg
	l.mu.Unlock()
	if _, err := bg.Enqueue(scheduler.Func(f)); err != nil {
		return ErrClosed // the only error of an unbounded scheduler
	}
	return nil
}

// WaitBackground blocks until no function of RunAsync is queued or running,
// or until ctx is done, in which case it returns ctx.Err(). Close does not
// wait for the background functions; a program or test that must not leave
// them behind calls WaitBackground.
func (l *Loom) WaitBackground(ctx context.Context) error {
	l.mustBeMade()
	l.mu.Lock()
	bg := l.bg
	l.mu.Unlock()
	if bg == nil {
		return nil
	}
	return bg.Wait(ctx)
}
