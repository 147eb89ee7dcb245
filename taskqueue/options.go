package taskqueue

import (
	"fmt"
	"log"
)

// An Option configures a Queue. Options are given to NewSerial and
// NewConcurrent.
type Option interface {
	apply(*options)
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	onPanic   func(*PanicError) // never nil after buildOptions
	maxQueued int               // 0: unbounded
	whenFull  FullPolicy
}

func buildOptions(opts []Option) options {
	o := options{onPanic: logPanic}
	for _, opt := range opts {
		opt.apply(&o)
	}
	return o
}

// logPanic is the default panic handler.
func logPanic(p *PanicError) {
	log.Printf("taskqueue: task %v", p)
}

// WithPanicHandler sets the function that receives the panics of the queue's
// tasks that no caller will see otherwise: those of tasks started with Go, of
// tasks with a Handle (which also completes with the *PanicError), and of
// RunSync tasks whose caller stopped waiting. A panic in a task that a RunSync
// caller still waits for is re-panicked in that caller instead.
//
// The handler runs on the goroutine of the task that panicked, before the
// task's handle completes, and must not block for long. Without this option, panics are written with their stacks to
// the standard logger (package log), so that none goes unseen.
func WithPanicHandler(h func(*PanicError)) Option {
	if h == nil {
		panic("taskqueue: WithPanicHandler(nil)")
	}
	return optionFunc(func(o *options) { o.onPanic = h })
}

// A FullPolicy says what submitting to a full queue does; see WithMaxQueued.
type FullPolicy int

const (
	// WaitWhenFull makes submissions that take a context wait for room until
	// their context is done. Go, which takes none, fails with ErrQueueFull.
	WaitWhenFull FullPolicy = iota
	// FailWhenFull makes every submission to a full queue fail at once with
	// ErrQueueFull.
	FailWhenFull
)

// WithMaxQueued bounds the number of tasks a queue holds that have not
// started, delayed tasks included, at n. What a submission to a full queue
// does is set by whenFull. A task of the queue that submits to its own full
// queue never waits, since it could be waiting for itself: it gets
// ErrQueueFull. Without this option a queue is unbounded.
// WithMaxQueued panics if n < 1.
func WithMaxQueued(n int, whenFull FullPolicy) Option {
	if n < 1 {
		panic(fmt.Sprintf("taskqueue: WithMaxQueued(%d): bound must be positive", n))
	}
	if whenFull != WaitWhenFull && whenFull != FailWhenFull {
		panic(fmt.Sprintf("taskqueue: WithMaxQueued: unknown FullPolicy %d", whenFull))
	}
	return optionFunc(func(o *options) { o.maxQueued, o.whenFull = n, whenFull })
}
