package taskqueue

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// A Queue runs tasks on a [scheduler.Scheduler]: a serial queue one at a time,
// in submission order; a concurrent queue up to a limit at a time, starting
// them in submission order. Tasks run on worker goroutines that start on
// demand and exit when the queue is empty, so an idle Queue holds no goroutine,
// channel or timer, and one that is no longer used needs no Close.
//
// A Queue is safe for use by multiple goroutines. It must not be copied.
// The zero Queue is not usable: its methods panic; make one with NewSerial
// or NewConcurrent.
// For a serial Queue, the return of each task happens before the start of the
// next.
type Queue struct {
	s         *scheduler.Scheduler
	target    *Queue // the queue whose slots q runs on (see WithTarget); nil for a root
	onPanic   func(*PanicError)
	bounded   bool // made WithMaxQueued
	failFull  bool // WithFailWhenFull: never wait for room
	isDefault bool // DefaultSerial or DefaultConcurrent, which cannot be closed
	serial    bool // made by NewSerial: its limit stays 1
	name      string
	labels    context.Context // the pprof label "queue" of its work: its name, or the nearest named target's; nil if none
	labelName string          // the value of that label
	observer  Observer        // nil if none

	mu     sync.Mutex // guards the fields below
	closed bool       // set by Shutdown and CloseNow
	// The delayed tasks wait in a heap under a single timer, armed for the
	// earliest; a delayed task holds no goroutine while it waits.
	delayed delayHeap
	dead    int                 // entries of delayed whose task was canceled
	timer   *time.Timer         // nil while delayed is empty
	moved   chan struct{}       // closed once the batch of due tasks runDue is queuing is queued; nil if none
	waits   *syncCall           // the RunSync calls waiting for their turn, newest first (see Waits)
	slow    *time.Timer         // watches the waits for one that waits for itself; nil while none waits
	groups  map[*Group]struct{} // the groups with runners on the queue, whose members CloseNow stops

	closedNow atomic.Bool  // CloseNow was called: runners start no more members
	mover     atomic.Int32 // runDue calls under way: the first moves, the others leave it a note
	suspends  atomic.Int32 // Suspend calls not yet resumed

	panicked atomic.Uint64
	failed   atomic.Uint64 // tasks that returned an error or called runtime.Goexit
	canceled atomic.Uint64
	rejected atomic.Uint64
	skipped  atomic.Uint64 // canceled tasks that the scheduler still took, to skip them
	inner    atomic.Uint64 // tasks that an item of the scheduler ran: members of groups
}

// NewSerial returns a queue that runs one task at a time, in the order they
// were submitted.
func NewSerial(opts ...Option) *Queue {
	q := newQueue(1, opts)
	q.serial = true
	return q
}

// NewConcurrent returns a queue that runs up to n tasks at once, starting them
// in the order they were submitted. NewConcurrent panics if n < 1.
//
// A queue with no limit is NewConcurrent(math.MaxInt): each task then starts
// at once, on a worker goroutine of its own while the others are busy, in
// submission order. A limit costs nothing until tasks run (workers start on
// demand and exit when idle), so a large one holds no more memory than a
// small one; a limit above 1<<30 is taken as 1<<30.
func NewConcurrent(n int, opts ...Option) *Queue {
	if n < 1 {
		panic(fmt.Sprintf("taskqueue: NewConcurrent(%d): concurrency must be positive", n))
	}
	return newQueue(n, opts)
}

func newQueue(limit int, opts []Option) *Queue {
	o := buildOptions(opts)
	q := &Queue{onPanic: o.onPanic, bounded: o.maxQueued > 0, failFull: o.failFull,
		name: o.name, observer: o.observer}
	var buf [8]scheduler.Option // room for all, so that making a queue allocates less
	sopts := append(buf[:0], scheduler.WithPanicHandler(q.goPanicked), scheduler.WithGoexitFunc(q.goexited))
	if o.name != "" {
		q.labels = pprof.WithLabels(context.Background(), pprof.Labels("queue", o.name))
		q.labelName = o.name
		sopts = append(sopts, scheduler.WithName(o.name))
	} else if o.target != nil {
		q.labels, q.labelName = o.target.labels, o.target.labelName // the nearest named target's
	}
	if q.bounded {
		sopts = append(sopts, scheduler.WithMaxPending(o.maxQueued))
	}
	if o.target != nil {
		q.target = o.target
		sopts = append(sopts, scheduler.WithTarget(o.target.s),
			scheduler.WithPriority(o.priority), scheduler.WithQuantum(o.quantum))
	}
	if o.onIdle != nil {
		sopts = append(sopts, scheduler.WithIdleFunc(o.onIdle))
	}
	q.s = scheduler.New(limit, sopts...)
	return q
}

// goexited counts a task started with Go that called runtime.Goexit.
func (q *Queue) goexited() { q.failed.Add(1) }

// goPanicked receives the panics of tasks started with Go, which the
// scheduler recovers.
func (q *Queue) goPanicked(p *PanicError) {
	q.panicked.Add(1)
	q.onPanic(p)
}

// Go submits f to run on q and returns at once, with no handle. It never
// blocks: it returns ErrClosed if q is closed, and ErrQueueFull if q was made
// WithMaxQueued and is full, whatever its policy. A panic in f goes to the
// queue's panic handler (see WithPanicHandler). Go allocates nothing: the
// task is f itself (BenchmarkGo in this package's benchmarks measures it).
func (q *Queue) Go(f func()) error {
	if f == nil {
		nilFunc("Go")
	}
	q.mustBeMade()
	if _, err := q.s.Enqueue(scheduler.Func(q.observeGo(f))); err != nil {
		q.rejected.Add(1)
		return queueError(err)
	}
	return nil
}

// TryGo runs f on q only if it can start at once, on a free slot with no
// task waiting before it, and reports whether it did; it never queues f and
// never blocks (errgroup's TryGo). It reports false if q is closed, and, on
// a queue made WithMaxQueued, if q holds as many tasks as it allows, delayed
// ones included. A panic in f goes to the queue's panic handler, as with Go.
// A TryGo that reports false submitted nothing: Stats counts it nowhere.
func (q *Queue) TryGo(f func()) bool {
	if f == nil {
		nilFunc("TryGo")
	}
	q.mustBeMade()
	return q.s.TryEnqueue(scheduler.Func(q.observeGo(f)))
}

// observeGo returns f, wrapped for the queue's Observer if it has one.
func (q *Queue) observeGo(f func()) func() {
	if q.observer == nil {
		return f
	}
	return func() {
		p, _ := q.call(context.Background(), func(context.Context) error { f(); return nil }, nil)
		if p != nil {
			q.goPanicked(p)
		}
	}
}

// RunAsync submits f to run on q and returns its Handle at once. f receives
// a context derived from ctx, which carries the slot the task holds while it
// runs: work done with it is the task's own (see RunSync). If ctx is done
// before f starts, f never runs and the handle completes with ctx.Err(), or
// with ErrClosed if CloseNow drops the task before the queue reaches it or
// anyone looks at the handle (see Handle.IsDone). On a queue made WithMaxQueued that is full, RunAsync waits
// for room until ctx is done, or fails, as the queue's policy says; a failed
// submission is reported by the handle, already done, with ErrClosed,
// ErrQueueFull or ctx.Err(). RunAsync costs one allocation of 96 bytes on
// 64-bit systems, the task with its Handle (BenchmarkRunAsync in this
// package's benchmarks measures it).
//
// RunAsync is shorthand for the generic RunAsync with a task that returns no
// value.
func (q *Queue) RunAsync(ctx context.Context, f func(context.Context) error) *Handle {
	mustCtx("RunAsync", ctx)
	if f == nil {
		nilFunc("RunAsync")
	}
	t := &errTask{fn: f}
	q.submit(ctx, &t.Handle, t)
	return &t.Handle
}

// RunBarrier is RunAsync for a barrier task: f starts when every task
// submitted before it has finished, and no task submitted after it starts
// until f has returned, so f runs alone even on a concurrent queue (GCD's
// barrier blocks, .NET's ConcurrentExclusiveSchedulerPair). A delayed task
// counts as submitted when it comes due, and a group's member when it is
// added. A barrier holds back the queue's own tasks and the turns of its
// child queues (see WithTarget) that have not begun; a child's turn that
// runs when the barrier is submitted may run the child's tasks submitted
// after it before the barrier starts, as a task of the target the child's
// turn is. On a serial queue a barrier is an ordinary task.
func (q *Queue) RunBarrier(ctx context.Context, f func(context.Context) error) *Handle {
	mustCtx("RunBarrier", ctx)
	if f == nil {
		nilFunc("RunBarrier")
	}
	t := &errTask{fn: f}
	q.submit(ctx, &t.Handle, scheduler.Barrier(t))
	return &t.Handle
}

// RunAsync submits f to run on q and returns a Future for its result. It is
// the typed form of Queue.RunAsync, which documents it.
func RunAsync[T any](ctx context.Context, q *Queue, f func(context.Context) (T, error)) *Future[T] {
	mustCtx("RunAsync", ctx)
	mustQueue(q, "RunAsync")
	if f == nil {
		nilFunc("RunAsync")
	}
	t := &Future[T]{fn: f}
	q.submit(ctx, &t.Handle, (*futureTask[T])(t))
	return t
}

func nilFunc(call string) {
	panic("taskqueue: " + call + " with a nil function")
}

// submit queues the task t, whose Handle is h, to start when its turn comes.
// t is h's task, marked as a barrier or not.
func (q *Queue) submit(ctx context.Context, h *Handle, t scheduler.Task) {
	q.mustBeMade()
	h.init(ctx, q)
	q.queue(h, t)
}

// queue queues the task t, whose Handle h has its context and queue set.
func (q *Queue) queue(h *Handle, t scheduler.Task) {
	ctx := h.ctx()
	if err := ctx.Err(); err != nil {
		q.reject(h, err)
		return
	}
	id, err := q.enqueue(ctx, t)
	if err != nil {
		q.reject(h, err)
		return
	}
	h.id.Store(uint64(id))
}

// enqueue hands t to the scheduler, waiting for room if the queue's policy
// allows (see mayWait).
func (q *Queue) enqueue(ctx context.Context, t scheduler.Task) (scheduler.ID, error) {
	var id scheduler.ID
	var err error
	if q.mayWait(ctx) {
		id, err = q.s.EnqueueContext(ctx, t)
	} else {
		id, err = q.s.Enqueue(t)
	}
	return id, queueError(err)
}

// reject completes the handle of a task the queue did not accept.
func (q *Queue) reject(h *Handle, err error) {
	q.rejected.Add(1)
	h.finish(err)
}

// mayWait reports whether a submission with ctx may wait for room: only on a
// bounded queue without WithFailWhenFull, and only from work (told by ctx)
// whose wait could end: not from a task of the queue itself, nor from one
// that holds the one slot of a serial queue that q's tasks need (see await).
func (q *Queue) mayWait(ctx context.Context) bool {
	return q.bounded && !q.failFull && !holds(ctx, q.s) && (waited{q: q}).selfWait(ctx) == ""
}

// dequeue takes the queued task id, whose handle is h, out of the scheduler
// and completes it with err, reporting whether the task was still queued.
func (q *Queue) dequeue(h *Handle, id scheduler.ID, err error) bool {
	hold := q.s.Hold() // q is not idle until the task is counted and done
	defer hold.Release()
	if !q.s.TryDequeue(id) {
		return false
	}
	q.canceled.Add(1)
	h.finish(err)
	return true
}
