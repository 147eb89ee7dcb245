package scheduler

import (
	"fmt"
	"log"
)

// An Option configures a Scheduler. Options are given to New.
type Option interface {
	apply(*options)
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	maxPending int               // 0: unbounded
	onPanic    func(*PanicError) // never nil after buildOptions
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
	log.Printf("scheduler: recovered %v", p)
}

// WithMaxPending bounds the number of items queued but not started, those
// reserved included. When the list is full, Enqueue and Reserve fail with
// ErrFull, and EnqueueContext and ReserveContext wait for room. Without this
// option the list is unbounded. WithMaxPending panics if n < 1.
func WithMaxPending(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("scheduler: WithMaxPending(%d): bound must be positive", n))
	}
	return optionFunc(func(o *options) { o.maxPending = n })
}

// WithPanicHandler sets the function that receives the panics of items, each
// as a *PanicError with the stack of the panic. The handler runs on the worker
// goroutine that recovered the panic, before that worker takes its next item;
// it must not block for long, and must not panic. Without this option, panics
// are written to the standard logger (package log), so that none goes unseen.
//
// Items that recover their own panics, as the taskqueue package's tasks do,
// never reach the handler.
func WithPanicHandler(h func(*PanicError)) Option {
	if h == nil {
		panic("scheduler: WithPanicHandler(nil)")
	}
	return optionFunc(func(o *options) { o.onPanic = h })
}
