package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sync/semaphore"
)

// A Task is an item of work. Run is called at most once per time the task is
// queued.
type Task interface {
	Run()
}

// Func adapts an ordinary function to a Task.
type Func func()

// Run calls f.
func (f Func) Run() { f() }

// An ID names an item while it is queued. IDs increase with each Enqueue and
// are never reused by a Scheduler; the zero ID names no item.
type ID uint64

var (
	// ErrClosed is returned by Enqueue and EnqueueContext after Close.
	ErrClosed = errors.New("scheduler: closed")
	// ErrFull is returned by Enqueue when the list holds as many items as
	// WithMaxPending allows.
	ErrFull = errors.New("scheduler: list full")
)

// barrier marks a task enqueued through Barrier.
type barrier struct{ Task }

// Barrier returns t marked as a barrier, to be given to Enqueue or
// EnqueueContext. A barrier starts only when every item queued before it has
// finished, and nothing queued after it starts until it has finished, so it
// runs alone even in a Scheduler with a limit above one (GCD's barrier blocks,
// .NET's ConcurrentExclusiveSchedulerPair). Marking costs one allocation.
func Barrier(t Task) Task {
	if t == nil {
		panic("scheduler: Barrier(nil)")
	}
	return &barrier{t}
}

// A Scheduler runs queued items in FIFO order, at most Limit at a time, each
// on a worker goroutine. It is the Go counterpart of .NET's
// LimitedConcurrencyLevelTaskScheduler.
//
// Workers start on demand, while fewer than Limit run and items wait, and a
// worker exits as soon as it finds the list empty: an idle Scheduler holds no
// goroutine and needs no Close to be collected.
//
// A Scheduler is safe for use by multiple goroutines. It must not be copied
// after first use. With a limit of one, the return of each item's Run happens
// before the start of the next item's Run.
type Scheduler struct {
	limit   int
	onPanic func(*PanicError)
	room    *semaphore.Weighted // nil when unbounded; holds a permit per queued item

	mu sync.Mutex // guards the fields below
	// Every decision to start or stop a worker is taken under mu together
	// with the look at the list it depends on. That is what rules out a lost
	// wake-up: an item pushed while the last worker leaves either is seen by
	// that worker, or sees the worker gone and starts a new one.
	list      list
	active    int    // slots in use: worker goroutines plus TryRun callers; at most limit
	running   int    // items running on a slot
	nested    int    // items running through RunInline, on their caller's slot
	exclusive bool   // a barrier is running: nothing else may start
	completed uint64 // items whose Run has returned or panicked
	closed    bool
	idle      chan struct{}            // made by Wait; closed and cleared once nothing is queued or running
	waiters   map[*roomWaiter]struct{} // EnqueueContext calls waiting for room; Close wakes them
	holders   []uintptr                // the goroutine (see curg) holding each slot index; 0 if free
	free      []int                    // free indices of holders
}

// roomWaiter is an EnqueueContext call blocked on a full list.
type roomWaiter struct {
	cancel context.CancelCauseFunc
}

// New returns a Scheduler that runs at most limit items at once. A limit of
// one makes a serial scheduler. New panics if limit < 1.
func New(limit int, opts ...Option) *Scheduler {
	if limit < 1 {
		panic(fmt.Sprintf("scheduler: New(%d): limit must be positive", limit))
	}
	o := buildOptions(opts)
	s := &Scheduler{limit: limit, onPanic: o.onPanic}
	if o.maxPending > 0 {
		s.room = semaphore.NewWeighted(int64(o.maxPending))
	}
	return s
}

// Limit returns the most items s runs at once.
func (s *Scheduler) Limit() int { return s.limit }

// Pending returns the number of items queued and not yet started.
func (s *Scheduler) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.list.live
}

// Running returns the number of items running now, those run by TryRun and
// RunInline included.
func (s *Scheduler) Running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running + s.nested
}

// Completed returns the number of items whose Run has returned or panicked.
func (s *Scheduler) Completed() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.completed
}

// Enqueue adds t at the end of the list and returns its ID. It never blocks:
// if s was built WithMaxPending and the list is full, it returns ErrFull; after
// Close it returns ErrClosed. Enqueue costs no allocation beyond the list's
// occasional growth.
func (s *Scheduler) Enqueue(t Task) (ID, error) {
	if t == nil {
		panic("scheduler: Enqueue(nil)")
	}
	if s.room != nil && !s.room.TryAcquire(1) {
		if s.isClosed() {
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
	if t == nil {
		panic("scheduler: EnqueueContext(nil)")
	}
	if s.room != nil && !s.room.TryAcquire(1) {
		if err := s.waitForRoom(ctx); err != nil {
			return 0, err
		}
	}
	return s.push(t)
}

// waitForRoom acquires a permit of s.room, giving up when ctx is done or s
// is closed.
func (s *Scheduler) waitForRoom(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := &roomWaiter{cancel: cancel}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if s.waiters == nil {
		s.waiters = make(map[*roomWaiter]struct{})
	}
	s.waiters[w] = struct{}{}
	s.mu.Unlock()

	err := s.room.Acquire(ctx, 1)

	s.mu.Lock()
	delete(s.waiters, w)
	s.mu.Unlock()
	if err != nil && context.Cause(ctx) == ErrClosed {
		return ErrClosed
	}
	return err
}

// push adds t, for which the caller holds a permit of s.room if s is bounded.
func (s *Scheduler) push(t Task) (ID, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.releaseRoom(1)
		return 0, ErrClosed
	}
	id := s.list.push(t)
	s.spawnLocked()
	s.mu.Unlock()
	return id, nil
}

// Reserve takes room in the list for one item that will be queued later with
// EnqueueReserved, for callers that accept an item now and queue it later (a
// delayed task, say). The room counts against WithMaxPending until
// EnqueueReserved uses it or Unreserve gives it back. Reserve never blocks:
// it returns ErrFull if the list is full and ErrClosed after Close. For an
// unbounded Scheduler it only checks that s is open.
func (s *Scheduler) Reserve() error {
	if s.room != nil && !s.room.TryAcquire(1) {
		if s.isClosed() {
			return ErrClosed
		}
		return ErrFull
	}
	return s.checkOpen()
}

// ReserveContext is Reserve that waits for room as EnqueueContext does.
func (s *Scheduler) ReserveContext(ctx context.Context) error {
	if s.room != nil && !s.room.TryAcquire(1) {
		if err := s.waitForRoom(ctx); err != nil {
			return err
		}
	}
	return s.checkOpen()
}

// checkOpen returns the room just taken and ErrClosed if s is closed.
func (s *Scheduler) checkOpen() error {
	if s.isClosed() {
		s.releaseRoom(1)
		return ErrClosed
	}
	return nil
}

// Unreserve gives back room taken by Reserve or ReserveContext and not used.
func (s *Scheduler) Unreserve() { s.releaseRoom(1) }

// EnqueueReserved adds t at the end of the list on room taken earlier by
// Reserve or ReserveContext, and returns its ID. It never blocks and never
// fails, even after Close: the item was accepted when the room was taken.
// Each reservation must be used or given back exactly once.
func (s *Scheduler) EnqueueReserved(t Task) ID {
	if t == nil {
		panic("scheduler: EnqueueReserved(nil)")
	}
	s.mu.Lock()
	id := s.list.push(t)
	s.spawnLocked()
	s.mu.Unlock()
	return id
}

// spawnLocked starts the workers the list needs: one for each item that may
// start now and that no live worker will take, within the limit. Workers
// between two items count as takers, since each is about to pop one.
func (s *Scheduler) spawnLocked() {
	if s.active >= s.limit {
		return
	}
	want := s.list.live
	if s.exclusive {
		want = 0
	} else if _, ok := s.list.front().(*barrier); ok {
		want = 0
		if s.running == 0 {
			want = 1 // the barrier may start; it runs alone
		}
	}
	want -= s.active - s.running
	for ; want > 0 && s.active < s.limit; want-- {
		s.active++
		go s.work(false)
	}
}

// work is the body of a worker goroutine. It owns one slot, runs items until
// the list has none it may start, then gives the slot back and returns. If
// ran is true, the worker first finishes the accounting of an item run by the
// worker it replaces (see run).
func (s *Scheduler) work(ran bool) {
	slot := -1 // index in s.holders, once the worker has an item
	for {
		t := s.next(ran, &slot)
		if t == nil {
			return
		}
		s.run(t, slot)
		ran = true
	}
}

// next records the end of the item the worker ran, if ran, and takes the next
// item. It returns nil, having released the worker's slot, when there is none
// to take.
func (s *Scheduler) next(ran bool, slot *int) Task {
	s.mu.Lock()
	if ran {
		s.finishLocked()
	}
	t := s.takeLocked()
	if t == nil {
		s.active--
		if *slot >= 0 {
			s.unholdLocked(*slot)
		}
		s.notifyIdleLocked()
	} else if *slot < 0 {
		*slot = s.holdLocked(curg())
	}
	s.mu.Unlock()
	if t != nil {
		s.releaseRoom(1)
	}
	return t
}

// takeLocked pops the next item that may start now and counts it as running.
func (s *Scheduler) takeLocked() Task {
	if s.exclusive {
		return nil
	}
	t := s.list.front()
	if t == nil {
		return nil
	}
	if b, ok := t.(*barrier); ok {
		if s.running > 0 {
			return nil // the last item to finish will start the barrier
		}
		s.exclusive = true
		t = b.Task
	}
	s.list.pop()
	s.running++
	return t
}

// finishLocked records the end of an item that ran on a slot.
func (s *Scheduler) finishLocked() {
	s.running--
	s.completed++
	if s.exclusive {
		// The barrier is done: the items behind it may start, and the
		// workers that left while it waited must be replaced.
		s.exclusive = false
		s.spawnLocked()
	}
}

// run runs t on the calling worker, which holds the slot index slot. A panic
// in t goes to the panic handler and the worker carries on. If t calls
// runtime.Goexit the worker cannot carry on, so it hands its slot and the
// accounting of t to a new worker.
func (s *Scheduler) run(t Task, slot int) {
	normal := false
	defer func() {
		if normal {
			return
		}
		if v := recover(); v != nil {
			s.onPanic(NewPanicError(v))
			return
		}
		s.mu.Lock()
		s.unholdLocked(slot)
		s.mu.Unlock()
		go s.work(true)
	}()
	t.Run()
	normal = true
}

// TryRun runs t on the calling goroutine if s could start it at once without
// breaking FIFO order, reporting whether it did. That is the case when
// nothing is queued, a slot is free and no barrier runs (libdispatch runs
// dispatch_sync on an idle queue the same way); a barrier also needs nothing
// to be running. t takes a slot for its run, so the limit holds. A panic in t
// propagates to the caller of TryRun, as a plain call would. After Close,
// TryRun reports false.
func (s *Scheduler) TryRun(t Task) bool {
	if t == nil {
		panic("scheduler: TryRun(nil)")
	}
	if b, ok := t.(*barrier); ok {
		if !s.tryAcquire(true) {
			return false
		}
		t = b.Task
	} else if !s.tryAcquire(false) {
		return false
	}
	defer s.Release()
	t.Run()
	return true
}

// TryAcquire is the first half of TryRun, for callers that run their work
// without wrapping it in a Task: it takes a slot for the calling goroutine
// when TryRun would run an item, and reports whether it did. The caller then
// runs its work as an item of s, counted by Running, and must call Release
// when the work is done, panicking or not.
func (s *Scheduler) TryAcquire() bool { return s.tryAcquire(false) }

func (s *Scheduler) tryAcquire(exclusive bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.exclusive || s.active >= s.limit || s.list.live > 0 || (exclusive && s.running > 0) {
		return false
	}
	s.active++
	s.running++
	s.exclusive = exclusive
	s.holdLocked(curg())
	return true
}

// Release gives back the slot the calling goroutine took with TryAcquire,
// counting its work as completed. Items queued meanwhile start on new
// workers. Release panics if the calling goroutine holds no such slot.
func (s *Scheduler) Release() {
	s.mu.Lock()
	i := s.slotOfLocked(curg())
	if i < 0 {
		s.mu.Unlock()
		panic("scheduler: Release from a goroutine that holds no slot")
	}
	s.unholdLocked(i)
	s.active-- // the slot is free before finishLocked starts new workers
	s.finishLocked()
	s.spawnLocked()
	s.notifyIdleLocked()
	s.mu.Unlock()
}

// RunInline runs t on the calling goroutine, which must be running an item of
// s (the rule of .NET's TryExecuteTaskInline). t then runs on the slot of the
// caller's item, which waits for it, so the limit and, with a limit of one,
// exclusivity hold. A task that waits for a queued item of its own scheduler
// would otherwise deadlock once every slot is taken; it may instead take the
// item out with TryDequeue and run it here. A panic in t propagates to the
// caller of RunInline. RunInline panics if the calling goroutine runs no item
// of s (see Holds).
func (s *Scheduler) RunInline(t Task) {
	if t == nil {
		panic("scheduler: RunInline(nil)")
	}
	if b, ok := t.(*barrier); ok {
		t = b.Task
	}
	s.mu.Lock()
	if s.slotOfLocked(curg()) < 0 {
		s.mu.Unlock()
		panic("scheduler: RunInline from a goroutine that runs no item of this scheduler")
	}
	s.nested++
	s.mu.Unlock()
	defer s.endRunInline()
	t.Run()
}

// Holds reports whether the calling goroutine is running an item of s: as a
// worker, after TryAcquire, or inside TryRun or RunInline. Such a goroutine
// must not wait for an item queued behind its own, which cannot start before
// the caller's ends on a serial scheduler; RunInline runs it instead.
func (s *Scheduler) Holds() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.slotOfLocked(curg()) >= 0
}

// holdLocked records g as the holder of a slot and returns the slot's index.
func (s *Scheduler) holdLocked(g uintptr) int {
	if n := len(s.free); n > 0 {
		i := s.free[n-1]
		s.free = s.free[:n-1]
		s.holders[i] = g
		return i
	}
	s.holders = append(s.holders, g)
	return len(s.holders) - 1
}

func (s *Scheduler) unholdLocked(i int) {
	s.holders[i] = 0
	s.free = append(s.free, i)
}

// slotOfLocked returns the index of the slot g holds, or -1. It scans the
// slots, which are at most the limit, and is used off the hot paths.
func (s *Scheduler) slotOfLocked(g uintptr) int {
	for i, h := range s.holders {
		if h == g {
			return i
		}
	}
	return -1
}

func (s *Scheduler) endRunInline() {
	s.mu.Lock()
	s.nested--
	s.completed++
	s.notifyIdleLocked()
	s.mu.Unlock()
}

// TryDequeue removes the queued item id before it starts, reporting whether
// it did. It reports false if the item has started or was removed already.
func (s *Scheduler) TryDequeue(id ID) bool {
	s.mu.Lock()
	t := s.list.remove(id)
	if t != nil {
		s.spawnLocked() // a barrier that held the head back may be gone
		s.notifyIdleLocked()
	}
	s.mu.Unlock()
	if t == nil {
		return false
	}
	s.releaseRoom(1)
	return true
}

// DequeueAll removes every queued item and returns them, oldest first, with
// barrier marks removed. Items already running go on.
func (s *Scheduler) DequeueAll() []Task {
	s.mu.Lock()
	ts := s.list.drain()
	s.notifyIdleLocked()
	s.mu.Unlock()
	for i, t := range ts {
		if b, ok := t.(*barrier); ok {
			ts[i] = b.Task
		}
	}
	s.releaseRoom(len(ts))
	return ts
}

// Close stops s from accepting items: Enqueue and EnqueueContext return
// ErrClosed from then on, those waiting for room included, and TryRun
// reports false. Items already queued still run. Close is idempotent.
func (s *Scheduler) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for w := range s.waiters {
		w.cancel(ErrClosed)
	}
}

func (s *Scheduler) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Wait blocks until nothing is queued or running, or until ctx is done, in
// which case it returns ctx.Err(). Items queued while Wait waits are waited
// for too. Wait panics if called from an item of s, which would wait for
// itself.
func (s *Scheduler) Wait(ctx context.Context) error {
	s.mu.Lock()
	if s.slotOfLocked(curg()) >= 0 {
		s.mu.Unlock()
		panic("scheduler: Wait called from an item of the scheduler, which would wait for itself")
	}
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
	return s.list.live == 0 && s.running == 0 && s.nested == 0
}

func (s *Scheduler) notifyIdleLocked() {
	if s.idle != nil && s.isIdleLocked() {
		close(s.idle)
		s.idle = nil
	}
}

func (s *Scheduler) releaseRoom(n int) {
	if s.room != nil && n > 0 {
		s.room.Release(int64(n))
	}
}
