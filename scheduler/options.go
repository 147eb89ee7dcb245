package scheduler

import "fmt"

// An Option configures a Scheduler. Options are given to New.
type Option interface {
	apply(options) options
}

// Each option is a type of its own, not a closure: a func, a pointer or a
// small int goes into an Option without an allocation, and apply takes the
// options by value so that they do not escape.
type (
	maxPendingOption int
	panicOption      func(*PanicError)
	goexitOption     func()
	targetOption     struct{ s *Scheduler }
	priorityOption   int32
	quantumOption    int32
	idleOption       func()
	nameOption       string
)

func (n maxPendingOption) apply(o options) options { o.maxPending = int(n); return o }
func (h panicOption) apply(o options) options      { o.onPanic = h; return o }
func (f goexitOption) apply(o options) options     { o.onGoexit = f; return o }
func (t targetOption) apply(o options) options     { o.target = t.s; return o }
func (p priorityOption) apply(o options) options   { o.priority = int32(p); return o }
func (n quantumOption) apply(o options) options    { o.quantum = int32(n); return o }
func (f idleOption) apply(o options) options       { o.onIdle = f; return o }
func (n nameOption) apply(o options) options       { o.name = string(n); return o }

type options struct {
	maxPending int               // 0: unbounded
	onPanic    func(*PanicError) // never nil after buildOptions
	onGoexit   func()            // WithGoexitFunc; nil if none
	target     *Scheduler        // nil: a root
	onIdle     func()
	name       string
	priority   int32
	quantum    int32
}

func buildOptions(opts []Option) options {
	o := options{onPanic: logPanic, quantum: defaultQuantum}
	for _, opt := range opts {
		o = opt.apply(o)
	}
	return o
}

// WithMaxPending bounds the number of items queued but not started, those
// reserved included. When the list is full, Enqueue and Reserve fail with
// ErrFull, and EnqueueContext and ReserveContext wait for room. Without this
// option the list is unbounded. WithMaxPending panics if n < 1.
func WithMaxPending(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("scheduler: WithMaxPending(%d): bound must be positive", n))
	}
	return maxPendingOption(n)
}

// WithPanicHandler sets the function that receives the panics of items, each
// as a *PanicError with the stack of the panic. The handler runs on the worker
// goroutine that recovered the panic, before that worker takes its next item;
// it must not block for long, and must not panic: that panic is not
// recovered. If it calls runtime.Goexit (as testing.T.FailNow does), its
// worker ends and the slot passes on, as for an item that calls it. Without
// this option, panics are reported through log/slog's default logger, at level Error, with the
// attributes source (the name), panic (the value) and stack, so that none
// goes unseen.
//
// Items that recover their own panics, as the taskqueue package's tasks do,
// never reach the handler.
func WithPanicHandler(h func(*PanicError)) Option {
	if h == nil {
		panic("scheduler: WithPanicHandler(nil)")
	}
	return panicOption(h)
}

// WithGoexitFunc sets a function that the Scheduler calls when an item
// calls runtime.Goexit, on the goroutine that ends, before the item's slot
// is given back (so before the Scheduler may go idle) and the Goexit goes
// on: for counting, as a panic handler counts panics. Items that catch
// their own panics, as the taskqueue package's tasks do, count their own.
// f must not block. WithGoexitFunc panics if f is nil.
func WithGoexitFunc(f func()) Option {
	if f == nil {
		panic("scheduler: WithGoexitFunc(nil)")
	}
	return goexitOption(f)
}

// WithTarget makes the Scheduler a child of target: it runs its items on
// target's slots, with no goroutine of its own, ever. Its own limit and FIFO
// order hold, and target's limit bounds it together with target's other
// items and children. Children may target children, making a tree; since a
// target exists before its children, a tree has no cycle. Closing target
// closes the subtree to new items (see Close). WithTarget panics if target
// is nil.
//
// Each of the child's slots is a turn on a slot of target, which ends after
// the child's quantum of items (see WithQuantum) if the child has more, so
// that target's other items and children get their turn. A child keeps at
// most one turn waiting in target's list, so that an item of a sibling of
// the same priority waits at most two quanta of a flooded child: the rest of
// the turn running, and the turn waiting before it (one of a lower priority
// waits longer: see WithPriority).
func WithTarget(target *Scheduler) Option {
	if target == nil {
		panic("scheduler: WithTarget(nil)")
	}
	return targetOption{target}
}

// WithPriority sets the priority of a child on its target (see WithTarget).
// Priorities order a target's children among themselves: each turn of the
// target's that goes to a child goes to the one of the highest priority with
// items waiting, except that, while children of lower priorities wait, every
// eighth such turn goes to the one of them that has waited longest, so that
// none starves. The target's own items keep their places in its list, in
// order with the children's turns, whatever the priorities. Without this
// option a child has priority 0.
func WithPriority(p int) Option {
	return priorityOption(max(min(p, 1<<30), -(1 << 30)))
}

// WithQuantum sets how many items a child runs on a turn of its target's
// slot before it lets the target's other items and children go first: 16 by
// default. A larger quantum costs fewer turns; a smaller one makes a
// sibling wait less behind a flooded child. WithQuantum panics if n < 1.
func WithQuantum(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("scheduler: WithQuantum(%d): quantum must be positive", n))
	}
	return quantumOption(min(n, maxLimit))
}

// WithIdleFunc sets a function that the Scheduler calls, with no lock held,
// after an operation leaves it idle: nothing queued, reserved or running in
// it and its subtree. It may be called more than once while the Scheduler
// stays idle, and concurrently with new items, which it must check for
// itself (a pool of schedulers by key drops one found idle under its own
// lock). It runs on the goroutine that left the Scheduler idle, after the
// Scheduler has released its lock, whichever method that goroutine called
// (a worker's, Enqueue, TryDequeue, Reservation.Enqueue, Resume...): the
// callers of those methods must not hold a lock that f takes. It must not
// block.
func WithIdleFunc(f func()) Option {
	if f == nil {
		panic("scheduler: WithIdleFunc(nil)")
	}
	return idleOption(f)
}

// WithName names the Scheduler: the name is the Source of the panics it
// reports, its workers carry it as the runtime/pprof label "queue", so that
// CPU profiles attribute their time to it, and, when runtime/trace is on,
// each item it runs is a trace region of that name. Items of a child run
// with the child's label, on its target's workers; those of an unnamed child,
// with the label of the nearest named Scheduler above it, if any. An unnamed
// Scheduler sets no label, which costs nothing per item, and its trace
// regions are named "scheduler".
func WithName(name string) Option {
	return nameOption(name)
}
