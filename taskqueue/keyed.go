package taskqueue

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// A Keyed runs tasks in serial lanes by key, on a target queue's slots: the
// tasks of one key run one at a time, in the order they were submitted, and
// the tasks of different keys run in parallel, up to the target's limit. It is
// one serial queue per entity (per player, per document, per connection)
// without a goroutine, or even a queue, per entity: a lane exists only while
// its key has work, so memory follows the keys with work, not the keys ever
// seen.
//
// Each lane is a serial child of the target (see WithTarget), so the lanes
// take turns on its slots fairly, and the rules of a serial queue hold in a
// lane: RunSync from a task of a lane on its own key, with the task's
// context, runs in the task's place. Closing the target closes the lanes:
// submissions then fail with ErrClosed, and the target's Shutdown waits for
// the lanes' tasks.
//
// The zero Keyed is not usable: its methods panic; make one with NewKeyed. A
// Keyed is safe for use by multiple goroutines and must not be copied. For
// one key, the return of each task happens before the start of the next.
type Keyed[K comparable] struct {
	target *Queue
	opts   []Option
	name   string // WithName: each lane is named name[key]

	mu      sync.Mutex // guards the fields below
	lanes   map[K]*lane[K]
	peak    int        // the most lanes since lanes was made; a map does not shrink
	free    []*lane[K] // idle lanes kept for new keys, at most maxFreeLanes
	retired Stats      // the counts of the lanes dropped so far
}

// A lane is the serial queue of one key, while the key has work.
type lane[K comparable] struct {
	q   *Queue
	key K // under Keyed.mu
	// refs counts the submissions under way, which keep the lane: taken
	// under Keyed.mu, given back without it (see release).
	refs atomic.Int32
	// idled is set when the lane went idle while a submission held it:
	// the submission's release then drops it.
	idled atomic.Bool
	base  Stats // the lane's counts when it took its key, for a reused lane
}

// maxFreeLanes is how many idle lanes a Keyed keeps to reuse, which saves
// making a queue for each new key.
const maxFreeLanes = 256

// NewKeyed returns a Keyed whose lanes run on target's slots. The options
// are those of every lane: WithPanicHandler, WithMaxQueued (a bound per
// key), WithPriority, WithQuantum, WithObserver, and WithName, which names
// each lane NAME[KEY]. NewKeyed panics if target is nil, and if opts hold a
// WithTarget: the lanes' target is target.
func NewKeyed[K comparable](target *Queue, opts ...Option) *Keyed[K] {
	if target == nil {
		panic("taskqueue: NewKeyed with a nil target")
	}
	o := buildOptions(opts)
	if o.targets > 0 {
		panic("taskqueue: NewKeyed with WithTarget: the lanes' target is NewKeyed's first argument")
	}
	return &Keyed[K]{target: target, opts: opts, name: o.name, lanes: make(map[K]*lane[K])}
}

// Go runs f in key's lane and returns at once, as Queue.Go does.
func (k *Keyed[K]) Go(key K, f func()) error {
	if f == nil {
		nilFunc("Keyed.Go")
	}
	l := k.acquire(key)
	err := l.q.Go(f)
	k.release(l, err != nil)
	return err
}

// TryGo runs f in key's lane only if it can start at once: the key has no
// task queued or running, and the target has a free slot for it. It reports
// whether it did, and never queues f and never blocks (see Queue.TryGo).
func (k *Keyed[K]) TryGo(key K, f func()) bool {
	if f == nil {
		nilFunc("Keyed.TryGo")
	}
	l := k.acquire(key)
	ok := l.q.TryGo(f)
	k.release(l, !ok)
	return ok
}

// RunAsync runs f in key's lane and returns its Handle at once, as
// Queue.RunAsync does.
func (k *Keyed[K]) RunAsync(ctx context.Context, key K, f func(context.Context) error) *Handle {
	mustCtx("Keyed.RunAsync", ctx)
	if f == nil {
		nilFunc("Keyed.RunAsync")
	}
	l := k.acquire(key)
	h := l.q.RunAsync(ctx, f)
	k.release(l, h.settled())
	return h
}

// RunAfter runs f in key's lane no earlier than d from now, as Queue.RunAfter
// does: the key's lane lives while the task waits, and its tasks keep their
// order with it.
func (k *Keyed[K]) RunAfter(ctx context.Context, key K, d time.Duration, f func(context.Context) error) *Handle {
	mustCtx("Keyed.RunAfter", ctx)
	if f == nil {
		nilFunc("Keyed.RunAfter")
	}
	l := k.acquire(key)
	h := l.q.RunAfter(ctx, d, f)
	k.release(l, h.settled())
	return h
}

// RunSync runs f in key's lane and waits for it, as Queue.RunSync does:
// called from a task of the same key with the task's context, f runs in the
// task's place.
func (k *Keyed[K]) RunSync(ctx context.Context, key K, f func(context.Context) error) error {
	mustCtx("Keyed.RunSync", ctx)
	if f == nil {
		nilFunc("Keyed.RunSync")
	}
	l := k.acquire(key)
	defer k.release(l, true)
	return l.q.RunSync(ctx, f)
}

// CancelKey cancels the tasks of key that have not started, delayed ones
// included: their handles complete with context.Canceled, and tasks of Go
// are dropped. It returns how many it canceled. The task of key that is
// running goes on, and tasks submitted for key afterwards run after it, as
// usual: for a player who leaves, CancelKey drops the work still queued for
// them.
func (k *Keyed[K]) CancelKey(key K) int {
	k.mustBeMade()
	k.mu.Lock()
	l := k.lanes[key]
	if l != nil {
		l.refs.Add(1)
	}
	k.mu.Unlock()
	if l == nil {
		return 0
	}
	n := l.q.cancelPending(context.Canceled, false)
	k.release(l, true)
	return n
}

// Lanes returns the number of keys that have work now, each with its lane.
func (k *Keyed[K]) Lanes() int {
	k.mustBeMade()
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.lanes)
}

// Stats returns the counts of key's lane (Queued, Delayed, Running and what
// its tasks did while it held the key), or the zero Stats if key has no work
// now. Its Wait is zero, as Total's is: a lane goes from key to key, and a
// sample of its waits would mix them.
func (k *Keyed[K]) Stats(key K) Stats {
	k.mustBeMade()
	k.mu.Lock()
	defer k.mu.Unlock() // a lane's base counts change as it retires, under k.mu
	l := k.lanes[key]
	if l == nil {
		return Stats{}
	}
	return l.stats()
}

// Total returns the counts of every lane together, those of the lanes
// dropped so far included: tasks completed, failed, canceled and so on over
// the Keyed's life, and tasks queued and running now. It samples no waits:
// its Wait is zero.
func (k *Keyed[K]) Total() Stats {
	k.mustBeMade()
	k.mu.Lock()
	defer k.mu.Unlock()
	st := k.retired
	st.Name, st.Limit = k.name, k.target.s.Limit() // the lanes together run up to the target's limit
	for _, l := range k.lanes {
		add(&st, l.stats())
	}
	return st
}

func (k *Keyed[K]) mustBeMade() {
	if k.target == nil {
		panic("taskqueue: use of a zero Keyed; make one with NewKeyed")
	}
}

// stats returns l's counts since it took its key.
func (l *lane[K]) stats() Stats { return l.since(l.q.Stats()) }

// since returns st, counts of l's queue, less those it had when it took
// its key; without the sample of waits, which has no such base.
func (l *lane[K]) since(st Stats) Stats {
	st.Wait = scheduler.Latency{}
	st.Completed -= l.base.Completed
	st.Succeeded -= l.base.Succeeded
	st.Failed -= l.base.Failed
	st.Panicked -= l.base.Panicked
	st.Canceled -= l.base.Canceled
	st.Rejected -= l.base.Rejected
	return st
}

// add adds the counts of b to a.
func add(a *Stats, b Stats) {
	a.Queued += b.Queued
	a.Delayed += b.Delayed
	a.Running += b.Running
	a.Completed += b.Completed
	a.Succeeded += b.Succeeded
	a.Failed += b.Failed
	a.Panicked += b.Panicked
	a.Canceled += b.Canceled
	a.Rejected += b.Rejected
}

// acquire returns key's lane, making it if the key has none, and holds it
// until release.
func (k *Keyed[K]) acquire(key K) *lane[K] {
	k.mustBeMade()
	k.mu.Lock()
	defer k.mu.Unlock()
	l := k.lanes[key]
	if l == nil {
		if n := len(k.free); n > 0 {
			l = k.free[n-1]
			k.free[n-1] = nil
			k.free = k.free[:n-1]
		} else {
			l = &lane[K]{}
			opts := append(k.opts[:len(k.opts):len(k.opts)], WithTarget(k.target),
				idleOption(func() { k.idle(l) }))
			if k.name != "" {
				opts = append(opts, WithName(fmt.Sprintf("%s[%v]", k.name, key)))
			}
			l.q = NewSerial(opts...)
		}
		l.key = key
		k.lanes[key] = l
		k.peak = max(k.peak, len(k.lanes))
	}
	l.refs.Add(1)
	return l
}

// release ends a submission to l. The lane may have gone idle meanwhile: if
// the submission queued nothing (mayBeIdle), or if it went idle while held.
func (k *Keyed[K]) release(l *lane[K], mayBeIdle bool) {
	if l.refs.Add(-1) == 0 && (mayBeIdle || l.idled.Load()) {
		k.mu.Lock()
		k.dropLocked(l)
		k.mu.Unlock()
	}
}

// idle is the lane's idle function: l has no work left.
func (k *Keyed[K]) idle(l *lane[K]) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if l.refs.Load() > 0 {
		l.idled.Store(true) // the holder's release drops it
		return
	}
	k.dropLocked(l)
}

// dropLocked forgets l if nothing holds it and it has no work, and keeps it
// for a new key. A submission holds the lane from before it queues its task
// until after, so a lane found idle here has no task, and the key's next
// task goes to another lane or to this one anew, never to both.
func (k *Keyed[K]) dropLocked(l *lane[K]) {
	if l.refs.Load() > 0 || k.lanes[l.key] != l || !l.q.idle() {
		return
	}
	l.idled.Store(false)
	delete(k.lanes, l.key)
	k.retireLocked(l)
	if k.peak > 64 && len(k.lanes) < k.peak/4 {
		// A Go map keeps its peak size after deletions: move the lanes to
		// a fresh one, amortized over the deletions since the peak.
		lanes := make(map[K]*lane[K], len(k.lanes))
		for key, l := range k.lanes {
			lanes[key] = l
		}
		k.lanes, k.peak = lanes, len(lanes)
	}
}

// retireLocked adds the counts of l, an idle lane that left the map, to the
// Keyed's, and keeps l for a new key. A named lane is not kept: its name is
// its key's.
func (k *Keyed[K]) retireLocked(l *lane[K]) {
	now := l.q.Stats()
	st := l.since(now)
	st.Queued, st.Delayed, st.Running = 0, 0, 0
	add(&k.retired, st)
	// Nothing reaches the lane until it takes a key again, so these are its
	// counts when it does.
	l.base = now
	var zero K
	l.key = zero
	if len(k.free) < maxFreeLanes && k.name == "" {
		k.free = append(k.free, l)
	}
}
