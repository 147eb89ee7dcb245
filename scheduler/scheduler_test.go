package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"math"
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

// release lets the gates end.
func release(gates ...*gate) {
	for _, g := range gates {
		close(g.release)
	}
}

// mustWait waits until s is idle, and fails the test if Wait fails.
func mustWait(t *testing.T, s *scheduler.Scheduler) {
	t.Helper()
	if err := s.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// expect fails the test, naming the moment when, unless got, what a log
// recorded, is want.
func expect(t *testing.T, when string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: logged %q; want %q", when, got, want)
	}
}

// slotFunc is a Task that receives its Slot.
type slotFunc func(scheduler.Slot)

func (f slotFunc) Run(sl scheduler.Slot) { f(sl) }

// TestNewLimit: New panics on a limit below one, naming it, and takes a
// limit above 1<<30 as 1<<30.
func TestNewLimit(t *testing.T) {
	for _, n := range []int{0, -1} {
		got := testkit.PanicMessage(func() { scheduler.New(n) })
		want := fmt.Sprintf("scheduler: New(%d): limit must be positive", n)
		if got != want {
			t.Errorf("New(%d) panicked with %q; want %q", n, got, want)
		}
	}
	if got := scheduler.New(math.MaxInt).Limit(); got != 1<<30 {
		t.Errorf("New(MaxInt).Limit() = %d; want 1<<30", got)
	}
}

// TestZeroSchedulerPanics: every method of the zero Scheduler panics with a
// message that names the call and New, rather than accept items it would
// never run (it used to queue them and run none); so do the zero Reservation
// and Hold.
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
		"Idle":           func() { s.Idle() },
		"Barriers":       func() { s.Barriers() },
		"Limit":          func() { s.Limit() },
		"Suspend":        func() { s.Suspend() },
		"Resume":         func() { s.Resume() },
		"SetLimit":       func() { s.SetLimit(2) },
		"Held":           func() { s.Held() },
		"Hold":           func() { s.Hold() },
		"Requeue":        func() { s.Requeue(scheduler.Func(func() {})) },
	}
	for call, f := range calls {
		want := "scheduler: " + call + " on a zero Scheduler; make one with New"
		if got := testkit.PanicMessage(f); got != want {
			t.Errorf("%s on the zero Scheduler panicked with %q; want %q", call, got, want)
		}
	}
	// The values the Scheduler makes panic too, made any other way.
	var r scheduler.Reservation
	var h scheduler.Hold
	for call, c := range map[string]struct {
		f    func()
		want string
	}{
		"Reservation.Enqueue": {func() { r.Enqueue(scheduler.Func(func() {})) }, "scheduler: Reservation.Enqueue of a Reservation not made by Reserve or ReserveContext"},
		"Reservation.Cancel":  {func() { r.Cancel() }, "scheduler: Reservation.Cancel of a Reservation not made by Reserve or ReserveContext"},
		"Hold.Release":        {func() { h.Release() }, "scheduler: Hold.Release of the zero Hold; Scheduler.Hold makes one"},
	} {
		if got := testkit.PanicMessage(c.f); got != c.want {
			t.Errorf("%s of the zero value panicked with %q; want %q", call, got, c.want)
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
	mustWait(t, s)
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
		release(a, c)
		synctest.Wait()
		expect(t, "b was dequeued", log.Take(), "a", "c")
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
		mustWait(t, s)
		expect(t, "in the end", log.Take(), "a")
	})
}

// TestCloseNowRace: CloseNow racing with enqueuers. Each accepted item
// either ran or was returned, never both, never neither; items after it are
// refused; items that panic or call runtime.Goexit lose nothing, and every
// panic reaches the handler.
func TestCloseNowRace(t *testing.T) {
	for round := range 50 {
		synctest.Test(t, func(t *testing.T) {
			var panics, panicked atomic.Int32
			s := scheduler.New(2, scheduler.WithPanicHandler(func(*scheduler.PanicError) { panics.Add(1) }))
			var accepted, ran atomic.Int64
			var wg sync.WaitGroup
			for g := range 3 {
				wg.Go(func() {
					for i := range 500 {
						var f scheduler.Func
						switch (g + i) % 10 {
						case 0:
							f = func() { ran.Add(1); runtime.Goexit() }
						case 1:
							f = func() { ran.Add(1); panicked.Add(1); panic("x") }
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
				})
			}
			for range round {
				runtime.Gosched()
			}
			returned := s.CloseNow()
			wg.Wait()
			if err := s.Wait(t.Context()); err != nil {
				t.Fatalf("round %d: Wait: %v", round, err)
			}
			if got := ran.Load() + int64(len(returned)); got != accepted.Load() {
				t.Fatalf("round %d: accepted %d, ran %d, CloseNow returned %d", round, accepted.Load(), ran.Load(), len(returned))
			}
			if got, want := panics.Load(), panicked.Load(); got != want {
				t.Errorf("round %d: the handler saw %d panics; want %d", round, got, want)
			}
			if _, err := s.Enqueue(scheduler.Func(func() {})); !errors.Is(err, scheduler.ErrClosed) {
				t.Fatalf("Enqueue after CloseNow: %v", err)
			}
			if st := s.Stats(); st.Pending != 0 || st.Running != 0 {
				t.Fatalf("round %d: stats %+v", round, st)
			}
		})
	}
}

// TestCloseNow: CloseNow returns the queued items, oldest first and without
// their barrier marks, refuses every item after it, and lets the running
// ones end. The work of a child is the child's: its items stay queued and
// run, while the child refuses new ones with its closed target.
func TestCloseNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log testkit.Log
		root := scheduler.New(1)
		child := scheduler.New(1, scheduler.WithTarget(root))
		a, b, c, d := newGate("a", &log), newGate("b", &log), newGate("c", &log), newGate("child's", &log)
		root.Enqueue(a)
		root.Enqueue(b)
		child.Enqueue(d)
		root.Enqueue(scheduler.Barrier(c))
		synctest.Wait()
		if got := root.CloseNow(); len(got) != 2 || got[0] != b || got[1] != c {
			t.Errorf("CloseNow() = %v; want [b c], without the barrier's mark", got)
		}
		if _, err := root.Enqueue(b); err != scheduler.ErrClosed {
			t.Errorf("Enqueue after CloseNow = %v; want ErrClosed", err)
		}
		if _, err := child.Enqueue(b); err != scheduler.ErrClosed {
			t.Errorf("Enqueue on a child after its target's CloseNow = %v; want ErrClosed", err)
		}
		release(a, d)
		mustWait(t, root)
		expect(t, "in the end", log.Take(), "a", "child's")
	})
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
		b := newGate("b", &log)
		s.Enqueue(b) // queued while Wait waits: waited for too
		close(a.release)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Wait returned %v while an item queued as it waited ran", err)
		default:
		}
		close(b.release)
		if err := <-done; err != nil {
			t.Errorf("Wait = %v; want nil", err)
		}

		// From an item, Wait waits for that item too: only its context
		// ends it.
		s.Enqueue(scheduler.Func(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			done <- s.Wait(ctx)
		}))
		if err := <-done; err != context.DeadlineExceeded {
			t.Errorf("Wait from an item = %v; want DeadlineExceeded", err)
		}
	})
}

// TestRequeue: Requeue queues an item whatever the state of the scheduler,
// closed, or bounded and full; the item takes no room of the list, and
// gives none back when it is removed; DequeueAll returns it as it was given.
func TestRequeue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log testkit.Log
		s := scheduler.New(1, scheduler.WithMaxPending(1))
		a, b, c, d := newGate("a", &log), newGate("b", &log), newGate("c", &log), newGate("d", &log)
		s.Enqueue(a)
		synctest.Wait()
		s.Enqueue(b) // the list is full
		id := s.Requeue(c)
		if got := s.Stats().Pending; got != 2 {
			t.Errorf("Pending = %d after Requeue on a full list; want 2", got)
		}
		if !s.TryDequeue(id) {
			t.Error("TryDequeue of a requeued item = false")
		}
		if _, err := s.Enqueue(c); err != scheduler.ErrFull {
			t.Errorf("Enqueue after a requeued item was removed = %v; want ErrFull: it gave back room it never took", err)
		}
		s.Close()
		s.Requeue(d)
		release(a, b, d)
		mustWait(t, s)
		expect(t, "in the end", log.Take(), "a", "b", "d")
		s.Suspend()
		s.Requeue(c)
		if got := s.DequeueAll(); len(got) != 1 || got[0] != c {
			t.Errorf("DequeueAll() = %v; want [c], the requeued task itself", got)
		}
		s.Resume()
	})
}

// TestHold: a Hold keeps its scheduler from counting as idle, for Wait and
// for the idle function, until it is released, which may leave the
// scheduler idle; a second Release panics.
func TestHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var idles atomic.Int32
		s := scheduler.New(1, scheduler.WithIdleFunc(func() { idles.Add(1) }))
		h := s.Hold()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if err := s.Wait(ctx); err != context.DeadlineExceeded {
			t.Errorf("Wait on a held scheduler = %v; want DeadlineExceeded", err)
		}
		s.Enqueue(scheduler.Func(func() {}))
		synctest.Wait()
		if got := idles.Load(); got != 0 {
			t.Errorf("the idle function ran %d times while held; want 0", got)
		}
		h.Release()
		if got := idles.Load(); got != 1 {
			t.Errorf("the idle function ran %d times when Release left the scheduler idle; want 1, before Release returned", got)
		}
		if err := s.Wait(t.Context()); err != nil {
			t.Errorf("Wait after Release = %v; want nil", err)
		}
		const misuse = "scheduler: Hold.Release of a hold released already"
		if got := testkit.PanicMessage(h.Release); got != misuse {
			t.Errorf("second Release panicked with %q; want %q", got, misuse)
		}
	})
}

// TestHoldIsItsSchedulersAlone: a Hold on a child keeps the child from
// counting as idle, not its target: the target's Wait returns and its idle
// function runs while the child's Wait waits for the Release.
func TestHoldIsItsSchedulersAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var idles atomic.Int32
		root := scheduler.New(1, scheduler.WithIdleFunc(func() { idles.Add(1) }))
		child := scheduler.New(1, scheduler.WithTarget(root))
		root.Enqueue(scheduler.Func(func() {}))
		synctest.Wait()
		h := child.Hold()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if err := root.Wait(ctx); err != nil || idles.Load() != 1 {
			t.Errorf("the target's Wait with a child held = %v, its idle function run %d times; want nil, 1", err, idles.Load())
		}
		if err := child.Wait(ctx); err != context.DeadlineExceeded {
			t.Errorf("the held child's Wait = %v; want DeadlineExceeded", err)
		}
		h.Release()
		if err := child.Wait(t.Context()); err != nil {
			t.Errorf("the child's Wait after Release = %v; want nil", err)
		}
	})
}

// TestIdle: Idle reports what Wait waits for: a Scheduler is not idle while
// an item is queued or running, while a reservation is neither used nor
// canceled (in it or in a child), or while a Hold holds it; Stats, which
// shows no reservation, would call it idle in the last two.
func TestIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(1)
		child := scheduler.New(1, scheduler.WithTarget(root))
		expect := func(when string, want bool) {
			t.Helper()
			if got := root.Idle(); got != want {
				t.Errorf("%s: Idle() = %v; want %v", when, got, want)
			}
		}
		expect("new", true)
		gate := make(chan struct{})
		root.Enqueue(scheduler.Func(func() { <-gate }))
		expect("an item queued", false)
		synctest.Wait()
		expect("an item running", false)
		close(gate)
		synctest.Wait()
		expect("the item done", true)
		r, err := child.Reserve()
		if err != nil {
			t.Fatal(err)
		}
		expect("a child's reservation", false)
		r.Cancel()
		expect("the reservation canceled", true)
		r, _ = root.Reserve()
		expect("a reservation", false)
		r.Enqueue(scheduler.Func(func() {}))
		synctest.Wait()
		expect("the reserved item done", true)
		h := root.Hold()
		expect("held", false)
		h.Release()
		expect("released", true)
	})
}

// TestBarriersCount: Barriers counts the barriers queued on a Scheduler
// (those that Requeue queues again too), not its other items, nor those of
// its children.
func TestBarriersCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(2)
		child := scheduler.New(1, scheduler.WithTarget(root))
		root.Enqueue(scheduler.Func(func() {}))
		child.Enqueue(scheduler.Barrier(scheduler.Func(func() {})))
		if n := root.Barriers(); n != 0 {
			t.Errorf("Barriers() = %d with no barrier of its own; want 0", n)
		}
		root.Enqueue(scheduler.Barrier(scheduler.Func(func() {})))
		root.Requeue(scheduler.Barrier(scheduler.Func(func() {})))
		synctest.Wait()
		if n := root.Barriers(); n != 2 {
			t.Errorf("Barriers() = %d after a barrier queued and one queued again; want 2", n)
		}
		if n := child.Barriers(); n != 1 {
			t.Errorf("the child's Barriers() = %d; want 1", n)
		}
	})
}

// TestStatsCountOwnItems: Stats counts the items of its own scheduler, not
// those of its children, which count in theirs, and counts a function that
// TryRun ran as a completed item.
func TestStatsCountOwnItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log testkit.Log
		root := scheduler.New(1)
		child := scheduler.New(1, scheduler.WithTarget(root))
		a, b, c := newGate("a", &log), newGate("b", &log), newGate("c", &log)
		child.Enqueue(a)
		child.Enqueue(b)
		root.Enqueue(c)
		synctest.Wait()
		if got, want := root.Stats(), (scheduler.Stats{Pending: 1}); got != want {
			t.Errorf("the target's Stats() = %+v; want %+v", got, want)
		}
		if got, want := child.Stats(), (scheduler.Stats{Pending: 1, Running: 1}); got != want {
			t.Errorf("the child's Stats() = %+v; want %+v", got, want)
		}
		release(a, b, c)
		mustWait(t, root)
		child.TryRun(scheduler.Slot{}, func(scheduler.Slot) {})
		if got, want := root.Stats(), (scheduler.Stats{Completed: 1}); got != want {
			t.Errorf("the idle target's Stats() = %+v; want %+v", got, want)
		}
		if got, want := child.Stats(), (scheduler.Stats{Completed: 3}); got != want {
			t.Errorf("the idle child's Stats() = %+v; want %+v", got, want)
		}
	})
}

// benchEnqueue queues a tiny item on s for each iteration of b, and waits
// for them to run every drainEvery items, so that it measures running items,
// not only queuing them, and keeps the backlog small.
func benchEnqueue(b *testing.B, s *scheduler.Scheduler) {
	b.ReportAllocs()
	var n atomic.Int64
	item := scheduler.Func(func() { n.Add(1) })
	for i := 1; b.Loop(); i++ {
		s.Enqueue(item)
		if i%drainEvery == 0 {
			s.Wait(context.Background())
		}
	}
	s.Wait(context.Background())
}

const drainEvery = 1024

// BenchmarkEnqueue measures queuing a tiny item and running it, against a
// buffered channel feeding a fixed set of workers (the floor for a hand-off
// between goroutines).
func BenchmarkEnqueue(b *testing.B) {
	for _, limit := range []int{1, 4} {
		b.Run(fmt.Sprintf("impl=scheduler/limit=%d", limit), func(b *testing.B) {
			benchEnqueue(b, scheduler.New(limit))
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

// TestEnqueueMemory: once the list's segments are pooled, queuing an item
// (and removing it) allocates nothing. The race detector's allocations
// blur the count: CI runs it without.
func TestEnqueueMemory(t *testing.T) {
	if testkit.RaceEnabled {
		t.Skip("the race detector allocates")
	}
	s := scheduler.New(1)
	s.Suspend() // the items stay queued: no worker starts
	item := scheduler.Func(func() {})
	allocs := testing.AllocsPerRun(1000, func() {
		id, _ := s.Enqueue(item)
		s.TryDequeue(id)
	})
	if allocs != 0 {
		t.Errorf("Enqueue and TryDequeue allocate %v times; want 0", allocs)
	}
	s.Resume()
}

// TestRequeueKeepsABarrier: an item requeued marked as a barrier still runs
// alone. Requeue used to drop the mark.
func TestRequeueKeepsABarrier(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(2)
		var log testkit.Log
		a := newGate("a", &log)
		s.Enqueue(a)
		synctest.Wait()
		bar := newGate("barrier", &log)
		s.Requeue(scheduler.Barrier(bar))
		c := newGate("c", &log)
		s.Enqueue(c)
		synctest.Wait()
		expect(t, "while a runs", log.TakeSorted(), "a")
		release(a)
		synctest.Wait()
		expect(t, "once a ended", log.TakeSorted(), "barrier")
		release(bar)
		synctest.Wait()
		expect(t, "once the barrier ended", log.TakeSorted(), "c")
		release(c)
		mustWait(t, s)
	})
}
