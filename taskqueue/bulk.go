package taskqueue

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/taskqueue-go/taskqueue/internal/panics"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// Apply calls f(i) for each i in [0, n) on q and returns when every call has
// returned, as libdispatch's dispatch_apply does: the iterations run in
// parallel, up to q's limit and the number of processors (GOMAXPROCS), and
// the calling goroutine takes part. The range is split into chunks of
// iterations, a few per participant, which the participants claim one after
// the other, so that a million tiny iterations cost a few dozen hand-offs, and
// a participant that is held up does not hold up the rest.
//
// The caller works on a slot of q: in the place of its own task if it runs
// one of q (so that Apply from a task of q waits for nothing and cannot
// deadlock), taking its turn with the task's other functions run in its
// place (see RunSync), or on a free one; if q has none free, the caller only
// waits for the others. Once every iteration is claimed, the tasks of q that
// were queued to help and have not started leave the queue. Those helpers
// are tasks of q: Stats counts those that started as Completed (one that
// starts once the work is over takes no part), the others as Canceled, and
// an Observer of q sees those that started; the caller's part counts as
// Completed, and is seen, when it runs on a slot of q. When Apply returns, no f runs, though a helper may still be counted
// as running for the instant it takes to return to q.
//
// f receives no context: calls it makes that run in a task's place (RunSync,
// Apply) must not pass the context of the task whose place the caller's part
// takes, whose turn that part holds; they would wait for it (a warning goes
// through log/slog after five seconds). Map's f receives a context of its
// own for such calls.
//
// If ctx is done, no chunk starts after it, and Apply returns ctx.Err() once
// the chunks that had started have ended. If f panics, no chunk starts after
// it and Apply panics in the caller with the *PanicError, once the other
// participants are done; if f calls runtime.Goexit, so does Apply. Apply
// returns ErrClosed if q is closed and ErrQueueFull as RunAsync would, when
// the caller cannot take part, and then calls f for no i. Refused so, or
// called with a ctx done already, Apply counts one submission as Rejected in
// q's Stats, as RunSync would. Apply panics if n is negative or f nil.
func Apply(ctx context.Context, q *Queue, n int, f func(i int)) error {
	mustCtx("Apply", ctx)
	if f == nil {
		nilFunc("Apply")
	}
	mustQueue(q, "Apply")
	if n < 0 {
		panic(fmt.Sprintf("taskqueue: Apply(%d): the count must not be negative", n))
	}
	b := newBulk(ctx, "Apply", q, n, min(q.s.Limit(), runtime.GOMAXPROCS(0)), func(_ context.Context, lo, hi int) error {
		for i := lo; i < hi; i++ {
			f(i)
		}
		return nil
	})
	return b.run()
}

// Map calls f with each item on q and returns the results in the order of
// the items, once every call has returned: as Apply does, up to q's limit,
// with the caller taking part. Once a call fails, or ctx is done, no item
// starts, and Map returns that error, or ctx.Err(), with the results of the
// calls that returned nil; the others are the zero R. Map panics if f is nil.
func Map[E, R any](ctx context.Context, q *Queue, items []E, f func(context.Context, E) (R, error)) ([]R, error) {
	mustCtx("Map", ctx)
	if f == nil {
		nilFunc("Map")
	}
	mustQueue(q, "Map")
	out := make([]R, len(items))
	var b *bulk
	b = newBulk(ctx, "Map", q, len(items), q.s.Limit(), func(ctx context.Context, lo, hi int) error {
		for i := lo; i < hi && !b.stop.Load(); i++ {
			v, err := f(ctx, items[i])
			if err != nil {
				return err
			}
			out[i] = v
		}
		return nil
	})
	return out, b.run()
}

// chunksEach is how many chunks each participant of a bulk call gets, on
// average: more even out participants that start late or are held up; fewer
// cost fewer claims.
const chunksEach = 8

// A bulk is a call of Apply or Map: the caller and helper tasks on
// the queue (the same bulk, queued once per helper) claim chunks of the range
// until none is left.
type bulk struct {
	q     *Queue
	ctx   context.Context
	call  string // Apply or Map
	watch bool   // ctx can be done
	n     int
	chunk int
	width int // the most participants: the caller and width-1 helpers
	body  func(ctx context.Context, lo, hi int) error

	next   atomic.Int64  // the first iteration not claimed
	stop   atomic.Bool   // an error, panic or Goexit: claim no more
	active atomic.Int64  // participants at work, the caller's part included; bulkClosed once over
	done   chan struct{} // closed by the last participant to leave

	mu     sync.Mutex // guards the fields below
	err    error
	p      *PanicError
	goexit bool
}

const bulkClosed = 1 << 32

func mustQueue(q *Queue, call string) {
	if q == nil {
		panic("taskqueue: " + call + " with a nil queue")
	}
	q.mustBeMade()
}

func newBulk(ctx context.Context, call string, q *Queue, n, width int, body func(ctx context.Context, lo, hi int) error) *bulk {
	width = max(1, min(width, n))
	return &bulk{q: q, ctx: ctx, call: call, watch: ctx.Done() != nil, n: n,
		chunk: max(1, n/(width*chunksEach)), width: width, body: body}
}

// run is the caller's part: it queues the helpers, takes part if it can, or
// else waits for a helper, then waits for the participants and reports the
// outcome. The caller counts as a participant until its part ends.
func (b *bulk) run() (err error) {
	if err := b.ctx.Err(); err != nil {
		b.q.rejected.Add(1) // refused as a RunSync would be
		return err
	}
	if b.n == 0 {
		return nil
	}
	b.done = make(chan struct{})
	b.active.Store(1)
	var helpers []scheduler.ID
	normal := false
	defer func() {
		b.finish(helpers)
		if !normal {
			return // f called runtime.Goexit on the caller, which goes on
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		switch {
		case b.p != nil:
			panic(b.p)
		case b.goexit:
			runtime.Goexit()
		}
		err = b.err
	}()
	ran, terr := b.q.tryRun(b.ctx, func(sl scheduler.Slot) {
		helpers = b.help(b.width - 1)
		b.participate(sl, true)
	})
	if terr != nil {
		b.fail(terr) // the caller waited for its task's turn until ctx was done
		b.leave()
	} else if !ran && b.q.isClosed() {
		b.q.rejected.Add(1) // the first helper's refusal, as on a full queue
		b.fail(ErrClosed)   // closed to anyone: no wait to judge
		b.leave()
	} else if !ran {
		// No slot for the caller: it waits for a first helper, which waits
		// for room as RunAsync would, and whose handle says if the queue
		// dropped it. A caller whose wait could never end panics here, and
		// leaves first, so that the deferred finish does not wait for it.
		defer b.leave()
		await(b.ctx, b.call, waited{q: b.q}, func() error {
			first := b.q.RunAsync(b.ctx, func(ctx context.Context) error { b.join(slotOf(ctx)); return nil })
			helpers = b.help(b.width - 1)
			if err := first.wait(b.ctx); err != nil && !errors.Is(err, ErrGoexit) {
				b.fail(err) // it never ran, or ctx is done: no chunk starts from now
			}
			return nil
		})
	}
	normal = true
	return nil
}

// finish waits, after the caller's part, for the participants at work,
// whatever ctx says (a chunk that has started runs to its end), and takes
// the helpers that never started out of the queue.
func (b *bulk) finish(helpers []scheduler.ID) {
	if b.active.Load() != bulkClosed {
		// Only work that has started is waited for: no wait for itself.
		await(b.ctx, b.call, waited{q: b.q, started: true}, func() error {
			<-b.done
			return nil
		})
	}
	if len(helpers) == 0 {
		return
	}
	hold := b.q.s.Hold() // q is not idle until the helpers are counted
	defer hold.Release()
	for _, id := range helpers {
		if b.q.s.TryDequeue(id) {
			b.q.canceled.Add(1)
		}
	}
}

// help queues up to k helpers, as many as q takes without waiting, and
// returns their IDs.
func (b *bulk) help(k int) []scheduler.ID {
	if k == 0 {
		return nil
	}
	ids := make([]scheduler.ID, 0, k)
	for range k {
		id, err := b.q.s.Enqueue(b)
		if err != nil {
			break
		}
		ids = append(ids, id)
	}
	return ids
}

// CatchesPanics: see errTask.
func (b *bulk) CatchesPanics() {}

// Run is a helper's part, on the slot sl of a worker: a task of q, which the
// queue calls as it calls a task's function (with its labels, seen by its
// Observer), whether it takes part or finds the work over.
func (b *bulk) Run(sl scheduler.Slot) {
	if !b.q.observed() {
		b.join(sl)
		return
	}
	c := &taskCtx{}
	c.start(b.q, b.ctx, sl)
	if p, _ := b.q.call(c, func(context.Context) error { b.join(sl); return nil }, nil); p != nil {
		// The Observer's TaskStarted panicked: the helper took no part, and
		// nobody but the handler will see the panic.
		b.q.panicked.Add(1)
		b.q.onPanic(p)
	}
}

// join makes a helper, on the slot sl, one of the participants, unless the
// work is over, and takes part.
func (b *bulk) join(sl scheduler.Slot) {
	for {
		a := b.active.Load()
		if a == bulkClosed {
			return // the work is over
		}
		if b.active.CompareAndSwap(a, a+1) {
			break
		}
	}
	b.participate(sl, false)
}

// participate claims chunks and runs them, on the slot sl, until none is left
// or the call stops, then leaves. A helper's part runs inside its task (see
// Run); the caller's, here, is called as the queue calls a function that
// RunSync runs on its caller.
func (b *bulk) participate(sl scheduler.Slot, here bool) {
	c := &taskCtx{}
	c.start(b.q, b.ctx, sl)
	goexit := func() {
		c.end()
		b.abort(nil)
		b.leave()
	}
	var p *PanicError
	if here {
		p, _ = b.q.callHere(c, func(context.Context) error { b.work(c); return nil }, goexit)
	} else {
		p = panics.Recover(b.q.name, func() { b.work(c) }, goexit)
	}
	c.end()
	if p != nil {
		b.abort(p)
	}
	b.leave()
}

// leave ends a participant's part, once there is no work left for anyone:
// the range is claimed, or the call stopped. The last to leave closes the
// call to helpers that start late, and wakes the caller.
func (b *bulk) leave() {
	for {
		a := b.active.Load()
		na := a - 1
		if na == 0 {
			na = bulkClosed
		}
		if b.active.CompareAndSwap(a, na) {
			if na == bulkClosed {
				close(b.done)
			}
			return
		}
	}
}

func (b *bulk) work(ctx context.Context) {
	for !b.stop.Load() {
		if b.watch && b.ctx.Err() != nil {
			b.fail(b.ctx.Err())
			return
		}
		lo := int(b.next.Add(int64(b.chunk))) - b.chunk
		if lo >= b.n {
			return
		}
		if err := b.body(ctx, lo, min(lo+b.chunk, b.n)); err != nil {
			b.fail(err)
			return
		}
	}
}

// fail stops the call with err, the first error counting.
func (b *bulk) fail(err error) {
	b.mu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.mu.Unlock()
	b.stop.Store(true)
}

// abort stops the call for the panic p, or for runtime.Goexit if p is nil.
func (b *bulk) abort(p *PanicError) {
	b.mu.Lock()
	if p == nil {
		b.goexit = true
		b.q.failed.Add(1)
	} else if b.p == nil {
		b.p = p
		b.q.panicked.Add(1)
	}
	b.mu.Unlock()
	b.stop.Store(true)
}
