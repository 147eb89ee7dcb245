package scheduler

import (
	"context"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// room bounds the list of a Scheduler made WithMaxPending: a permit of sem
// for each item queued, or reserved, and not started.
//
// Callers that wait for room wait in sem, which serves them in order; Close
// wakes them through the semaphore's own cancellation, by canceling closed,
// to which each waiter's context is tied. So room needs no lock or waiter
// list of its own.
type room struct {
	sem    *semaphore.Weighted
	closed context.Context // canceled, with cause ErrClosed, by Close
	cancel context.CancelCauseFunc
}

func newRoom(n int) *room {
	r := &room{sem: semaphore.NewWeighted(int64(n))}
	r.closed, r.cancel = context.WithCancelCause(context.Background())
	return r
}

// wait takes a permit, waiting until ctx is done or the Scheduler is closed.
func (r *room) wait(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(r.closed, func() { cancel(ErrClosed) })
	defer stop()
	if err := r.sem.Acquire(ctx, 1); err != nil {
		if context.Cause(ctx) == ErrClosed {
			return ErrClosed
		}
		return err
	}
	return nil
}

// close wakes the callers waiting for room, and refuses those to come, with
// ErrClosed. A nil room has none.
func (r *room) close() {
	if r != nil {
		r.cancel(ErrClosed)
	}
}

// release gives back n permits. A nil room, that of an unbounded Scheduler,
// has none to give.
func (r *room) release(n int) {
	if r != nil && n > 0 {
		r.sem.Release(int64(n))
	}
}

// A Reservation is room for one item in a Scheduler's list, taken now for an
// item that will be queued later, such as a delayed task: once taken, queuing
// the item never blocks and never fails, even after Close. A Reservation must
// be used exactly once, by Enqueue, or given back with Cancel. Only Reserve
// and ReserveContext make one: the methods of the zero Reservation panic.
//
// A Reservation is safe for use by multiple goroutines.
type Reservation struct {
	s    *Scheduler
	used atomic.Bool
}

// Reserve takes room for one item, for a Scheduler made WithMaxPending; for
// an unbounded Scheduler it only checks that it is open. It never blocks: it
// returns ErrFull if the list is full and ErrClosed after Close.
func (s *Scheduler) Reserve() (*Reservation, error) {
	s.mustBeMade("Reserve")
	if r := s.cfg.room; r != nil && !r.sem.TryAcquire(1) {
		if s.Closed() {
			return nil, ErrClosed
		}
		return nil, ErrFull
	}
	return s.reservation()
}

// ReserveContext is Reserve that waits for room as EnqueueContext does.
func (s *Scheduler) ReserveContext(ctx context.Context) (*Reservation, error) {
	s.mustBeMade("ReserveContext")
	mustCtx("ReserveContext", ctx)
	if r := s.cfg.room; r != nil && !r.sem.TryAcquire(1) {
		if err := r.wait(ctx); err != nil {
			return nil, err
		}
	}
	return s.reservation()
}

// reservation returns a Reservation on the room just taken, or gives it back
// and returns ErrClosed if s is closed. A reservation counts as work of s and
// of each target above it until it is used or canceled, so that Wait waits
// for it.
func (s *Scheduler) reservation() (*Reservation, error) {
	s.mu.Lock()
	if s.Closed() {
		s.mu.Unlock()
		s.cfg.room.release(1)
		return nil, ErrClosed
	}
	s.books.reserved++
	s.books.busy = true
	s.mu.Unlock()
	for a := s.tree.parent; a != nil; a = a.tree.parent {
		a.mu.Lock()
		a.books.reserved++
		a.books.busy = true
		a.mu.Unlock()
	}
	return &Reservation{s: s}, nil
}

// unreserve ends a reservation of s, from s up, after its item was queued
// (or not, if canceled), so that no Scheduler on the way looks idle between.
func (s *Scheduler) unreserve() {
	for a := s; a != nil; a = a.tree.parent {
		a.mu.Lock()
		a.books.reserved--
		a.unlock()
	}
}

// Enqueue adds t at the end of the list on the reserved room, and returns its
// ID. It never blocks and never fails, even after Close: the item was
// accepted when the room was taken. Enqueue panics if r was used or canceled.
func (r *Reservation) Enqueue(t Task) ID {
	r.mustBeMade("Enqueue")
	mustTask("Reservation.Enqueue", t)
	if r.used.Swap(true) {
		panic("scheduler: Reservation.Enqueue of a reservation already used or canceled")
	}
	s := r.s
	s.mu.Lock()
	id := s.pushLocked(t)
	s.unlock()
	s.unreserve()
	return id
}

// Cancel gives the room back, reporting whether it did: false if r was used
// or canceled already, so that Cancel may be deferred.
func (r *Reservation) Cancel() bool {
	r.mustBeMade("Cancel")
	if r.used.Swap(true) {
		return false
	}
	r.s.cfg.room.release(1)
	r.s.unreserve()
	return true
}

// mustBeMade panics, naming call, on a nil or zero Reservation: only
// Reserve and ReserveContext make one.
func (r *Reservation) mustBeMade(call string) {
	if r == nil || r.s == nil {
		panic("scheduler: Reservation." + call + " of a Reservation not made by Reserve or ReserveContext")
	}
}
