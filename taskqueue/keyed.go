package taskqueue

import (
	"context"
	"sync"
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
// lane: RunSync from a task of a lane on its own key runs in the task's place.
// Closing the target closes the lanes: submissions then fail with
// ErrClosed, and the target's Shutdown waits for the lanes' tasks.
//
// The zero Keyed is not usable; call NewKeyed. A Keyed is safe for use by
// multiple goroutines and must not be copied. For one key, the return of each
// task happens before the start of the next.
type Keyed[K comparable] struct {
	target *Queue
	opts   []Option

	mu    sync.Mutex // guards the fields below
	lanes map[K]*lane
	peak  int // the most lanes since lanes was made; a map does not shrink
}

// A lane is the serial queue of one key, while the key has work.
type lane struct {
	q    *Queue
	refs int // submissions under way, which keep the lane (under Keyed.mu)
}

// NewKeyed returns a Keyed whose lanes run on target's slots. The options
// are those of every lane: WithPanicHandler, WithMaxQueued (a bound per
// key), WithPriority and WithQuantum; WithTarget is target. NewKeyed panics
// if target is nil.
func NewKeyed[K comparable](target *Queue, opts ...Option) *Keyed[K] {
	if target == nil {
		panic("taskqueue: NewKeyed with a nil target")
	}
	return &Keyed[K]{target: target, opts: opts, lanes: make(map[K]*lane)}
}

// Go runs f in key's lane and returns at once, as Queue.Go does.
func (k *Keyed[K]) Go(key K, f func()) error {
	if f == nil {
		nilFunc("Keyed.Go")
	}
	l := k.acquire(key)
	defer k.release(key, l)
	return l.q.Go(f)
}

// RunAsync runs f in key's lane and returns its Handle at once, as
// Queue.RunAsync does.
func (k *Keyed[K]) RunAsync(ctx context.Context, key K, f func(context.Context) error) *Handle {
	if f == nil {
		nilFunc("Keyed.RunAsync")
	}
	l := k.acquire(key)
	defer k.release(key, l)
	return l.q.RunAsync(ctx, f)
}

// RunSync runs f in key's lane and waits for it, as Queue.RunSync does:
// called from a task of the same key, f runs in the task's place.
func (k *Keyed[K]) RunSync(ctx context.Context, key K, f func(context.Context) error) error {
	if f == nil {
		nilFunc("Keyed.RunSync")
	}
	l := k.acquire(key)
	defer k.release(key, l)
	return l.q.RunSync(ctx, f)
}

// Lanes returns the number of keys that have work now, each with its lane.
func (k *Keyed[K]) Lanes() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.lanes)
}

// acquire returns key's lane, making it if the key has none, and holds it
// until release.
func (k *Keyed[K]) acquire(key K) *lane {
	k.mu.Lock()
	defer k.mu.Unlock()
	l := k.lanes[key]
	if l == nil {
		l = &lane{}
		opts := append(k.opts[:len(k.opts):len(k.opts)], WithTarget(k.target),
			optionFunc(func(o *options) { o.onIdle = func() { k.drop(key, l) } }))
		l.q = NewSerial(opts...)
		k.lanes[key] = l
		k.peak = max(k.peak, len(k.lanes))
	}
	l.refs++
	return l
}

// release ends a submission to key's lane, dropping the lane if it is idle.
func (k *Keyed[K]) release(key K, l *lane) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l.refs--
	k.dropLocked(key, l)
}

// drop is the lane's idle function: the lane of key has no work left.
func (k *Keyed[K]) drop(key K, l *lane) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.dropLocked(key, l)
}

// dropLocked forgets key's lane l if nothing holds it and it has no work.
// A submission holds the lane from before it queues its task until after, so
// a lane found idle here has no task, and the key's next task makes a new
// lane, which cannot overlap this one.
func (k *Keyed[K]) dropLocked(key K, l *lane) {
	if l.refs > 0 || k.lanes[key] != l || !l.q.idle() {
		return
	}
	delete(k.lanes, key)
	if k.peak > 64 && len(k.lanes) < k.peak/4 {
		// A Go map keeps its peak size after deletions: move the lanes to
		// a fresh one, amortized over the deletions since the peak.
		lanes := make(map[K]*lane, len(k.lanes))
		for key, l := range k.lanes {
			lanes[key] = l
		}
		k.lanes, k.peak = lanes, len(lanes)
	}
}
