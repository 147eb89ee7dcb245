package scheduler_test

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// TestSuspendResume: a suspended scheduler accepts items and starts none;
// suspending a child holds back its subtree only; Suspend and Resume nest.
func TestSuspendResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(2)
		child := scheduler.New(1, scheduler.WithTarget(root))
		grandchild := scheduler.New(1, scheduler.WithTarget(child))
		other := scheduler.New(1, scheduler.WithTarget(root))
		var ran atomic.Int32
		item := scheduler.Func(func() { ran.Add(1) })
		want := func(n int32, when string) {
			t.Helper()
			synctest.Wait()
			if got := ran.Load(); got != n {
				t.Errorf("%s: %d items ran; want %d", when, got, n)
			}
		}
		child.Suspend()
		child.Enqueue(item)
		grandchild.Enqueue(item)
		other.Enqueue(item)
		want(1, "with the child suspended") // the other child's
		if st := child.Stats(); st.Pending != 1 {
			t.Errorf("suspended child: Pending = %d; want 1", st.Pending)
		}
		child.Resume()
		want(3, "after Resume")
		root.Suspend()
		root.Suspend()
		root.Enqueue(item)
		root.Resume()
		want(3, "after one of two Resumes")
		root.Resume()
		want(4, "after both Resumes")
		if msg := testkit.PanicMessage(root.Resume); msg != "scheduler: Resume of a scheduler that is not suspended" {
			t.Errorf("Resume without Suspend panicked with %q", msg)
		}
	})
}

// TestSetLimit: raising the limit starts waiting items at once; lowering it
// lets the running ones finish, after which the new limit holds.
func TestSetLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, tree := range []bool{false, true} {
			var s *scheduler.Scheduler
			if tree {
				s = scheduler.New(1, scheduler.WithTarget(scheduler.New(8)))
			} else {
				s = scheduler.New(1)
			}
			var g testkit.Gauge
			release := make(chan struct{})
			for range 6 {
				s.Enqueue(scheduler.Func(func() { g.Enter("item"); <-release; g.Leave() }))
			}
			synctest.Wait()
			s.SetLimit(4)
			synctest.Wait()
			if now := g.Now(); now != 4 {
				t.Errorf("tree %v: %d running after SetLimit(4); want 4", tree, now)
			}
			s.SetLimit(2)
			gate2 := make(chan struct{})
			for range 6 {
				s.Enqueue(scheduler.Func(func() { g.Enter("item"); <-gate2; g.Leave() }))
			}
			close(release)
			synctest.Wait()
			if now := g.Now(); now != 2 {
				t.Errorf("tree %v: %d running after SetLimit(2); want 2", tree, now)
			}
			close(gate2)
			s.Wait(t.Context())
			if got := s.Limit(); got != 2 {
				t.Errorf("tree %v: Limit() = %d after SetLimit(2); want 2", tree, got)
			}
			if msg := testkit.PanicMessage(func() { s.SetLimit(0) }); msg != "scheduler: SetLimit(0): limit must be positive" {
				t.Errorf("SetLimit(0) panicked with %q", msg)
			}
			if s.SetLimit(math.MaxInt); s.Limit() != 1<<30 {
				t.Errorf("tree %v: Limit() = %d after SetLimit(MaxInt); want 1<<30", tree, s.Limit())
			}
		}
	})
}

// TestSuspendStopsStartsUnderLoad: once Suspend has returned and the
// items running have ended, no item starts until Resume, while a producer
// queues items as fast as it can: on the suspended scheduler itself, and on
// a child whose target is suspended, whose running turn must stop before
// its next item.
func TestSuspendStopsStartsUnderLoad(t *testing.T) {
	for _, child := range []bool{false, true} {
		target := scheduler.New(2)
		s := target
		if child {
			s = scheduler.New(2, scheduler.WithTarget(target), scheduler.WithQuantum(64))
		}
		var starts atomic.Int64
		bad := 0
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for !testkit.IsClosed(stop) {
				s.Enqueue(scheduler.Func(func() { starts.Add(1) }))
				runtime.Gosched()
			}
		})
		for range 1000 {
			target.Suspend()
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
			target.Resume()
		}
		close(stop)
		wg.Wait()
		mustWait(t, target)
		if bad != 0 {
			t.Errorf("child %v: items started while suspended in %d of 1000 rounds", child, bad)
		}
	}
}

// TestHeld: Held reports whether a scheduler holds its items back now:
// while it or a target above it is suspended, or holds more slots than
// its limit after SetLimit lowered it.
func TestHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(2)
		child := scheduler.New(1, scheduler.WithTarget(root))
		held := func(when string, wantRoot, wantChild bool) {
			t.Helper()
			if root.Held() != wantRoot || child.Held() != wantChild {
				t.Errorf("%s: Held() = %v for the target, %v for the child; want %v, %v", when, root.Held(), child.Held(), wantRoot, wantChild)
			}
		}
		held("idle", false, false)
		child.Suspend()
		held("child suspended", false, true)
		child.Resume()
		root.Suspend()
		held("target suspended", true, true)
		root.Resume()
		release := make(chan struct{})
		for range 2 {
			root.Enqueue(scheduler.Func(func() { <-release }))
		}
		synctest.Wait()
		held("target full", false, false)
		root.SetLimit(1)
		held("target over its lowered limit", true, true)
		close(release)
		synctest.Wait()
		held("target's items ended", false, false)
	})
}
