package taskqueue_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestSuspend: a suspended queue accepts tasks and starts none until each
// Suspend has had its Resume; RunSync from outside waits on a suspended idle
// queue (which is not idle for RunSync's run-on-caller rule), and Apply's
// caller takes no slot of it.
func TestSuspend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		q.Suspend()
		var ran atomic.Int32
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := q.RunSync(ctx, func(context.Context) error { ran.Add(1); return nil })
		if ran.Load() != 0 || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("RunSync on a suspended idle queue: ran %d, err %v", ran.Load(), err)
		}
		q.Suspend()
		h := q.RunAsync(context.Background(), func(context.Context) error { ran.Add(1); return nil })
		q.Resume()
		synctest.Wait()
		if h.IsDone() {
			t.Fatal("task started after one Resume of two Suspends")
		}
		if st := q.Stats(); st.Queued != 1 {
			t.Errorf("suspended queue Stats.Queued = %d, want 1", st.Queued)
		}
		q.Resume()
		if err := h.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Apply on a suspended queue: the caller takes a free slot only if q may start tasks.
		q.Suspend()
		actx, cancel2 := context.WithTimeout(context.Background(), time.Second)
		defer cancel2()
		var calls atomic.Int32
		aerr := taskqueue.Apply(actx, q, 4, func(int) { calls.Add(1) })
		if calls.Load() != 0 {
			t.Errorf("Apply ran %d iterations on a suspended queue (err %v)", calls.Load(), aerr)
		}
		q.Resume()
		q.Close()
	})
}

// TestSetLimit: raising a concurrent queue's limit starts waiting tasks at
// once; lowering it lets the running tasks finish, after which no more than
// the new limit run, on a busy queue and on an idle one.
func TestSetLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(1)
		g := newGauge("queue raised to 4", 4)
		var lowered atomic.Bool
		var beside atomic.Int64
		gate := make(chan struct{})
		for range 8 {
			q.Go(func() {
				if n := g.Enter("task"); lowered.Load() && n > 1 {
					beside.Store(n) // started after SetLimit(1) beside another
				}
				<-gate
				g.Leave()
			})
		}
		synctest.Wait()
		if n := g.Now(); n != 1 {
			t.Fatalf("%d tasks running at limit 1", n)
		}
		q.SetLimit(4)
		synctest.Wait()
		if n := g.Now(); n != 4 || q.Stats().Limit != 4 {
			t.Fatalf("after SetLimit(4): %d running, Limit %d; want 4 and 4", n, q.Stats().Limit)
		}
		lowered.Store(true) // no task starts meanwhile: four run, at the limit
		q.SetLimit(1)
		close(gate)
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		if n := beside.Load(); n != 0 {
			t.Errorf("a task started after SetLimit(1) with %d running", n)
		}
		checkGauges(t, g)

		idle := taskqueue.NewConcurrent(3)
		idle.SetLimit(1)
		one := newGauge("queue lowered to 1 while idle", 1)
		for range 50 {
			idle.Go(func() { one.Enter("task"); time.Sleep(time.Millisecond); one.Leave() })
		}
		idle.Close()
		checkGauges(t, one)
	})
}

// TestSuspendHoldsTheSubtreeAtOnce: once Suspend of a target returns, no
// task of a child starts, not even in the child's turn that was running (up
// to a quantum of them used to).
func TestSuspendHoldsTheSubtreeAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent := taskqueue.NewConcurrent(1)
		child := taskqueue.NewSerial(taskqueue.WithTarget(parent), taskqueue.WithQuantum(64))
		var started atomic.Int32
		suspended := make(chan struct{})
		var after atomic.Int32
		for i := range 32 {
			child.Go(func() {
				started.Add(1)
				select {
				case <-suspended:
					after.Add(1)
				default:
				}
				if i == 3 {
					parent.Suspend()
					close(suspended)
				}
			})
		}
		synctest.Wait()
		if n := after.Load(); n != 0 {
			t.Errorf("%d tasks of the child started after Suspend of its target returned; want 0", n)
		}
		if n := started.Load(); n != 4 {
			t.Errorf("%d tasks started before the target resumed; want 4", n)
		}
		parent.Resume()
		parent.Close()
		if n := started.Load(); n != 32 {
			t.Errorf("%d tasks ran in all; want 32", n)
		}
	})
}

// TestControlMisuse: SetLimit out of range or on a serial queue, and Resume
// of a queue that is not suspended (after nested pairs too), panic with the
// call and the value.
func TestControlMisuse(t *testing.T) {
	s, c := taskqueue.NewSerial(), taskqueue.NewConcurrent(2)
	nested := taskqueue.NewConcurrent(2)
	nested.Suspend()
	nested.Suspend()
	nested.Resume()
	nested.Resume()
	checkMisuses(t, []misuse{
		{"SetLimit(0)", func() { c.SetLimit(0) }, "taskqueue: SetLimit(0): limit must be positive"},
		{"SetLimit(2) on a serial queue", func() { s.SetLimit(2) }, "taskqueue: SetLimit(2) on a serial queue"},
		{"Resume without Suspend", func() { c.Resume() }, "taskqueue: Resume of a queue that is not suspended"},
		{"Resume after two nested pairs", func() { nested.Resume() }, "taskqueue: Resume of a queue that is not suspended"},
	})
	if err := nested.Go(func() {}); err != nil {
		t.Errorf("Go after the refused Resume = %v", err)
	}
	nested.Close()
}
