package scheduler_test

import (
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
