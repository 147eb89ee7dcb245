package scheduler_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// TestSuspendResume: a suspended scheduler accepts items and starts none;
// suspending a child holds back its subtree only.
func TestSuspendResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(2)
		child := scheduler.New(1, scheduler.WithTarget(root))
		grandchild := scheduler.New(1, scheduler.WithTarget(child))
		other := scheduler.New(1, scheduler.WithTarget(root))
		var ran atomic.Int32
		item := scheduler.Func(func() { ran.Add(1) })
		child.Suspend()
		child.Enqueue(item)
		grandchild.Enqueue(item)
		other.Enqueue(item)
		synctest.Wait()
		if got := ran.Load(); got != 1 {
			t.Errorf("%d items ran with the child suspended; want 1 (the other child's)", got)
		}
		if st := child.Stats(); st.Pending != 1 {
			t.Errorf("suspended child: Pending = %d; want 1", st.Pending)
		}
		child.Resume()
		synctest.Wait()
		if got := ran.Load(); got != 3 {
			t.Errorf("%d items ran after Resume; want 3", got)
		}
		root.Suspend()
		root.Suspend()
		root.Enqueue(item)
		root.Resume()
		synctest.Wait()
		if got := ran.Load(); got != 3 {
			t.Errorf("ran %d after one of two Resumes; want 3", got)
		}
		root.Resume()
		synctest.Wait()
		if got := ran.Load(); got != 4 {
			t.Errorf("ran %d after both Resumes; want 4", got)
		}
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
			if msg := testkit.PanicMessage(func() { s.SetLimit(0) }); msg != "scheduler: SetLimit(0): limit must be positive" {
				t.Errorf("SetLimit(0) panicked with %q", msg)
			}
		}
	})
}

// When Suspend returns no item starts until Resume, under a stream of items:
// once the running ones end, the count of starts stays still.
func TestSuspendStopsStartsUnderLoad(t *testing.T) {
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
