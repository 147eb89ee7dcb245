package scheduler_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// A worker of a serial scheduler takes runs of items out of the list under
// one lock (a claim). These tests check that an item of a claim that has not
// started is still queued in every way that shows: it can be removed,
// DequeueAll returns it, Suspend holds it back and SetLimit lets other workers
// start it.

func TestClaimedItemsStayQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(1)
		gate := make(chan struct{})
		var ran atomic.Int32
		s.Enqueue(scheduler.Func(func() { <-gate })) // the head, running
		ids := make([]scheduler.ID, 10)
		for i := range ids {
			ids[i], _ = s.Enqueue(scheduler.Func(func() { ran.Add(1) }))
		}
		synctest.Wait()
		// The worker claimed the run behind the head when it took it.
		if st := s.Stats(); st.Pending != 10 || st.Running != 1 {
			t.Errorf("Stats = %+v; want 10 pending, 1 running", st)
		}
		if !s.TryDequeue(ids[3]) {
			t.Error("TryDequeue of a claimed item that has not started = false")
		}
		if s.TryDequeue(ids[3]) {
			t.Error("second TryDequeue = true")
		}
		s.Suspend()
		close(gate)
		synctest.Wait()
		if got := ran.Load(); got != 0 {
			t.Errorf("%d claimed items ran while suspended", got)
		}
		if st := s.Stats(); st.Pending != 9 {
			t.Errorf("Pending = %d while suspended; want 9", st.Pending)
		}
		s.SetLimit(4)
		s.Resume()
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := ran.Load(); got != 9 {
			t.Errorf("%d items ran; want 9", got)
		}
	})
}

func TestDequeueAllTakesClaimedItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(1)
		gate := make(chan struct{})
		var ran atomic.Int32
		s.Enqueue(scheduler.Func(func() { <-gate }))
		for range 5 {
			s.Enqueue(scheduler.Func(func() { ran.Add(1) }))
		}
		synctest.Wait()
		if got := len(s.DequeueAll()); got != 5 {
			t.Errorf("DequeueAll returned %d items; want the 5 claimed ones", got)
		}
		close(gate)
		s.Wait(t.Context())
		if got := ran.Load(); got != 0 {
			t.Errorf("%d dequeued items ran", got)
		}
	})
}

func TestSetLimitRevokesAClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(1)
		gate := make(chan struct{})
		var started atomic.Int32
		for range 6 {
			s.Enqueue(scheduler.Func(func() { started.Add(1); <-gate }))
		}
		synctest.Wait()
		s.SetLimit(3)
		synctest.Wait()
		if got := started.Load(); got != 3 {
			t.Errorf("%d items started after SetLimit(3); want 3 at once", got)
		}
		close(gate)
		s.Wait(t.Context())
	})
}

func TestGoexitAndPanicInAClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var panics atomic.Int32
		s := scheduler.New(1, scheduler.WithPanicHandler(func(*scheduler.PanicError) { panics.Add(1) }))
		var ran atomic.Int32
		for i := range 40 {
			s.Enqueue(scheduler.Func(func() {
				ran.Add(1)
				switch i % 7 {
				case 3:
					panic("claim")
				case 5:
					runtime.Goexit()
				}
			}))
		}
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := ran.Load(); got != 40 {
			t.Errorf("%d items ran; want 40", got)
		}
		if got := panics.Load(); got != 6 {
			t.Errorf("%d panics; want 6", got)
		}
		if st := s.Stats(); st.Completed != 40 || st.Pending != 0 || st.Running != 0 {
			t.Errorf("Stats = %+v", st)
		}
		if holders, problem := s.Books(); len(holders) != 0 || problem != "" {
			t.Errorf("books after: %v %s", holders, problem)
		}
	})
}

// TestClaimRaces submits items to a serial scheduler while other goroutines
// remove them at random: every item runs or is removed, exactly once, and
// the order of the items that run is their queuing order.
func TestClaimRaces(t *testing.T) {
	const n = 200_000
	s := scheduler.New(1)
	var outcome [n]atomic.Int32 // 1 ran, 2 removed
	var last atomic.Int64
	last.Store(-1)
	var disorder atomic.Int32
	ids := make([]atomic.Uint64, n)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			id, _ := s.Enqueue(scheduler.Func(func() {
				outcome[i].Add(1)
				if prev := last.Swap(int64(i)); prev >= int64(i) {
					disorder.Add(1)
				}
			}))
			ids[i].Store(uint64(id))
		}
	})
	for w := range 3 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range n / 2 {
				i := r.IntN(n)
				if id := ids[i].Load(); id != 0 && s.TryDequeue(scheduler.ID(id)) {
					outcome[i].Add(2)
				}
			}
		})
	}
	wg.Wait()
	s.Wait(context.Background())
	for i := range outcome {
		if o := outcome[i].Load(); o != 1 && o != 2 {
			t.Fatalf("item %d: outcome %d; want ran (1) or removed (2), once", i, o)
		}
	}
	if d := disorder.Load(); d > 0 {
		t.Errorf("%d items ran out of order", d)
	}
}
