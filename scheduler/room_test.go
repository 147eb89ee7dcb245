package scheduler_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

func TestMaxPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log testkit.Log
		s := scheduler.New(1, scheduler.WithMaxPending(2))
		a, b, c := newGate("a", &log), newGate("b", &log), newGate("c", &log)
		s.Enqueue(a)
		synctest.Wait() // a runs and no longer counts against the bound
		s.Enqueue(b)
		s.Enqueue(c)
		if _, err := s.Enqueue(scheduler.Func(func() {})); err != scheduler.ErrFull {
			t.Errorf("Enqueue on a full list = %v; want ErrFull", err)
		}

		// EnqueueContext waits for room, until its context is done.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		if _, err := s.EnqueueContext(ctx, scheduler.Func(func() {})); err != context.DeadlineExceeded {
			t.Errorf("EnqueueContext = %v; want DeadlineExceeded", err)
		}
		if waited := time.Since(start); waited != time.Second {
			t.Errorf("EnqueueContext gave up after %v; want 1s", waited)
		}

		// Room made by a finishing item goes to the caller that waited
		// longest.
		d := newGate("d", &log)
		result := make(chan error)
		go func() {
			_, err := s.EnqueueContext(t.Context(), d)
			result <- err
		}()
		synctest.Wait()
		go func() {
			_, err := s.EnqueueContext(t.Context(), scheduler.Func(func() {}))
			result <- err
		}()
		synctest.Wait()
		close(a.release) // b starts, making room
		if err := <-result; err != nil {
			t.Errorf("EnqueueContext after room was made = %v; want nil", err)
		}
		synctest.Wait()
		if got := s.Stats().Pending; got != 2 {
			t.Errorf("Pending = %d with room for one more made; want 2", got)
		}

		// Close wakes the callers still waiting: the second one.
		s.Close()
		if err := <-result; err != scheduler.ErrClosed {
			t.Errorf("EnqueueContext waiting at Close = %v; want ErrClosed", err)
		}
		if _, err := s.Enqueue(scheduler.Func(func() {})); err != scheduler.ErrClosed {
			t.Errorf("Enqueue on a closed, full list = %v; want ErrClosed", err)
		}
		release(b, c, d)
		synctest.Wait()
		expect(t, "queued items run after Close", log.Take(), "a", "b", "c", "d")
	})
}

func TestReserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(1, scheduler.WithMaxPending(2))
		var log testkit.Log
		a := newGate("a", &log)
		s.Enqueue(a)
		synctest.Wait()
		r1, err := s.Reserve()
		if err != nil {
			t.Fatalf("Reserve = %v", err)
		}
		r2, err := s.ReserveContext(t.Context())
		if err != nil {
			t.Fatalf("ReserveContext = %v", err)
		}
		if _, err := s.Reserve(); err != scheduler.ErrFull {
			t.Errorf("Reserve with the list full of reservations = %v; want ErrFull", err)
		}
		if _, err := s.Enqueue(scheduler.Func(func() {})); err != scheduler.ErrFull {
			t.Errorf("Enqueue with the list full of reservations = %v; want ErrFull", err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := s.ReserveContext(ctx); err != context.DeadlineExceeded {
			t.Errorf("ReserveContext with the list full = %v; want DeadlineExceeded", err)
		}
		if !r2.Cancel() {
			t.Error("Cancel of an unused reservation = false")
		}
		if r2.Cancel() {
			t.Error("second Cancel = true; the room was given back twice")
		}
		if r3, err := s.Reserve(); err != nil {
			t.Errorf("Reserve after a Cancel = %v; want the room given back", err)
		} else {
			r3.Cancel()
		}
		const misuse = "scheduler: Reservation.Enqueue of a reservation already used or canceled"
		if got := testkit.PanicMessage(func() { r2.Enqueue(scheduler.Func(func() {})) }); got != misuse {
			t.Errorf("Enqueue on a canceled reservation panicked with %q; want %q", got, misuse)
		}
		s.Close()
		if _, err := s.Reserve(); err != scheduler.ErrClosed {
			t.Errorf("Reserve after Close = %v; want ErrClosed", err)
		}
		// A reservation taken before Close is honoured after it, once.
		b := newGate("b", &log)
		r1.Enqueue(b)
		if r1.Cancel() {
			t.Error("Cancel after Enqueue = true")
		}
		if got := testkit.PanicMessage(func() { r1.Enqueue(scheduler.Func(func() {})) }); got != misuse {
			t.Errorf("second Enqueue on a reservation panicked with %q; want %q", got, misuse)
		}
		release(a, b)
		mustWait(t, s)
		expect(t, "in the end", log.Take(), "a", "b")
	})
}

// TestReservationConcurrentUse: goroutines that race to use or give back
// one reservation find that exactly one of them did, and the room is given
// back or used once.
func TestReservationConcurrentUse(t *testing.T) {
	s := scheduler.New(1, scheduler.WithMaxPending(1))
	for range 100 {
		r, err := s.Reserve()
		if err != nil {
			t.Fatal(err)
		}
		var used atomic.Int32
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				if g == 0 {
					defer func() {
						if recover() == nil {
							used.Add(1) // Enqueue went through
						}
					}()
					r.Enqueue(scheduler.Func(func() {}))
					return
				}
				if r.Cancel() {
					used.Add(1)
				}
			})
		}
		wg.Wait()
		if got := used.Load(); got != 1 {
			t.Fatalf("%d of the racing calls used or gave back the reservation; want 1", got)
		}
		mustWait(t, s)
	}
}
