package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
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
	log     *eventLog
	release chan struct{}
}

func newGate(name string, log *eventLog) *gate {
	return &gate{name: name, log: log, release: make(chan struct{})}
}

func (g *gate) Run(scheduler.Slot) {
	g.log.add(g.name)
	<-g.release
}

// eventLog is a list of names, safe for concurrent use.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

// take returns the events logged since the last take.
func (l *eventLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.events
	l.events = nil
	return e
}

// sorted returns the events logged since the last take, sorted: events of
// items that started together may be logged in any order.
func (l *eventLog) sorted() []string {
	e := l.take()
	slices.Sort(e)
	return e
}

// panicMessage runs f and returns the message it panicked with, or "" if it
// did not panic.
func panicMessage(f func()) (msg string) {
	defer func() {
		if v := recover(); v != nil {
			msg = fmt.Sprint(v)
		}
	}()
	f()
	return ""
}

func TestNewPanicsOnBadLimit(t *testing.T) {
	for _, n := range []int{0, -1} {
		got := panicMessage(func() { scheduler.New(n) })
		want := fmt.Sprintf("scheduler: New(%d): limit must be positive", n)
		if got != want {
			t.Errorf("New(%d) panicked with %q; want %q", n, got, want)
		}
	}
	got := panicMessage(func() { scheduler.WithMaxPending(0) })
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

// TestFIFOAndLimit checks that items start in FIFO order, at most limit at a
// time, as earlier ones finish.
func TestFIFOAndLimit(t *testing.T) {
	for _, limit := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var log eventLog
				s := scheduler.New(limit)
				var gates []*gate
				for i := range 7 {
					g := newGate(fmt.Sprint(i), &log)
					gates = append(gates, g)
					if _, err := s.Enqueue(g); err != nil {
						t.Fatalf("Enqueue: %v", err)
					}
				}
				synctest.Wait()
				var want []string
				for i := range limit {
					want = append(want, fmt.Sprint(i))
				}
				if got := log.sorted(); !slices.Equal(got, want) {
					t.Fatalf("started %v; want %v", got, want)
				}
				if got := s.Stats().Running; got != limit {
					t.Errorf("Running() = %d; want %d", got, limit)
				}
				if got := s.Stats().Pending; got != 7-limit {
					t.Errorf("Pending() = %d; want %d", got, 7-limit)
				}
				// Each finish lets exactly the next item in line start.
				for i := range 7 {
					close(gates[i].release)
					synctest.Wait()
					var want []string
					if next := i + limit; next < 7 {
						want = []string{fmt.Sprint(next)}
					}
					if got := log.take(); !slices.Equal(got, want) {
						t.Fatalf("after item %d finished, started %v; want %v", i, got, want)
					}
				}
				if got := s.Active(); got != 0 {
					t.Errorf("idle scheduler has %d active workers; want 0", got)
				}
			})
		})
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
		var log eventLog
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
		if got, want := log.take(), []string{"a", "c"}; !slices.Equal(got, want) {
			t.Errorf("ran %v; want %v (b was dequeued)", got, want)
		}
	})
}

func TestBarrier(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log eventLog
		s := scheduler.New(3)
		a, b := newGate("a", &log), newGate("b", &log)
		bar := newGate("barrier", &log)
		c, d := newGate("c", &log), newGate("d", &log)
		s.Enqueue(a)
		s.Enqueue(b)
		s.Enqueue(scheduler.Barrier(bar))
		s.Enqueue(c)
		s.Enqueue(d)
		synctest.Wait()
		if got, want := log.sorted(), []string{"a", "b"}; !slices.Equal(got, want) {
			t.Fatalf("started %v; want %v: the barrier waits for the items before it", got, want)
		}
		close(a.release)
		synctest.Wait()
		if got := log.take(); len(got) != 0 {
			t.Fatalf("started %v while b still ran; want nothing", got)
		}
		close(b.release)
		synctest.Wait()
		if got, want := log.take(), []string{"barrier"}; !slices.Equal(got, want) {
			t.Fatalf("started %v; want %v alone", got, want)
		}
		if got := s.Stats().Running; got != 1 {
			t.Errorf("Running() = %d during the barrier; want 1", got)
		}
		if s.TryRun(scheduler.Slot{}, func(scheduler.Slot) {}) {
			t.Error("TryRun ran an item beside a barrier")
		}
		close(bar.release)
		synctest.Wait()
		if got, want := log.sorted(), []string{"c", "d"}; !slices.Equal(got, want) {
			t.Fatalf("started %v after the barrier; want %v together", got, want)
		}
		close(c.release)
		close(d.release)
	})
}

func TestBarrierDequeuedUnblocksItemsBehindIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log eventLog
		s := scheduler.New(2)
		a, bar, c := newGate("a", &log), newGate("barrier", &log), newGate("c", &log)
		s.Enqueue(a)
		id, _ := s.Enqueue(scheduler.Barrier(bar))
		s.Enqueue(c)
		synctest.Wait()
		if !s.TryDequeue(id) {
			t.Fatal("TryDequeue(barrier) = false; want true")
		}
		synctest.Wait()
		if got, want := log.sorted(), []string{"a", "c"}; !slices.Equal(got, want) {
			t.Errorf("started %v; want %v once the barrier is gone", got, want)
		}
		close(a.release)
		close(c.release)
	})
}

func TestTryRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log eventLog
		s := scheduler.New(1)
		ran := false
		if !s.TryRun(scheduler.Slot{}, func(scheduler.Slot) { ran = true }) || !ran {
			t.Fatal("TryRun on an idle scheduler did not run the item on the caller")
		}
		a := newGate("a", &log)
		s.Enqueue(a)
		synctest.Wait()
		if s.TryRun(scheduler.Slot{}, func(scheduler.Slot) {}) {
			t.Error("TryRun on a full serial scheduler reported true")
		}
		close(a.release)
		synctest.Wait()

		// An item queued while TryRun runs starts when it returns.
		b := newGate("b", &log)
		s.TryRun(scheduler.Slot{}, func(scheduler.Slot) {
			s.Enqueue(b)
			synctest.Wait()
			if got := log.take(); !slices.Equal(got, []string{"a"}) {
				t.Errorf("started %v while TryRun held the only slot; want [a]", got)
			}
		})
		synctest.Wait()
		if got := log.take(); !slices.Equal(got, []string{"b"}) {
			t.Errorf("started %v after TryRun; want [b]", got)
		}
		close(b.release)
		synctest.Wait()

		// A panic reaches the caller and frees the slot.
		msg := panicMessage(func() { s.TryRun(scheduler.Slot{}, func(scheduler.Slot) { panic("boom") }) })
		if msg != "boom" {
			t.Errorf("TryRun panicked with %q; want %q", msg, "boom")
		}
		if got := s.Active(); got != 0 {
			t.Errorf("Active() = %d after a panic in TryRun; want 0", got)
		}
		s.Close()
		if s.TryRun(scheduler.Slot{}, func(scheduler.Slot) {}) {
			t.Error("TryRun after Close reported true")
		}
	})
}

// TestTryRunKeepsFIFO checks that TryRun does not jump a queue with items in
// it, even when a slot is free.
func TestTryRunKeepsFIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log eventLog
		s := scheduler.New(2)
		a, bar, c := newGate("a", &log), newGate("barrier", &log), newGate("c", &log)
		s.Enqueue(a)
		s.Enqueue(scheduler.Barrier(bar)) // waits for a, holding c back
		s.Enqueue(c)
		synctest.Wait()
		if s.TryRun(scheduler.Slot{}, func(scheduler.Slot) {}) {
			t.Error("TryRun ran ahead of queued items")
		}
		close(a.release)
		close(bar.release)
		close(c.release)
	})
}

// TestRunInPlace checks the .NET inlining rule: an item of a serial
// scheduler that must wait for more work of its scheduler, which would
// deadlock if queued behind itself, runs it in its own place with TryRun.
func TestRunInPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(1)
		var order []string
		done := make(chan struct{})
		var queued scheduler.ID
		s.Enqueue(slotFunc(func(sl scheduler.Slot) {
			order = append(order, "outer start")
			queued, _ = s.Enqueue(scheduler.Func(func() { order = append(order, "queued") }))
			ran := s.TryRun(sl, func(scheduler.Slot) {
				order = append(order, "inner")
				if got := s.Stats().Running; got != 1 {
					t.Errorf("Running = %d during a run in place; want 1: the function runs in its item's place", got)
				}
				if got, _ := s.Snapshot(); got != 1 {
					t.Errorf("Pending = %d during a run in place; want 1", got)
				}
			})
			if !ran {
				t.Error("TryRun from an item of a busy serial scheduler = false; want true (in place)")
			}
			order = append(order, "outer end")
			close(done)
		}))
		<-done
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		if want := []string{"outer start", "inner", "outer end", "queued"}; !slices.Equal(order, want) {
			t.Errorf("order = %v; want %v", order, want)
		}
		if got := s.Stats().Completed; got != 3 {
			t.Errorf("Completed = %d; want 3", got)
		}
		if s.TryDequeue(queued) {
			t.Error("TryDequeue of an item that ran = true")
		}
	})
}

func TestPanicReachesHandlerAndWorkerGoesOn(t *testing.T) {
	var mu sync.Mutex
	var panics []*scheduler.PanicError
	s := scheduler.New(1, scheduler.WithPanicHandler(func(p *scheduler.PanicError) {
		mu.Lock()
		defer mu.Unlock()
		panics = append(panics, p)
	}))
	errBoom := errors.New("boom")
	var ran atomic.Int32
	s.Enqueue(scheduler.Func(func() { panicWithError(errBoom) }))
	s.Enqueue(scheduler.Func(func() { ran.Add(1) }))
	s.Enqueue(scheduler.Func(func() { panic("second") }))
	s.Enqueue(scheduler.Func(func() { ran.Add(1) }))
	if err := s.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := ran.Load(); got != 2 {
		t.Errorf("%d items ran after panics; want 2", got)
	}
	if len(panics) != 2 {
		t.Fatalf("handler got %d panics; want 2", len(panics))
	}
	p := panics[0]
	if !errors.Is(p, errBoom) {
		t.Errorf("errors.Is(%v, errBoom) = false; want true", p.Value)
	}
	if !strings.Contains(string(p.Stack), "panicWithError") {
		t.Errorf("stack does not show the panicking function:\n%s", p.Stack)
	}
	if panics[1].Value != "second" || panics[1].Unwrap() != nil {
		t.Errorf("second panic = %v (Unwrap %v); want \"second\" (nil)", panics[1].Value, panics[1].Unwrap())
	}
	if got := s.Stats().Completed; got != 4 {
		t.Errorf("Completed() = %d; want 4", got)
	}
}

func panicWithError(err error) { panic(err) }

func TestGoexitKeepsSlotAndItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(1)
		var ran atomic.Int32
		s.Enqueue(scheduler.Func(runtime.Goexit))
		s.Enqueue(scheduler.Func(func() { ran.Add(1) }))
		s.Enqueue(scheduler.Func(runtime.Goexit))
		s.Enqueue(scheduler.Func(func() { ran.Add(1) }))
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := ran.Load(); got != 2 {
			t.Errorf("%d items ran around Goexits; want 2", got)
		}
		if got := s.Active(); got != 0 {
			t.Errorf("Active() = %d; want 0", got)
		}
		if got := s.Stats().Completed; got != 4 {
			t.Errorf("Completed() = %d; want 4", got)
		}
	})
}

func TestMaxPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log eventLog
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

		// Room made by a finishing item goes to the waiting caller.
		d := newGate("d", &log)
		result := make(chan error)
		go func() {
			_, err := s.EnqueueContext(t.Context(), d)
			result <- err
		}()
		synctest.Wait()
		close(a.release) // b starts, making room
		if err := <-result; err != nil {
			t.Errorf("EnqueueContext after room was made = %v; want nil", err)
		}

		// Close wakes the callers still waiting.
		go func() {
			_, err := s.EnqueueContext(t.Context(), scheduler.Func(func() {}))
			result <- err
		}()
		synctest.Wait()
		s.Close()
		if err := <-result; err != scheduler.ErrClosed {
			t.Errorf("EnqueueContext waiting at Close = %v; want ErrClosed", err)
		}
		if _, err := s.Enqueue(scheduler.Func(func() {})); err != scheduler.ErrClosed {
			t.Errorf("Enqueue on a closed, full list = %v; want ErrClosed", err)
		}
		close(b.release)
		close(c.release)
		close(d.release)
		synctest.Wait()
		if got := log.take(); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
			t.Errorf("ran %v; want [a b c d]: queued items run after Close", got)
		}
	})
}

func TestCloseAndDequeueAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log eventLog
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
		if got := log.take(); !slices.Equal(got, []string{"a"}) {
			t.Errorf("ran %v; want [a]", got)
		}
	})
}

func TestWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(2)
		if err := s.Wait(t.Context()); err != nil {
			t.Errorf("Wait on an idle scheduler = %v; want nil", err)
		}
		var log eventLog
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

func TestEnqueueNilPanics(t *testing.T) {
	s := scheduler.New(1)
	for name, f := range map[string]func(){
		"Enqueue":        func() { s.Enqueue(nil) },
		"EnqueueContext": func() { s.EnqueueContext(context.Background(), nil) },
		"Barrier":        func() { scheduler.Barrier(nil) },
		"TryEnqueue":     func() { s.TryEnqueue(nil) },
	} {
		want := "scheduler: " + name + "(nil)"
		if got := panicMessage(f); got != want {
			t.Errorf("%s(nil) panicked with %q; want %q", name, got, want)
		}
	}
}

// slotFunc is a Task that receives its Slot.
type slotFunc func(scheduler.Slot)

func (f slotFunc) Run(sl scheduler.Slot) { f(sl) }

// TestHolds: a Slot holds its scheduler's slot while its item runs, on
// whatever goroutine carries it (a goroutine the item starts, say), and
// nothing once the item has returned; the zero Slot holds nothing.
func TestHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(2)
		other := scheduler.New(1)
		if s.Holds(scheduler.Slot{}) {
			t.Error("Holds(zero Slot) = true")
		}
		inItem := make(chan bool, 3)
		kept := make(chan scheduler.Slot, 1)
		s.Enqueue(slotFunc(func(sl scheduler.Slot) {
			inItem <- s.Holds(sl)
			helper := make(chan bool)
			go func() { helper <- s.Holds(sl) }() // work for the item, on another goroutine
			inItem <- <-helper
			inItem <- other.Holds(sl)
			kept <- sl
		}))
		if !<-inItem {
			t.Error("Holds(its Slot) = false in a running item")
		}
		if !<-inItem {
			t.Error("Holds(the item's Slot) = false on a goroutine the item started")
		}
		if <-inItem {
			t.Error("another scheduler's Holds(the item's Slot) = true")
		}
		sl := <-kept
		synctest.Wait()
		if s.Holds(sl) {
			t.Error("Holds(Slot of an item that returned) = true")
		}
		s.TryRun(scheduler.Slot{}, func(in scheduler.Slot) {
			if !s.Holds(in) {
				t.Error("Holds = false for the Slot TryRun gives")
			}
			// The Slot of TryRun carries the caller's on: a function run by
			// other inside it holds both.
			other.TryRun(in, func(in2 scheduler.Slot) {
				if !s.Holds(in2) || !other.Holds(in2) {
					t.Error("a Slot of a nested TryRun does not hold both slots")
				}
			})
		})
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestReserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(1, scheduler.WithMaxPending(2))
		var log eventLog
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
		if !r2.Cancel() {
			t.Error("Cancel of an unused reservation = false")
		}
		if r2.Cancel() {
			t.Error("second Cancel = true; the room was given back twice")
		}
		if got := panicMessage(func() { r2.Enqueue(scheduler.Func(func() {})) }); got != "scheduler: Reservation.Enqueue of a reservation already used or canceled" {
			t.Errorf("Enqueue on a canceled reservation panicked with %q", got)
		}
		s.Close()
		if _, err := s.Reserve(); err != scheduler.ErrClosed {
			t.Errorf("Reserve after Close = %v; want ErrClosed", err)
		}
		// A reservation taken before Close is honoured after it.
		b := newGate("b", &log)
		r1.Enqueue(b)
		if r1.Cancel() {
			t.Error("Cancel after Enqueue = true")
		}
		close(a.release)
		close(b.release)
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := log.take(); !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("ran %v; want [a b]", got)
		}
	})
}
