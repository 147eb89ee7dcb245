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
// The zero Scheduler is not usable: its methods panic; call New. A Scheduler
// is safe for use by multiple goroutines and must not be copied after first
// use. With a limit of one, the return of each item's Run happens before the
// start of the next item's Run.
type Scheduler struct {
	cfg    *config     // set by New and never changed
	tree   tree        // s's place in a tree of schedulers (see tree.go)
	closed atomic.Bool // set by Close, under mu; read without it by s's subtree

	// mu guards the fields below. Every decision to start or stop a slot is
	// taken under mu together with the look at the list it depends on, and
	// every critical section that changes them ends in unlock, which starts
	// the slots the queued items need: so an item pushed while the last
	// worker leaves either is seen by that worker, or sees the worker gone
	// and starts a new one. See admit.go for the invariants.
	mu    sync.Mutex
	list  list  // s's own items and its children's turns, in order
	slots slots // the limit, and the slots held and running
	gate  gate  // what holds items back: suspension, barriers
	books books // reservations, completions and the idle signal
	waits waits // a sample of how long items wait to start
}

// config is what New sets and nothing changes.
type config struct {
	onPanic  func(*PanicError)
	onGoexit func()          // WithGoexitFunc; nil if none
	onIdle   func()          // WithIdleFunc; nil if none
	name     string          // WithName
	labelCtx context.Context // the pprof labels of the name; nil if none
	room     *room           // nil unless WithMaxPending
}

// books holds what s has done and what it still owes, under s.mu.
type books struct {
	reserved  int32         // reservations of s and its subtree not yet used or canceled
	holds     int32         // Holds not yet released
	completed uint64        // items whose Run has returned or panicked
	busy      bool          // s had work since it was last idle: going idle is news for onIdle
	idle      chan struct{} // closed when s goes idle, for Wait; nil if nobody waits
}

// New returns a Scheduler that runs at most limit items at once. A limit of
// one makes a serial scheduler. A limit above 1<<30 is taken as 1<<30, which
// is no limit in practice: a worker starts for every item queued while
// fewer run. New panics if limit < 1.
func New(limit int, opts ...Option) *Scheduler {
	if limit < 1 {
		panic(fmt.Sprintf("scheduler: New(%d): limit must be positive", limit))
	}
	o := buildOptions(opts)
	c := &config{onPanic: o.onPanic, onGoexit: o.onGoexit, onIdle: o.onIdle, name: o.name}
	if o.name != "" {
		c.labelCtx = pprof.WithLabels(context.Background(), pprof.Labels(labelKey, o.name))
	}
	if o.maxPending > 0 {
		c.room = newRoom(o.maxPending)
	}
	s := &Scheduler{cfg: c}
	s.slots.limit = int32(min(limit, maxLimit))
	s.tree = tree{parent: o.target, prio: o.priority, quantum: o.quantum}
	return s
}

// maxLimit is the largest limit a Scheduler keeps; larger ones are cut to it.
const maxLimit = 1 << 30

// mustBeMade panics on the zero Scheduler, naming the call, rather than
// accept items it would never run.
func (s *Scheduler) mustBeMade(call string) {
	if s.cfg == nil {
		panic("scheduler: " + call + " on a zero Scheduler; make one with New")
	}
}

// Limit returns the most items s runs at once.
func (s *Scheduler) Limit() int {
	s.mustBeMade("Limit")
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(s.slots.limit)
}

// Stats describes a Scheduler at one instant.
type Stats struct {
	Pending int // items queued and not started
	// Running counts the items of s that have started and not returned:
	// those on s's slots, and those that TryRun runs on a new slot of s.
	// A function that TryRun runs in the place of an item is part of that
	// item's run and is not counted again, so Running never exceeds Limit
	// but while SetLimit lowers it.
	Running   int
	Completed uint64  // items whose Run has returned, panicked or called runtime.Goexit, TryRun's functions included
	Wait      Latency // how long a sample of the items waited to start
}

// Stats returns the state of s, read at one instant. The items of s's
// children are theirs: they count in their Stats, not in s's.
func (s *Scheduler) Stats() Stats {
	s.mustBeMade("Stats")
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{
		Pending:   s.list.live - s.tree.mux.waiting(),
		Running:   int(s.slots.running - s.slots.turns),
		Completed: s.books.completed,
		Wait:      s.waits.latency(),
	}
}

// Enqueue adds t at the end of the list and returns its ID. It never blocks:
// if s was built WithMaxPending and the list is full, it returns ErrFull; after
// Close it returns ErrClosed. Enqueue costs no allocation once the list's
// segments are pooled. A task marked with Barrier runs alone.
func (s *Scheduler) Enqueue(t Task) (ID, error) {
	s.mustBeMade("Enqueue")
	mustTask("Enqueue", t)
	if r := s.cfg.room; r != nil && !r.sem.TryAcquire(1) {
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
	s.mustBeMade("EnqueueContext")
	mustCtx("EnqueueContext", ctx)
	mustTask("EnqueueContext", t)
	if r := s.cfg.room; r != nil && !r.sem.TryAcquire(1) {
		if err := r.wait(ctx); err != nil {
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
		s.cfg.room.release(1)
		return 0, ErrClosed
	}
	id := s.pushLocked(t)
	s.unlock()
	return id, nil
}

// pushLocked queues t; unlock starts the slot it needs.
func (s *Scheduler) pushLocked(t Task) ID {
	id := s.list.push(t)
	s.waits.pushedLocked(id, s.list.live)
	if isBarrier(t) {
		s.gate.barriers++
		s.gate.queued.Add(1)
	}
	s.books.busy = true
	return id
}

// TryDequeue removes the queued item id before it starts, reporting whether
// it did. It reports false if the item has started or was removed already.
// The item's memory is freed at once, even while the items queued before it
// wait.
func (s *Scheduler) TryDequeue(id ID) bool {
	s.mustBeMade("TryDequeue")
	s.mu.Lock()
	if seg, i := s.list.find(id); seg == nil || s.tree.isTurn(seg.at(i)) {
		s.mu.Unlock()
		return false // not queued, or the turn of a child, which is not s's to remove
	}
	t := s.list.remove(id)
	if isBarrier(t) {
		s.gate.barriers--
	}
	s.unlock() // a barrier that held the head back may be gone, and s may be idle
	if !isCarried(t) {
		s.cfg.room.release(1)
	}
	return true
}

// DequeueAll removes every queued item and returns them, oldest first, with
// their barrier marks removed. Items already running go on, and so does the
// work of s's children, which is theirs: their turns stay queued.
func (s *Scheduler) DequeueAll() []Task {
	s.mustBeMade("DequeueAll")
	s.mu.Lock()
	return s.dequeueAllLocked()
}

// CloseNow is Close and DequeueAll at once: no item starts, and none is
// queued, between the two, so every item queued before CloseNow either
// started before it or is among those it returns, and every item after it
// is refused.
func (s *Scheduler) CloseNow() []Task {
	s.mustBeMade("CloseNow")
	s.mu.Lock()
	s.closed.Store(true)
	ts := s.dequeueAllLocked()
	s.cfg.room.close()
	return ts
}

// dequeueAllLocked is DequeueAll, called with s.mu held, which it unlocks.
func (s *Scheduler) dequeueAllLocked() []Task {
	var ts []Task
	room := 0
	if m := s.tree.mux; m != nil {
		m.ids, m.head = m.ids[:0], 0 // the turns are pushed again below, with new IDs
	}
	for _, t := range s.list.drain() {
		if s.tree.isTurn(t) {
			s.tree.requeueTurnLocked(&s.list) // a child's turn keeps its place among the turns
			continue
		}
		if !isCarried(t) {
			room++
		}
		ts = append(ts, unwrap(t))
	}
	s.gate.barriers = 0
	s.unlock()
	s.cfg.room.release(room)
	return ts
}

// Requeue adds t at the end of the list, whatever the state of s: closed,
// or bounded and full. It is for an item that carries work s has accepted
// already, such as what a running item hands back to the list so that the
// items queued behind it go first, or so that Suspend or a lower limit hold
// it back: refusing it would drop that work. t takes no room of the list.
// Requeue never blocks and returns t's ID.
func (s *Scheduler) Requeue(t Task) ID {
	s.mustBeMade("Requeue")
	mustTask("Requeue", t)
	s.mu.Lock()
	id := s.pushLocked(carried{t})
	s.unlock()
	return id
}

// Close stops s, and its subtree, from accepting items: Enqueue,
// EnqueueContext, Reserve and ReserveContext return ErrClosed from then on,
// those waiting for room included, and TryRun reports false except in the
// place of a running item. Items already queued still run, and so do items
// queued on reservations taken before Close. Close is idempotent.
func (s *Scheduler) Close() {
	s.mustBeMade("Close")
	s.mu.Lock()
	s.closed.Store(true)
	s.mu.Unlock()
	s.cfg.room.close()
}

// Closed reports whether s is closed: Close was called on s or on one of the
// targets above it.
func (s *Scheduler) Closed() bool {
	s.mustBeMade("Closed")
	for a := s; a != nil; a = a.tree.parent {
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
	s.mustBeMade("Wait")
	mustCtx("Wait", ctx)
	s.mu.Lock()
	if s.isIdleLocked() {
		s.mu.Unlock()
		return nil
	}
	if s.books.idle == nil {
		s.books.idle = make(chan struct{})
	}
	idle := s.books.idle
	s.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Idle reports whether s is idle now, as Wait and the idle function (see
// WithIdleFunc) see it: nothing is queued, reserved or running in s and its
// subtree, and no Hold holds it.
func (s *Scheduler) Idle() bool {
	s.mustBeMade("Idle")
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.isIdleLocked()
}

// A Hold keeps its Scheduler from counting as idle until Release: neither
// Wait nor the idle function (see WithIdleFunc) sees it idle meanwhile. It
// holds that Scheduler alone: a Hold on a child keeps none of its targets
// from counting as idle. A
// caller that removes an item (TryDequeue, DequeueAll, CloseNow) and then
// counts it, or completes a handle, holds the Scheduler across both, so
// that whoever watches for idleness sees the counts that the removal
// calls for. A Hold must be released exactly once. The zero Hold is not
// usable: Release panics.
type Hold struct{ s *Scheduler }

// Hold returns a Hold on s.
func (s *Scheduler) Hold() Hold {
	s.mustBeMade("Hold")
	s.mu.Lock()
	s.books.holds++
	s.books.busy = true
	s.mu.Unlock()
	return Hold{s}
}

// Release ends the hold; s may then go idle, and its idle function run, on
// the calling goroutine.
func (h Hold) Release() {
	s := h.s
	if s == nil {
		panic("scheduler: Hold.Release of the zero Hold; Scheduler.Hold makes one")
	}
	s.mu.Lock()
	if s.books.holds == 0 {
		s.mu.Unlock()
		panic("scheduler: Hold.Release of a hold released already")
	}
	s.books.holds--
	s.unlock()
}
