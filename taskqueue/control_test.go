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

// TestSuspendAndSetLimit: a suspended queue accepts tasks and starts none
// until Resume; SetLimit raises and lowers a concurrent queue's limit.
func TestSuspendAndSetLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q := taskqueue.NewConcurrent(1)
		q.Suspend()
		var ran atomic.Int32
		h := q.RunAsync(ctx, func(context.Context) error { ran.Add(1); return nil })
		synctest.Wait()
		if ran.Load() != 0 || h.IsDone() {
			t.Fatal("a suspended queue ran a task")
		}
		if st := q.Stats(); st.Queued != 1 {
			t.Errorf("Queued = %d on a suspended queue; want 1", st.Queued)
		}
		q.Resume()
		if err := h.Wait(ctx); err != nil || ran.Load() != 1 {
			t.Fatalf("after Resume: %v, ran %d", err, ran.Load())
		}

		var now, peak atomic.Int32
		gate := make(chan struct{})
		for range 8 {
			q.Go(func() {
				n := now.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				<-gate
				now.Add(-1)
			})
		}
		synctest.Wait()
		q.SetLimit(3)
		synctest.Wait()
		if n := now.Load(); n != 3 {
			t.Errorf("%d tasks running after SetLimit(3); want 3", n)
		}
		if q.Stats().Limit != 3 {
			t.Errorf("Stats().Limit = %d; want 3", q.Stats().Limit)
		}
		close(gate)
		q.Close()
		if p := peak.Load(); p != 3 {
			t.Errorf("at most %d ran at once; want 3", p)
		}
	})
}

// Suspend stops starts, nests, and RunSync from outside waits on a suspended
// idle queue (it is not idle for RunSync's run-on-caller rule).
func TestOutsideSuspendHoldsRunSyncAndNests(t *testing.T) {
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

// SetLimit: raising starts waiting tasks at once, lowering bounds the running
// count once running tasks finish.
func TestOutsideSetLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(1)
		var running, maxRunning atomic.Int32
		block := make(chan struct{})
		task := func() {
			r := running.Add(1)
			for {
				m := maxRunning.Load()
				if r <= m || maxRunning.CompareAndSwap(m, r) {
					break
				}
			}
			<-block
			running.Add(-1)
		}
		for range 6 {
			q.Go(task)
		}
		synctest.Wait()
		if running.Load() != 1 {
			t.Fatalf("running %d at limit 1", running.Load())
		}
		q.SetLimit(4)
		synctest.Wait()
		if running.Load() != 4 || q.Stats().Limit != 4 {
			t.Fatalf("after SetLimit(4): running %d, Limit %d", running.Load(), q.Stats().Limit)
		}
		q.SetLimit(1)
		maxRunning.Store(0)
		close(block)
		q.Close()
		if maxRunning.Load() > 4 {
			t.Fatalf("max running %d", maxRunning.Load())
		}
		// after lowering, no more than 1 at once for new tasks
		q2 := taskqueue.NewConcurrent(3)
		q2.SetLimit(1)
		ex := newGauge("serial queue", 1)
		for range 50 {
			q2.Go(func() { ex.Enter("function"); time.Sleep(time.Millisecond); ex.Leave() })
		}
		q2.Close()
		if over := ex.Over(); over != "" {
			t.Fatalf("after SetLimit(1): %s", over)
		}
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
