package scheduler

import (
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"sync"
	"sync/atomic"
)

var (
	// ErrClosed is returned by Enqueue, EnqueueContext, Reserve and
	// ReserveContext after Close.
	ErrClosed = errors.New("scheduler: closed")
	// ErrFull is returned by Enqueue and Reserve when the list holds as many
	// items as WithMaxPending allows.
	ErrFull = errors.New("scheduler: list full")
)

// A Scheduler runs queued items in FIFO order, at most Limit at a time.
// It is the Go counterpart of .NET's LimitedConcurrencyLevelTaskScheduler.
//
// A root Scheduler runs its items on worker goroutines, which start on
// demand, while fewer than Limit run and items wait, and exit once the list
// is empty: an idle Scheduler holds no goroutine and needs no Close to be
// collected. A Scheduler made WithTarget has no goroutine of its own, ever:
// it runs its items on its target's slots (see the package documentation,
// Trees).
//
// The zero Scheduler is not usable; call New. A Scheduler is safe for use by
// multiple goroutines and must not be copied after first use. With a limit of
// one, the return of each item's Run happens before the start of the next
// item's Run.
type Scheduler struct {
	onPanic  func(*PanicError)
	onIdle   func()          // WithIdleFunc; nil if none
	name     string          // WithName
	labelCtx context.Context // the pprof labels of the name; nil if none
	room     *room           // nil unless WithMaxPending
	parent   *Scheduler      // the target whose slots s runs on; nil for a root
	prio     int32           // the priority of s's turns on its target
	quantum  int32           // the items a turn of s runs before its siblings get theirs

	closed atomic.Bool // set by Close, under mu; read without it by s's subtree
	halted atomic.Bool // s is suspended; read without mu by s's subtree and batches
	cut    atomic.Bool // more slots are held than the limit: read without mu by batches
	// taking counts the workers of a batch between their look at halted and
	// cut and the end of their take (see runBatchLocked): Suspend and
	// SetLimit wait for it to drop to zero, so that no take they did not
	// stop ends after they return.
	taking atomic.Int32

	mu sync.Mutex // guards the fields below
	// Every decision to start or stop a slot is taken under mu together with
	// the look at the list it depends on. That is what rules out a lost
	// wake-up: an item pushed while the last worker leaves either is seen by
	// that worker, or sees the worker gone and starts a new one.
	//
	// Invariants, whenever mu is free: active counts the slots held (by
	// workers, by the turns of a child, by TryRun) and lent the slots that
	// waiting items lent (see Await); running counts the items running on
	// them, so active-running slots are between items and about to take
	// one; every queued item that may start has a slot on the way unless
	// active+lent reaches limit; a child has at most one turn requested from
	// its target and not begun (turns).
	list      list            // s's own items and its children's turns, in order
	mux       *mux            // the turns of s's children waiting in list; nil until s has had a child with work
	barriers  int32           // barriers in list
	limit     int32           //
	active    int32           // slots held
	running   int32           // items running on slots, turns of children and TryRun included
	inPlace   int32           // functions running in the place of an item (TryRun with its Slot)
	turnsRun  int32           // children's turns running (counted in running)
	reserved  int32           // reservations of s and its subtree not yet used or canceled
	lent      int32           // slots lent by waiting items (see Await), not counted in active
	returners []chan struct{} // waiting items that want their lent slot back, oldest first
	turns     int32           // (a child) turns requested from the target and not begun: 0 or 1
	exclusive bool            // a barrier is running: nothing else may start
	notify    bool            // s went idle: unlock calls onIdle
	suspends  int32           // Suspend calls not yet resumed
	completed uint64          // items whose Run has returned or panicked
	idle      chan struct{}   // closed when s goes idle, for Wait; nil if nobody waits
	recs      []*slotRec      // free slot records
	b         *batch          // the head of the queue, taken off the list by a serial worker; nil if none
	waits     waits           // a sample of how long items wait to start
}

// New returns a Scheduler that runs at most limit items at once. A limit of
// one makes a serial scheduler. New panics if limit < 1.
func New(limit int, opts ...Option) *Scheduler {
	if limit < 1 {
		panic(fmt.Sprintf("scheduler: New(%d): limit must be positive", limit))
	}
	o := buildOptions(opts)
	s := &Scheduler{onPanic: o.onPanic, onIdle: o.onIdle, parent: o.target, prio: o.priority,
		quantum: o.quantum, limit: int32(min(limit, maxLimit))}
	if o.name != "" {
		s.name = o.name
		s.labelCtx = pprof.WithLabels(context.Background(), pprof.Labels(labelKey, o.name))
	}
	if o.maxPending > 0 {
		s.room = newRoom(o.maxPending)
	}
	return s
}

// maxLimit is the largest limit a Scheduler keeps; larger ones are cut to it.
const maxLimit = 1 << 30

// Limit returns the most items s runs at once.
func (s *Scheduler) Limit() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(s.limit)
}

// Stats describes a Scheduler at one instant.
type Stats struct {
	Pending   int     // items queued and not started
	Running   int     // items running, those run by TryRun included
	Completed uint64  // items whose Run has returned or panicked
	Wait      Latency // how long a sample of the items waited to start
}

// Stats returns the state of s, read at one instant. The items of s's
// children are theirs: they count in their Stats, not in s's.
func (s *Scheduler) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{
		Pending:   s.queuedLocked() - s.mux.waitingTurns(),
		Running:   int(s.running + s.inPlace - s.turnsRun),
		Completed: s.completed,
		Wait:      s.waits.latency(),
	}
}

// Enqueue adds t at the end of the list and returns its ID. It never blocks:
// if s was built WithMaxPending and the list is full, it returns ErrFull; after
// Close it returns ErrClosed. Enqueue costs no allocation once the list's
// segments are pooled; see BenchmarkEnqueue. A task marked with Barrier runs
// alone.
func (s *Scheduler) Enqueue(t Task) (ID, error) {
	mustTask("Enqueue", t)
	if s.room != nil && !s.room.sem.TryAcquire(1) {
		if s.Closed() {
			return 0, ErrClosed
		}
		return 0, ErrFull
	}
	return s.push(t)
}

// EnqueueContext is Enqueue that waits for room when the list is full,
// until ctx is done (it then returns ctx.Err()) or s is closed (ErrClosed).
// Waiting callers get room in the order they started waiting. For a
// Scheduler without WithMaxPending, EnqueueContext is Enqueue.
func (s *Scheduler) EnqueueContext(ctx context.Context, t Task) (ID, error) {
	mustTask("EnqueueContext", t)
	if s.room != nil && !s.room.sem.TryAcquire(1) {
		if err := s.room.wait(ctx); err != nil {
			return 0, err
		}
	}
	return s.push(t)
}

// push adds t, for which the caller holds room if s is bounded.
func (s *Scheduler) push(t Task) (ID, error) {
	s.mu.Lock()
	if s.Closed() {
		s.mu.Unlock()
		s.room.release(1)
		return 0, ErrClosed
	}
	id := s.pushLocked(t)
	s.mu.Unlock()
	return id, nil
}

// pushLocked queues t and starts the slot it needs.
func (s *Scheduler) pushLocked(t Task) ID {
	id := s.list.push(t)
	s.waits.pushedLocked(id)
	if isBarrier(t) {
		s.barriers++
	}
	s.spawnLocked()
	return id
}

// TryDequeue removes the queued item id before it starts, reporting whether
// it did. It reports false if the item has started or was removed already.
// The item's memory is freed at once, even while the items queued before it
// wait.
func (s *Scheduler) TryDequeue(id ID) bool {
	s.mu.Lock()
	if s.b != nil && s.b.remove(id) {
		s.releaseBatchLocked()
		s.spawnLocked()
		s.idleLocked()
		s.unlock()
		s.room.release(1)
		return true
	}
	if seg, i := s.list.find(id); seg == nil || seg.at(i) == Task(s.mux) {
		s.mu.Unlock()
		return false // not queued, or the turn of a child, which is not s's to remove
	}
	if isBarrier(s.list.remove(id)) {
		s.barriers--
	}
	s.spawnLocked() // a barrier that held the head back may be gone
	s.idleLocked()
	s.unlock()
	s.room.release(1)
	return true
}

// DequeueAll removes every queued item and returns them, oldest first, with
// their barrier marks removed. Items already running go on, and so does the
// work of s's children, which is theirs: their turns stay queued.
func (s *Scheduler) DequeueAll() []Task {
	s.mu.Lock()
	return s.dequeueAllLocked()
}

// CloseNow is Close and DequeueAll at once: no item starts, and none is
// queued, between the two, so every item queued before CloseNow either
// started before it or is among those it returns, and every item after it
// is refused.
func (s *Scheduler) CloseNow() []Task {
	s.mu.Lock()
	s.closed.Store(true)
	ts := s.dequeueAllLocked()
	s.room.close()
	return ts
}

// dequeueAllLocked is DequeueAll, called with s.mu held, which it unlocks.
func (s *Scheduler) dequeueAllLocked() []Task {
	var ts []Task
	if s.b != nil {
		ts = s.b.drain(ts)
		s.releaseBatchLocked()
	}
	all := s.list.drain()
	if s.mux != nil {
		s.mux.ids, s.mux.head = s.mux.ids[:0], 0
	}
	for _, t := range all {
		if t == Task(s.mux) {
			// A child's turn keeps its order among the turns.
			s.mux.ids = append(s.mux.ids, s.list.push(t))
			continue
		}
		ts = append(ts, unbarrier(t))
	}
	s.barriers = 0
	s.idleLocked()
	s.unlock()
	s.room.release(len(ts))
	return ts
}

// Close stops s, and its subtree, from accepting items: Enqueue,
// EnqueueContext, Reserve and ReserveContext return ErrClosed from then on,
// those waiting for room included, and TryRun reports false except in the
// place of a running item. Items already queued still run, and so do items
// queued on reservations taken before Close. Close is idempotent.
func (s *Scheduler) Close() {
	s.mu.Lock()
	s.closed.Store(true)
	s.mu.Unlock()
	s.room.close()
}

// Closed reports whether s is closed: Close was called on s or on one of the
// targets above it.
func (s *Scheduler) Closed() bool {
	for a := s; a != nil; a = a.parent {
		if a.closed.Load() {
			return true
		}
	}
	return false
}

// Wait blocks until nothing is queued, reserved or running in s and its
// subtree, or until ctx is done, in which case it returns ctx.Err(). Items
// queued while Wait waits are waited for too. Called from an item of s, it
// would wait for that item too: it never returns before its ctx is done.
func (s *Scheduler) Wait(ctx context.Context) error {
	s.mu.Lock()
	if s.isIdleLocked() {
		s.mu.Unlock()
		return nil
	}
	if s.idle == nil {
		s.idle = make(chan struct{})
	}
	idle := s.idle
	s.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Scheduler) isIdleLocked() bool {
	return s.queuedLocked() == 0 && s.running == 0 && s.inPlace == 0 && s.reserved == 0
}

// idleLocked wakes Wait if s is idle, has unlock call the idle function, and
// frees what an idle s keeps for the next items once no slot is left to use
// it.
func (s *Scheduler) idleLocked() {
	if !s.isIdleLocked() {
		return
	}
	s.notify = s.onIdle != nil
	if s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
	if s.active == 0 {
		s.list.shrink() // the slot records are kept: a few, small, reused
	}
}

// unlock releases s.mu, then calls the idle function (see WithIdleFunc) if
// s went idle while it was held.
func (s *Scheduler) unlock() {
	notify := s.notify
	s.notify = false
	s.mu.Unlock()
	if notify {
		s.onIdle()
	}
}
