package taskqueue

import (
	"fmt"
	"log/slog"
)

// An Option configures a Queue. Options are given to NewSerial and
// NewConcurrent.
type Option interface {
	apply(options) options
}

// Each option is a type of its own, not a closure: a func, a pointer or a
// small int goes into an Option without an allocation, and apply takes the
// options by value so that they do not escape.
type (
	panicOption     func(*PanicError)
	maxQueuedOption int
	failFullOption  struct{}
	targetOption    struct{ q *Queue }
	priorityOption  int
	quantumOption   int
	idleOption      func() // for the lanes of a Keyed
	nameOption      string
	observerOption  struct{ obs Observer }
)

func (h panicOption) apply(o options) options     { o.onPanic = h; return o }
func (n maxQueuedOption) apply(o options) options { o.maxQueued = int(n); return o }
func (failFullOption) apply(o options) options    { o.failFull = true; return o }
func (t targetOption) apply(o options) options    { o.target, o.targets = t.q, o.targets+1; return o }
func (p priorityOption) apply(o options) options  { o.priority = int(p); return o }
func (n quantumOption) apply(o options) options   { o.quantum = int(n); return o }
func (f idleOption) apply(o options) options      { o.onIdle = f; return o }
func (n nameOption) apply(o options) options      { o.name = string(n); return o }
func (v observerOption) apply(o options) options  { o.observer = v.obs; return o }

type options struct {
	onPanic   func(*PanicError) // never nil after buildOptions
	maxQueued int               // 0: unbounded
	failFull  bool              // WithFailWhenFull
	target    *Queue            // nil: a root queue
	targets   int               // WithTarget options given: more than one is a mistake
	priority  int
	quantum   int
	onIdle    func() // for the lanes of a Keyed
	name      string
	observer  Observer
}

func buildOptions(opts []Option) options {
	o := options{onPanic: logPanic, quantum: 16}
	for _, opt := range opts {
		o = opt.apply(o)
	}
	if o.targets > 1 {
		panic("taskqueue: WithTarget given more than once: a queue has one target")
	}
	if o.failFull && o.maxQueued == 0 {
		panic("taskqueue: WithFailWhenFull without WithMaxQueued: an unbounded queue is never full")
	}
	return o
}

// logPanic is the default panic handler: a structured record through
// log/slog's default logger.
func logPanic(p *PanicError) {
	slog.Error("taskqueue: a task panicked", "queue", p.Source, "panic", p.Value, "stack", string(p.Stack))
}

// WithPanicHandler sets the function that receives the panics of the queue's
// tasks that no caller will see otherwise: those of tasks started with Go, of
// tasks with a Handle that nobody was waiting for when they panicked (in
// Wait, or through a continuation that somebody waits for in turn, or that
// was submitted with a context made by Awaited; a continuation that nobody
// waits for is no waiting, and the channel of Done counts as none either:
// the handle completes with the *PanicError all the same), unless they were
// submitted with a context made by Awaited, of RunSync tasks whose caller
// stopped waiting, of an Observer's TaskEnded,
// and of group members whose error the group's Wait will not return. A panic
// that a caller receives (RunSync re-panics it, a waiting Wait returns it) is
// not reported again.
//
// The handler runs on the goroutine of the task that panicked, after the
// task's handle completes, and must not block for long. It must not panic:
// that panic is not recovered. If it calls runtime.Goexit (as
// testing.T.FailNow does), its goroutine ends and the task's slot passes
// on, as for a task that calls it. Without this option,
// panics are reported through log/slog's default logger, at level Error,
// with the attributes queue (its name, see WithName), panic (the value) and
// stack.
func WithPanicHandler(h func(*PanicError)) Option {
	if h == nil {
		panic("taskqueue: WithPanicHandler(nil)")
	}
	return panicOption(h)
}

// WithMaxQueued bounds the number of tasks a queue holds that have not
// started, delayed tasks included, at n. A submission to a full queue that
// takes a context waits for room until its context is done; Go, which takes
// none, fails with ErrQueueFull, and so does every submission with
// WithFailWhenFull. A task that submits to a full queue it could be waiting
// for itself never waits: one of the queue itself, or one that holds the one
// slot of a serial queue that the queue's tasks need (its target, say); it
// gets ErrQueueFull.
// Without this option a queue is unbounded. WithMaxQueued panics if n < 1.
func WithMaxQueued(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("taskqueue: WithMaxQueued(%d): bound must be positive", n))
	}
	return maxQueuedOption(n)
}

// WithFailWhenFull makes every submission to a queue full to its
// WithMaxQueued bound fail at once with ErrQueueFull, instead of waiting for
// room. A queue made with it and without WithMaxQueued panics when made.
func WithFailWhenFull() Option {
	return failFullOption{}
}

// WithTarget makes the queue a child of target: it runs its tasks on
// target's slots, and has no goroutine of its own, ever. The child's own
// limit and order hold (a serial child runs one task at a time, in order), and
// target's limit bounds the child, its siblings and target's own tasks
// together. A child of a child makes a tree; a tree has no cycle, since a
// target exists before its children. Everything that works on a queue works
// on a child the same way, RunSync in place included: a task of a child runs
// RunSync on its target, or on an idle sibling, in its own place, on its
// slot of the target, taking turns with the task's other functions run in
// its place, as RunSync on its own queue does.
//
// A task of a tree that waits (RunSync behind a busy sibling, Handle.Wait,
// Group.Wait, Apply, Map) keeps its slots, of its queue and of the targets
// above it, while it waits: no slot is lent to the work it waits for. So a
// wait for work that needs a slot the task holds lasts until that slot is
// free: with a target that runs one task at a time (NewSerial), the wait
// panics, since it would wait for itself; with a concurrent target, when
// every slot is held by such waits, they last until their contexts end.
// To have a task start work of its tree and go on when that work is done,
// chain it with Then, which holds no slot while it waits.
//
// A child takes turns on target's slots: after its quantum of tasks (see
// WithQuantum), if it has more, it lets target's other tasks and children go
// first, so that a task of a sibling of the same priority waits at most two
// quanta behind a flooded child (one of a lower priority waits longer: see
// WithPriority). Closing target closes its subtree to new tasks; the tasks
// already accepted there still run, and Shutdown of target waits for them.
// Target must not be nil.
//
// A child costs a few hundred bytes and no goroutine while idle; for one
// queue per key that exists only while the key has work, see Keyed.
func WithTarget(target *Queue) Option {
	if target == nil {
		panic("taskqueue: WithTarget(nil)")
	}
	return targetOption{target}
}

// WithPriority sets the priority of a child queue on its target (see
// WithTarget). Priorities order a target's children among themselves: each
// turn of the target's that goes to a child goes to the one of the highest
// priority with tasks waiting, except that, while children of lower
// priorities wait, every eighth such turn goes to the one of them that has
// waited longest, so that none starves. The target's own tasks keep their
// places in its list, in submission order with the children's turns, whatever
// the priorities. A game gives the loading of visible assets a higher
// priority than that of distant ones. Without this option a child has
// priority 0. It has no effect on a queue without a target.
func WithPriority(p int) Option {
	return priorityOption(p)
}

// WithQuantum sets how many tasks a child queue runs on a turn of its
// target's slot before it lets its siblings go first: 16 by default. It has
// no effect on a queue without a target. WithQuantum panics if n < 1.
func WithQuantum(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("taskqueue: WithQuantum(%d): quantum must be positive", n))
	}
	return quantumOption(n)
}

// WithName names the queue. The name is the Source of the *PanicError of
// every panic of its tasks, and shows in Stats and in the default panic
// report. The queue's workers carry it as the runtime/pprof label "queue",
// so that CPU profiles attribute their time to it; a task submitted with a
// context that carries pprof labels runs with those labels too. An unnamed
// queue's tasks are labeled as a named queue's are, with the name of the
// nearest named queue among its targets, if any. A function that RunSync
// runs on its caller's goroutine (on an idle queue, or in a task's place)
// carries the labels a worker would give it, and the caller's labels come
// back when it returns. With runtime/trace on, each task is a trace region
// of that name. A queue with no name, of its own or of a target, sets no
// label, which costs nothing per task.
func WithName(name string) Option {
	return nameOption(name)
}

// WithObserver sets an Observer that sees every task of the queue start and
// end, for metrics exporters. Without it, tasks cost nothing for
// observation.
func WithObserver(obs Observer) Option {
	if obs == nil {
		panic("taskqueue: WithObserver(nil)")
	}
	return observerOption{obs}
}
