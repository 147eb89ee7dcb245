package scheduler_test

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// TestBatchItemsStayQueued: the items a serial worker takes at once can
// still be removed one by one until they start, and Stats counts them as
// pending.
func TestBatchItemsStayQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(1)
		first, gate := make(chan struct{}), make(chan struct{})
		s.Enqueue(scheduler.Func(func() { <-first }))
		synctest.Wait()
		// The worker takes these at once when the first item returns: the
		// gate, then items the gate holds back.
		s.Enqueue(scheduler.Func(func() { <-gate }))
		var ran []int
		var ids []scheduler.ID
		for i := range 200 {
			id, _ := s.Enqueue(scheduler.Func(func() { ran = append(ran, i) }))
			ids = append(ids, id)
		}
		close(first)
		synctest.Wait()
		if !s.TryDequeue(ids[5]) || s.TryDequeue(ids[5]) {
			t.Error("TryDequeue of an item of the batch that has not started: want true once")
		}
		if st := s.Stats(); st.Pending != 199 || st.Running != 1 || st.Completed != 1 {
			t.Errorf("Stats = %+v; want 199 pending, 1 running, 1 completed", st)
		}
		close(gate)
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(ran, 5) || len(ran) != 199 || !slices.IsSorted(ran) {
			t.Errorf("ran %d items, sorted %v, 5 among them %v; want the 199 left, in order", len(ran), slices.IsSorted(ran), slices.Contains(ran, 5))
		}
		if st := s.Stats(); st.Completed != 201 {
			t.Errorf("Completed = %d; want 201", st.Completed)
		}
	})
}

// TestBatchDequeueAll: DequeueAll takes the queued items of a running batch
// first, then the list's, in order; the batch's worker runs none of them.
func TestBatchDequeueAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(1)
		gate, started := make(chan struct{}), make(chan struct{})
		s.Enqueue(scheduler.Func(func() {}))
		s.Enqueue(scheduler.Func(func() { close(started); <-gate })) // in the batch: holds the rest
		var ran atomic.Int32
		for range 300 {
			s.Enqueue(item(1))
		}
		<-started
		ts := s.DequeueAll()
		if len(ts) != 300 {
			t.Errorf("DequeueAll took %d items; want the 300 queued, batch and list", len(ts))
		}
		close(gate)
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		if ran.Load() != 0 {
			t.Errorf("%d dequeued items ran", ran.Load())
		}
	})
}

// TestBatchSuspendAndSetLimit: Suspend stops a batch before its next item,
// and the rest starts after Resume, in order; raising the limit lets a second
// worker take from the batch.
func TestBatchSuspendAndSetLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s0 := scheduler.New(1)
		var ran []int
		var mu sync.Mutex
		s0.Enqueue(scheduler.Func(func() {}))
		for i := range 100 {
			s0.Enqueue(scheduler.Func(func() {
				mu.Lock()
				ran = append(ran, i)
				n := len(ran)
				mu.Unlock()
				if n == 10 {
					s0.Suspend() // from inside the batch: it stops after this item
				}
			}))
		}
		synctest.Wait()
		mu.Lock()
		if len(ran) != 10 {
			t.Errorf("%d items ran by the time a Suspend from the 10th returned; want 10", len(ran))
		}
		mu.Unlock()
		if st := s0.Stats(); st.Pending != 90 {
			t.Errorf("Pending = %d while suspended; want 90", st.Pending)
		}
		s0.Resume()
		if err := s0.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		if !slices.IsSorted(ran) || len(ran) != 100 {
			t.Errorf("ran %d items, sorted %v; want 100 in order", len(ran), slices.IsSorted(ran))
		}

		s := scheduler.New(1)
		hold := make(chan struct{})
		var now, peak atomic.Int32
		enter := func() {
			n := now.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
		}
		s.Enqueue(scheduler.Func(func() {}))
		for range 50 {
			s.Enqueue(scheduler.Func(func() { enter(); <-hold; now.Add(-1) }))
		}
		synctest.Wait()
		s.SetLimit(3)
		synctest.Wait()
		if n := now.Load(); n != 3 {
			t.Errorf("%d items run at once after SetLimit(3) during a batch; want 3", n)
		}
		close(hold)
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestBatchPanicAndGoexit: a panic in a batch goes to the handler and the
// batch goes on; a Goexit ends the worker, and a new one runs the rest.
func TestBatchPanicAndGoexit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var panics atomic.Int32
		s := scheduler.New(1, scheduler.WithPanicHandler(func(*scheduler.PanicError) { panics.Add(1) }))
		var ran atomic.Int32
		for i := range 200 {
			s.Enqueue(scheduler.Func(func() {
				ran.Add(1)
				switch i % 50 {
				case 10:
					panic("batch")
				case 30:
					runtime.Goexit()
				}
			}))
		}
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		if ran.Load() != 200 || panics.Load() != 4 {
			t.Errorf("ran %d, panics %d; want 200, 4", ran.Load(), panics.Load())
		}
		if st := s.Stats(); st.Completed != 200 || st.Pending != 0 || st.Running != 0 {
			t.Errorf("Stats = %+v; want 200 completed", st)
		}
		synctest.Wait()
		if s.Active() != 0 {
			t.Errorf("%d slots held once idle", s.Active())
		}
	})
}

// TestRemovalsAgainstBatchWorkers: while workers take items off a batch
// without the lock, submitters cancel items with TryDequeue and one of them
// drops the rest with Close and DequeueAll. Each submitter's items must keep
// their order: none of them starts while one queued before it is dropped.
// A drain that removed from the front, or a take that claimed its place
// before the item, let a worker start an item behind ones DequeueAll
// dropped.
func TestRemovalsAgainstBatchWorkers(t *testing.T) {
	rounds := 2000
	if testing.Short() || raceEnabled {
		rounds = 300
	}
	for _, limit := range []int{1, 3} {
		for round := range rounds {
			removalsRound(t, limit, round)
		}
	}
}

func removalsRound(t *testing.T, limit, round int) {
	const subs, per = 3, 12
	s := scheduler.New(limit)
	var ran [subs * per]atomic.Bool
	var removed [subs * per]bool // by TryDequeue, or refused after Close
	var wg sync.WaitGroup
	for sub := range subs {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(round), uint64(sub)))
			for i := range per {
				k := sub*per + i
				spin := r.IntN(3) * 100
				id, err := s.Enqueue(scheduler.Func(func() {
					ran[k].Store(true)
					for range spin {
						runtime.Gosched()
					}
				}))
				switch {
				case err != nil:
					removed[k] = true
				case r.IntN(4) == 0:
					removed[k] = s.TryDequeue(id)
				}
				if sub == 0 && i == per/2 {
					s.Close()
					s.DequeueAll()
				}
			}
		})
	}
	wg.Wait()
	if err := s.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	for sub := range subs {
		dropped := -1 // the first item of sub that DequeueAll dropped
		for i := range per {
			k := sub*per + i
			switch {
			case ran[k].Load() && dropped >= 0:
				t.Fatalf("limit %d, round %d: item %d of submitter %d ran, and item %d, queued before it, was dropped",
					limit, round, i, sub, dropped)
			case !ran[k].Load() && !removed[k] && dropped < 0:
				dropped = i
			}
		}
	}
}

// TestSuspendStopsBatchWorkers: once Suspend returns, no worker takes
// another item off a batch, not even one that looked at the flag just before
// Suspend set it: the pending count read when Suspend returns holds until
// Resume, once the items running then have ended.
func TestSuspendStopsBatchWorkers(t *testing.T) {
	rounds := 2000
	if testing.Short() || raceEnabled {
		rounds = 200
	}
	for _, limit := range []int{1, 3} {
		for round := range rounds {
			s := scheduler.New(limit)
			for range 200 {
				s.Enqueue(scheduler.Func(func() {}))
			}
			for range round % 50 {
				runtime.Gosched()
			}
			s.Suspend()
			pending := s.Stats().Pending
			for s.Stats().Running != 0 {
				runtime.Gosched()
			}
			if st := s.Stats(); st.Pending != pending {
				t.Fatalf("limit %d, round %d: %d items pending when Suspend returned, %d once those running ended",
					limit, round, pending, st.Pending)
			}
			s.Resume()
			if err := s.Wait(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
}
