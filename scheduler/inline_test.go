package scheduler_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

func TestTryRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log testkit.Log
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
			expect(t, "while TryRun held the only slot", log.Take(), "a")
		})
		synctest.Wait()
		expect(t, "after TryRun", log.Take(), "b")
		close(b.release)
		synctest.Wait()

		// A panic reaches the caller and frees the slot.
		msg := testkit.PanicMessage(func() { s.TryRun(scheduler.Slot{}, func(scheduler.Slot) { panic("boom") }) })
		if msg != "boom" {
			t.Errorf("TryRun panicked with %q; want %q", msg, "boom")
		}
		if got := s.Active(); got != 0 {
			t.Errorf("Active() = %d after a panic in TryRun; want 0", got)
		}

		// So does runtime.Goexit.
		var wg sync.WaitGroup
		returned := false
		wg.Go(func() {
			s.TryRun(scheduler.Slot{}, func(scheduler.Slot) { runtime.Goexit() })
			returned = true
		})
		wg.Wait()
		if returned || s.Active() != 0 {
			t.Errorf("after a Goexit in TryRun: TryRun returned %v, %d slots held; want false, 0", returned, s.Active())
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
		var log testkit.Log
		s := scheduler.New(2)
		a, bar, c := newGate("a", &log), newGate("barrier", &log), newGate("c", &log)
		s.Enqueue(a)
		s.Enqueue(scheduler.Barrier(bar)) // waits for a, holding c back
		s.Enqueue(c)
		synctest.Wait()
		if s.TryRun(scheduler.Slot{}, func(scheduler.Slot) {}) {
			t.Error("TryRun ran ahead of queued items")
		}
		release(a, bar, c)
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
		mustWait(t, s)
		expect(t, "in the end", order, "outer start", "inner", "outer end", "queued")
		if got := s.Stats().Completed; got != 3 {
			t.Errorf("Completed = %d; want 3", got)
		}
		if s.TryDequeue(queued) {
			t.Error("TryDequeue of an item that ran = true")
		}
	})
}

// TestTryRunOnChild: on an idle child, TryRun runs on the caller, holding a
// slot of the child and of its target; from an item of a sibling it runs on
// the slot of the target the caller holds.
func TestTryRunOnChild(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(1)
		a := scheduler.New(1, scheduler.WithTarget(root))
		b := scheduler.New(1, scheduler.WithTarget(root))
		var holds [2]bool
		if !a.TryRun(scheduler.Slot{}, func(sl scheduler.Slot) { holds = [2]bool{a.Holds(sl), root.Holds(sl)} }) {
			t.Fatal("TryRun on an idle child = false")
		}
		if holds != [2]bool{true, true} {
			t.Errorf("inside TryRun on a child: holds child, target = %v; want both", holds)
		}
		res := make(chan [3]bool)
		a.Enqueue(slotFunc(func(sl scheduler.Slot) {
			var in [3]bool
			ok := b.TryRun(sl, func(sl scheduler.Slot) {
				in = [3]bool{b.Holds(sl), root.Holds(sl), a.Holds(sl)}
				if problem := root.Books(); problem != "" {
					t.Errorf("TryRun on a sibling: %s", problem)
				}
			})
			in[2] = in[2] && ok
			res <- in
		}))
		if got := <-res; got != [3]bool{true, true, true} {
			t.Errorf("TryRun on an idle sibling from an item, holds sibling, target, own child = %v; want all true", got)
		}
		// A busy target: the child cannot run on the caller.
		gate := make(chan struct{})
		root.Enqueue(scheduler.Func(func() { <-gate }))
		synctest.Wait()
		if a.TryRun(scheduler.Slot{}, func(scheduler.Slot) {}) {
			t.Error("TryRun on a child of a busy target = true")
		}
		if st := a.Stats(); st.Running != 0 || st.Pending != 0 {
			t.Errorf("after a refused TryRun the child reports %+v; want nothing", st)
		}
		close(gate)
		root.Wait(t.Context())
	})
}

// TestTryEnqueue: TryEnqueue queues an item only if it starts at once, on
// a free slot with nothing queued before it that waits, within the bound of
// the list, and, for a child, on a turn that each target above starts at
// once; otherwise it queues nothing and reports false.
func TestTryEnqueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log testkit.Log
		root := scheduler.New(2, scheduler.WithMaxPending(2))
		child := scheduler.New(1, scheduler.WithTarget(root))
		grandchild := scheduler.New(1, scheduler.WithTarget(child))
		try := func(s *scheduler.Scheduler, x scheduler.Task, want bool, when string) {
			t.Helper()
			pending := s.Stats().Pending
			if got := s.TryEnqueue(x); got != want {
				t.Errorf("TryEnqueue %s = %v; want %v", when, got, want)
			}
			synctest.Wait()
			if got := s.Stats().Pending; got != pending {
				t.Errorf("TryEnqueue %s left %d items queued; want %d: an item it queues starts at once", when, got, pending)
			}
		}
		a, b, c := newGate("a", &log), newGate("b", &log), newGate("c", &log)
		try(grandchild, a, true, "on an idle tree")
		try(root, scheduler.Barrier(b), false, "of a barrier beside a running item")
		s := newGate("s", &log)
		root.Enqueue(scheduler.Barrier(s)) // waits for a, and holds back what comes after it
		try(root, b, false, "behind a queued barrier, with a free slot")
		close(a.release)
		synctest.Wait() // the barrier runs
		try(root, b, false, "beside a running barrier")
		close(s.release)
		synctest.Wait()
		root.Suspend()
		try(root, b, false, "on a suspended scheduler")
		try(child, b, false, "on a child of a suspended target")
		root.Resume()
		r, err := root.Reserve()
		if err != nil {
			t.Fatal(err)
		}
		r2, err := root.Reserve()
		if err != nil {
			t.Fatal(err)
		}
		try(root, b, false, "with the list full of reservations")
		r.Cancel()
		r2.Cancel()
		try(root, b, true, "with a free slot")
		try(child, c, true, "on a child, with the target's last free slot")
		try(root, scheduler.Func(func() {}), false, "on a full scheduler")
		root.Close()
		close(b.release)
		synctest.Wait()
		try(root, scheduler.Func(func() {}), false, "on a closed scheduler")
		close(c.release)
		mustWait(t, root)
		expect(t, "in the end", log.Take(), "a", "s", "b", "c")
	})
}

// BenchmarkTryRun measures running an item on the caller of an idle
// scheduler.
func BenchmarkTryRun(b *testing.B) {
	b.ReportAllocs()
	s := scheduler.New(1)
	var n atomic.Int64
	f := func(scheduler.Slot) { n.Add(1) }
	for b.Loop() {
		s.TryRun(scheduler.Slot{}, f)
	}
}
