package scheduler_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// No lost wake-up: an item queued as the last worker leaves still runs.
func TestOutsideNoLostWakeup(t *testing.T) {
	for _, limit := range []int{1, 2} {
		s := scheduler.New(limit)
		for i := range 20000 {
			done := make(chan struct{})
			if _, err := s.Enqueue(scheduler.Func(func() { close(done) })); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("limit %d: item %d stranded", limit, i)
			}
		}
	}
}

// CloseNow racing with enqueuers: each accepted item either ran or was returned,
// never both, never neither; items after it are refused; Goexit and panics in
// items lose nothing.
func TestOutsideCloseNowRace(t *testing.T) {
	for round := range 50 {
		var panics atomic.Int32
		s := scheduler.New(2, scheduler.WithPanicHandler(func(*scheduler.PanicError) { panics.Add(1) }))
		var accepted, ran atomic.Int64
		var wg sync.WaitGroup
		for g := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 500 {
					var f scheduler.Func
					switch (g + i) % 10 {
					case 0:
						f = func() { ran.Add(1); runtime.Goexit() }
					case 1:
						f = func() { ran.Add(1); panic("x") }
					default:
						f = func() { ran.Add(1) }
					}
					if _, err := s.Enqueue(f); err == nil {
						accepted.Add(1)
					} else if !errors.Is(err, scheduler.ErrClosed) {
						t.Error(err)
						return
					}
				}
			}()
		}
		for range round {
			runtime.Gosched()
		}
		returned := s.CloseNow()
		wg.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if err := s.Wait(ctx); err != nil {
			t.Fatalf("round %d: Wait: %v", round, err)
		}
		cancel()
		if got := ran.Load() + int64(len(returned)); got != accepted.Load() {
			t.Fatalf("round %d: accepted %d, ran %d, CloseNow returned %d", round, accepted.Load(), ran.Load(), len(returned))
		}
		if _, err := s.Enqueue(scheduler.Func(func() {})); !errors.Is(err, scheduler.ErrClosed) {
			t.Fatalf("Enqueue after CloseNow: %v", err)
		}
		if st := s.Stats(); st.Pending != 0 || st.Running != 0 {
			t.Fatalf("round %d: stats %+v", round, st)
		}
	}
}

// TryDequeue racing with the start of an item: exactly one of the two wins.
func TestOutsideTryDequeueRace(t *testing.T) {
	s := scheduler.New(2)
	for range 5000 {
		var ran atomic.Int32
		id, err := s.Enqueue(scheduler.Func(func() { ran.Add(1) }))
		if err != nil {
			t.Fatal(err)
		}
		removed := s.TryDequeue(id)
		if err := s.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if removed == (ran.Load() == 1) || ran.Load() > 1 {
			t.Fatalf("TryDequeue %v, ran %d", removed, ran.Load())
		}
		if s.TryDequeue(id) {
			t.Fatal("second TryDequeue reported true")
		}
	}
}

// Reservations: queuing on one never fails, even after Close; used once.
func TestOutsideReservation(t *testing.T) {
	s := scheduler.New(1, scheduler.WithMaxPending(1))
	r, err := s.Reserve()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(scheduler.Func(func() {})); !errors.Is(err, scheduler.ErrFull) {
		t.Fatalf("Enqueue with the only room reserved: %v", err)
	}
	if _, err := s.Reserve(); !errors.Is(err, scheduler.ErrFull) {
		t.Fatalf("second Reserve: %v", err)
	}
	s.Close()
	ran := make(chan struct{})
	r.Enqueue(scheduler.Func(func() { close(ran) }))
	<-ran
	if r.Cancel() {
		t.Error("Cancel after Enqueue reported true")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("second Enqueue on a used Reservation did not panic")
			}
		}()
		r.Enqueue(scheduler.Func(func() {}))
	}()
	s.Wait(context.Background())
	s2 := scheduler.New(1, scheduler.WithMaxPending(1))
	r2, _ := s2.Reserve()
	if !r2.Cancel() || r2.Cancel() {
		t.Error("Cancel once true, then false")
	}
	if _, err := s2.Enqueue(scheduler.Func(func() {})); err != nil {
		t.Errorf("room not given back by Cancel: %v", err)
	}
	s2.Wait(context.Background())
}

// When Suspend returns no item starts until Resume, under a stream of items:
// once the running ones end, the count of starts stays still.
func TestOutsideSuspendStopsStarts(t *testing.T) {
	s := scheduler.New(2)
	var starts atomic.Int64
	var bad int
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			s.Enqueue(scheduler.Func(func() { starts.Add(1) }))
			runtime.Gosched()
		}
	}()
	for range 1000 {
		s.Suspend()
		for s.Stats().Running != 0 {
			runtime.Gosched()
		}
		before := starts.Load()
		for range 5 {
			runtime.Gosched()
		}
		if starts.Load() != before {
			bad++
		}
		s.Resume()
	}
	close(stop)
	wg.Wait()
	s.Wait(context.Background())
	if bad != 0 {
		t.Fatalf("items started while suspended in %d of 1000 rounds", bad)
	}
}
