package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// gate is a Task that records its start in a log and then blocks until
// released.
type gate struct {
	name    string
	log     *testkit.Log
	release chan struct{}
}

func newGate(name string, log *testkit.Log) *gate {
	return &gate{name: name, log: log, release: make(chan struct{})}
}

func (g *gate) Run(scheduler.Slot) {
	g.log.Add(g.name)
	<-g.release
}

// slotFunc is a Task that receives its Slot.
type slotFunc func(scheduler.Slot)

func (f slotFunc) Run(sl scheduler.Slot) { f(sl) }

func TestNewPanicsOnBadLimit(t *testing.T) {
	for _, n := range []int{0, -1} {
		got := testkit.PanicMessage(func() { scheduler.New(n) })
		want := fmt.Sprintf("scheduler: New(%d): limit must be positive", n)
		if got != want {
			t.Errorf("New(%d) panicked with %q; want %q", n, got, want)
		}
	}
	got := testkit.PanicMessage(func() { scheduler.WithMaxPending(0) })
	if want := "scheduler: WithMaxPending(0): bound must be positive"; got != want {
		t.Errorf("WithMaxPending(0) panicked with %q; want %q", got, want)
	}
}

// TestZeroSchedulerPanics: every method of the zero Scheduler panics with a
// message that names the call and New, rather than accept items it would
// never run (it used to queue them and run none).
func TestZeroSchedulerPanics(t *testing.T) {
	var s scheduler.Scheduler
	calls := map[string]func(){
		"Enqueue":        func() { s.Enqueue(scheduler.Func(func() {})) },
		"EnqueueContext": func() { s.EnqueueContext(context.Background(), scheduler.Func(func() {})) },
		"TryEnqueue":     func() { s.TryEnqueue(scheduler.Func(func() {})) },
		"TryRun":         func() { s.TryRun(scheduler.Slot{}, func(scheduler.Slot) {}) },
		"Reserve":        func() { s.Reserve() },
		"ReserveContext": func() { s.ReserveContext(context.Background()) },
		"TryDequeue":     func() { s.TryDequeue(1) },
		"DequeueAll":     func() { s.DequeueAll() },
		"CloseNow":       func() { s.CloseNow() },
		"Close":          func() { s.Close() },
		"Closed":         func() { s.Closed() },
		"Wait":           func() { s.Wait(context.Background()) },
		"Stats":          func() { s.Stats() },
		"Limit":          func() { s.Limit() },
		"Suspend":        func() { s.Suspend() },
		"Resume":         func() { s.Resume() },
		"SetLimit":       func() { s.SetLimit(2) },
	}
	for call, f := range calls {
		want := "scheduler: " + call + " on a zero Scheduler; make one with New"
		if got := testkit.PanicMessage(f); got != want {
			t.Errorf("%s on the zero Scheduler panicked with %q; want %q", call, got, want)
		}
	}
}

// TestSerialHappensBefore has every item of a serial scheduler update a
// plain variable: the race detector reports any item that does not see the
// writes of the one before it.
func TestSerialHappensBefore(t *testing.T) {
	s := scheduler.New(1)
	n := 0
	for i := range 1000 {
		if _, err := s.Enqueue(scheduler.Func(func() { n++ })); err != nil {
			t.Fatal(err)
		}
		if i%7 == 0 {
			runtime.Gosched() // let the worker drain and exit now and then
		}
	}
	if err := s.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n != 1000 {
		t.Errorf("n = %d; want 1000", n)
	}
}

func TestTryDequeue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log testkit.Log
		s := scheduler.New(1)
		a, b, c := newGate("a", &log), newGate("b", &log), newGate("c", &log)
		idA, _ := s.Enqueue(a)
		idB, _ := s.Enqueue(b)
		idC, _ := s.Enqueue(c)
		synctest.Wait()
		if s.TryDequeue(idA) {
			t.Error("TryDequeue of a running item reported true")
		}
		if !s.TryDequeue(idB) {
			t.Error("TryDequeue of a queued item reported false")
		}
		if s.TryDequeue(idB) {
			t.Error("second TryDequeue of an item reported true")
		}
		if s.TryDequeue(0) || s.TryDequeue(idC+1) {
			t.Error("TryDequeue of an unknown ID reported true")
		}
		if got := s.Stats().Pending; got != 1 {
			t.Errorf("Pending() = %d; want 1", got)
		}
		close(a.release)
		close(c.release)
		synctest.Wait()
		if got, want := log.Take(), []string{"a", "c"}; !slices.Equal(got, want) {
			t.Errorf("ran %v; want %v (b was dequeued)", got, want)
		}
	})
}

// TryDequeue racing with the start of an item: exactly one of the two wins.
func TestTryDequeueRace(t *testing.T) {
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

func TestCloseAndDequeueAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log testkit.Log
		s := scheduler.New(1)
		a, b, c := newGate("a", &log), newGate("b", &log), newGate("c", &log)
		s.Enqueue(a)
		s.Enqueue(b)
		s.Enqueue(scheduler.Barrier(c))
		synctest.Wait()
		s.Close()
		s.Close() // idempotent
		if _, err := s.Enqueue(scheduler.Func(func() {})); err != scheduler.ErrClosed {
			t.Errorf("Enqueue after Close = %v; want ErrClosed", err)
		}
		got := s.DequeueAll()
		if len(got) != 2 || got[0] != b || got[1] != c {
			t.Errorf("DequeueAll() = %v; want [b c] without barrier marks", got)
		}
		close(a.release)
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := log.Take(); !slices.Equal(got, []string{"a"}) {
			t.Errorf("ran %v; want [a]", got)
		}
	})
}

// CloseNow racing with enqueuers: each accepted item either ran or was returned,
// never both, never neither; items after it are refused; Goexit and panics in
// items lose nothing.
func TestCloseNowRace(t *testing.T) {
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

// TestCloseClosesSubtree: a closed target refuses new items in its
// subtree, and the items accepted before still run.
func TestCloseClosesSubtree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(1)
		child := scheduler.New(1, scheduler.WithTarget(root))
		grandchild := scheduler.New(1, scheduler.WithTarget(child))
		var ran atomic.Int32
		gate := make(chan struct{})
		grandchild.Enqueue(scheduler.Func(func() { <-gate; ran.Add(1) }))
		grandchild.Enqueue(scheduler.Func(func() { ran.Add(1) }))
		res, err := grandchild.Reserve()
		if err != nil {
			t.Fatal(err)
		}
		root.Close()
		if !grandchild.Closed() || !child.Closed() {
			t.Error("the subtree of a closed target does not report Closed")
		}
		if _, err := grandchild.Enqueue(scheduler.Func(func() {})); err != scheduler.ErrClosed {
			t.Errorf("Enqueue on a grandchild of a closed target = %v; want ErrClosed", err)
		}
		if child.TryRun(scheduler.Slot{}, func(scheduler.Slot) {}) {
			t.Error("TryRun on a child of a closed target = true")
		}
		done := make(chan error)
		go func() { done <- root.Wait(context.Background()) }()
		close(gate)
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Wait on the target returned while a reservation below it was pending")
		default:
		}
		res.Enqueue(scheduler.Func(func() { ran.Add(1) }))
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := ran.Load(); got != 3 {
			t.Errorf("%d items ran; want 3, all accepted before Close", got)
		}
	})
}

func TestWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(2)
		if err := s.Wait(t.Context()); err != nil {
			t.Errorf("Wait on an idle scheduler = %v; want nil", err)
		}
		var log testkit.Log
		a := newGate("a", &log)
		s.Enqueue(a)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if err := s.Wait(ctx); err != context.DeadlineExceeded {
			t.Errorf("Wait with a busy item = %v; want DeadlineExceeded", err)
		}
		done := make(chan error)
		go func() { done <- s.Wait(t.Context()) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Wait returned %v while an item ran", err)
		default:
		}
		close(a.release)
		if err := <-done; err != nil {
			t.Errorf("Wait = %v; want nil", err)
		}
	})
}

// drainEvery is how many items the throughput benchmarks queue before waiting
// for them to run, so that they measure running items, not only queuing them,
// and keep the backlog small.
const drainEvery = 1024

// BenchmarkEnqueue measures queuing a tiny item and running it, against a
// buffered channel feeding a fixed set of workers (the floor for a hand-off
// between goroutines).
func BenchmarkEnqueue(b *testing.B) {
	for _, limit := range []int{1, 4} {
		b.Run(fmt.Sprintf("impl=scheduler/limit=%d", limit), func(b *testing.B) {
			b.ReportAllocs()
			s := scheduler.New(limit)
			var n atomic.Int64
			item := scheduler.Func(func() { n.Add(1) })
			for i := 1; b.Loop(); i++ {
				s.Enqueue(item)
				if i%drainEvery == 0 {
					s.Wait(context.Background())
				}
			}
		})
		b.Run(fmt.Sprintf("impl=channel/limit=%d", limit), func(b *testing.B) {
			b.ReportAllocs()
			ch := make(chan func(), 1024)
			var wg sync.WaitGroup
			for range limit {
				wg.Go(func() {
					for f := range ch {
						f()
					}
				})
			}
			var n atomic.Int64
			item := func() { n.Add(1) }
			for b.Loop() {
				ch <- item // a full buffer holds the loop back to the workers' pace
			}
			close(ch)
			wg.Wait()
		})
	}
}
