package scheduler_test

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// TestFIFOAndLimit checks that items start in FIFO order, at most limit at a
// time, as earlier ones finish.
func TestFIFOAndLimit(t *testing.T) {
	for _, limit := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var log testkit.Log
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
				expect(t, "at first", log.TakeSorted(), want...)
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
					expect(t, fmt.Sprintf("after item %d finished", i), log.Take(), want...)
				}
				if got := s.Active(); got != 0 {
					t.Errorf("idle scheduler has %d active workers; want 0", got)
				}
			})
		})
	}
}

func TestBarrier(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log testkit.Log
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
		expect(t, "the barrier waits for the items before it", log.TakeSorted(), "a", "b")
		close(a.release)
		synctest.Wait()
		if got := log.Take(); len(got) != 0 {
			t.Fatalf("started %v while b still ran; want nothing", got)
		}
		close(b.release)
		synctest.Wait()
		expect(t, "the barrier starts alone", log.Take(), "barrier")
		if got := s.Stats().Running; got != 1 {
			t.Errorf("Running() = %d during the barrier; want 1", got)
		}
		if s.TryRun(scheduler.Slot{}, func(scheduler.Slot) {}) {
			t.Error("TryRun ran an item beside a barrier")
		}
		close(bar.release)
		synctest.Wait()
		expect(t, "after the barrier", log.TakeSorted(), "c", "d")
		release(c, d)
	})
}

func TestBarrierDequeuedUnblocksItemsBehindIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log testkit.Log
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
		expect(t, "once the barrier is gone", log.TakeSorted(), "a", "c")
		release(a, c)
	})
}

// TestIdleFunc: the idle function runs each time an operation leaves its
// scheduler idle, whatever the operation, on the goroutine that called it
// and before it returns: never for a scheduler that had no work, and, for a
// target, when its subtree goes idle.
func TestIdleFunc(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var idles, rootIdles atomic.Int32
		root := scheduler.New(1, scheduler.WithIdleFunc(func() { rootIdles.Add(1) }))
		s := scheduler.New(1, scheduler.WithTarget(root), scheduler.WithIdleFunc(func() { idles.Add(1) }))
		want := func(when string, n, rootN int32) {
			t.Helper()
			if idles.Load() != n || rootIdles.Load() != rootN {
				t.Errorf("%s: the idle functions ran %d times, the target's %d; want %d, %d", when, idles.Load(), rootIdles.Load(), n, rootN)
			}
		}
		mustWait(t, s)
		want("never busy", 0, 0)
		s.Enqueue(scheduler.Func(func() {}))
		synctest.Wait()
		want("after an item", 1, 1)
		s.Suspend()
		id, _ := s.Enqueue(scheduler.Func(func() {}))
		s.TryDequeue(id)
		want("TryDequeue of the only item", 2, 2) // a suspended child with items holds its target busy

		s.Resume()
		r, err := s.Reserve()
		if err != nil {
			t.Fatal(err)
		}
		r.Cancel()
		want("Cancel of the only reservation", 3, 3)
		s.TryRun(scheduler.Slot{}, func(scheduler.Slot) {})
		want("TryRun", 4, 4)
	})
}

// TestCallbacksRunWithNoLockHeld: no function of the caller's (an item, the
// panic handler, the Goexit and idle functions, TryRun's function) runs
// while a mutex of the tree it belongs to is held, so that each may call
// the tree back.
func TestCallbacksRunWithNoLockHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var root, child *scheduler.Scheduler
		var log testkit.Log
		check := func(what string) {
			log.Add(what)
			if root.Locked() || child.Locked() {
				t.Errorf("%s runs with a mutex of the tree held", what)
			}
		}
		root = scheduler.New(1, scheduler.WithIdleFunc(func() { check("target's idle function") }))
		child = scheduler.New(1, scheduler.WithTarget(root),
			scheduler.WithPanicHandler(func(*scheduler.PanicError) { check("panic handler") }),
			scheduler.WithGoexitFunc(func() { check("Goexit function") }),
			scheduler.WithIdleFunc(func() { check("idle function") }))
		child.Enqueue(scheduler.Func(func() { check("item"); panic("boom") }))
		synctest.Wait()
		child.Enqueue(scheduler.Func(runtime.Goexit))
		synctest.Wait()
		child.TryRun(scheduler.Slot{}, func(scheduler.Slot) { check("TryRun's function") })
		got := log.TakeSorted()
		for _, want := range []string{"Goexit function", "TryRun's function", "idle function", "item", "panic handler", "target's idle function"} {
			if !slices.Contains(got, want) {
				t.Errorf("no %s ran; ran %q", want, got)
			}
		}
	})
}

// TestHammerNoLostWakeup hunts the lost wake-up: an item queued at the
// instant the last worker decides to exit must still run. Producers, one
// alone or eight at once, queue items one to three at a time and wait for
// them to run, so that the list keeps emptying and workers keep exiting
// while new items arrive. A monitor reads the scheduler's books under its
// lock, where a queued item that may start with no slot on the way is a
// lost wake-up (Books), and at the end every item has run exactly once and
// no worker is left.
func TestHammerNoLostWakeup(t *testing.T) {
	total := 1 << 20
	if testing.Short() || testkit.RaceEnabled {
		total = 1 << 14
	}
	for _, limit := range []int{1, 2, 8} {
		for _, producers := range []int{1, 8} {
			t.Run(fmt.Sprintf("limit=%d/producers=%d", limit, producers), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { hammer(t, limit, producers, total) })
			})
		}
	}
}

func hammer(t *testing.T, limit, producers, total int) {
	s := scheduler.New(limit)
	var ran atomic.Int64
	var lost atomic.Pointer[string] // the first problem the books showed
	check := func() bool {
		if problem := s.Books(); problem != "" {
			lost.CompareAndSwap(nil, &problem)
			return false
		}
		return true
	}
	stop := make(chan struct{})
	var monitor sync.WaitGroup
	monitor.Go(func() {
		for !testkit.IsClosed(stop) && check() {
			runtime.Gosched()
		}
	})

	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			var mine atomic.Int64
			item := scheduler.Func(func() {
				mine.Add(1)
				ran.Add(1)
			})
			n := int64(total / producers)
			burst := int64(p%3 + 1) // producers queue 1, 2 or 3 items between waits
			for sent := int64(0); sent < n; {
				for range min(burst, n-sent) {
					if _, err := s.Enqueue(item); err != nil {
						t.Errorf("Enqueue: %v", err)
						return
					}
					sent++
				}
				for spins := 1; mine.Load() < sent; spins++ {
					if spins%64 == 0 && !check() {
						return // the item is stranded; waiting would hang
					}
					runtime.Gosched()
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	monitor.Wait()
	if p := lost.Load(); p != nil {
		t.Fatal(*p)
	}
	mustWait(t, s)
	if got, want := ran.Load(), int64(total/producers*producers); got != want {
		t.Errorf("%d items ran; want %d", got, want)
	}
	if got := s.Stats().Completed; got != uint64(ran.Load()) {
		t.Errorf("Completed = %d; want %d", got, ran.Load())
	}
	synctest.Wait() // a worker started for an item that another took may be on its way out
	if pending, active := s.Snapshot(); pending != 0 || active != 0 {
		t.Errorf("after the hammer: %d pending, %d slots (each a worker); want none", pending, active)
	}
}
