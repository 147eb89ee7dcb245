package taskqueue_test

// Regression tests for promises that outside testers found broken, each
// named for the promise; each failed on the code before its fix.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestCloseNowCancelsEveryQueuedTask: CloseNow on a queue with 1 to 300
// tasks queued behind a running one (it crashed from 8 on, the list read past
// a segment a batch of items had left) cancels every one, exactly, and each
// handle completes with ErrClosed.
func TestCloseNowCancelsEveryQueuedTask(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		for _, n := range []int{1, 7, 8, 9, 63, 64, 65, 127, 128, 300} {
			q := k.new()
			// The tasks are queued before the workers start, so that a worker
			// takes a run of them at once behind the task that blocks.
			gate := make(chan struct{})
			for range q.Stats().Limit {
				q.Go(func() { <-gate })
			}
			release := func() { close(gate) }
			var ran atomic.Int32
			hs := make([]*taskqueue.Handle, n)
			for i := range n {
				if i%2 == 0 {
					q.Go(func() { ran.Add(1) })
				} else {
					hs[i] = q.RunAsync(t.Context(), func(context.Context) error { ran.Add(1); return nil })
				}
			}
			synctest.Wait()
			if got := q.CloseNow(); got != n {
				t.Errorf("%d queued: CloseNow = %d", n, got)
			}
			release()
			q.Close()
			if ran.Load() != 0 {
				t.Errorf("%d queued: %d ran after CloseNow", n, ran.Load())
			}
			for _, h := range hs {
				if h != nil && !errors.Is(h.Err(), taskqueue.ErrClosed) {
					t.Fatalf("%d queued: a handle reports %v; want ErrClosed", n, h.Err())
				}
			}
		}
	})
}

// TestHandleDoneAndWaitsRace: Done, Wait with and without a context, and
// IsDone on one handle from several goroutines while other handles come and
// go (the race detector saw a pooled node of the handle's list reused).
func TestHandleDoneAndWaitsRace(t *testing.T) {
	q := taskqueue.NewConcurrent(2)
	ctx := context.Background()
	for round := range 200 {
		gate := make(chan struct{})
		h := q.RunAsync(ctx, func(context.Context) error { <-gate; return nil })
		h.Done()
		var wg sync.WaitGroup
		wg.Go(func() {
			h.Wait(ctx)
			q.RunAsync(ctx, func(context.Context) error { return nil }).Wait(ctx)
		})
		wg.Go(func() {
			c, cancel := context.WithCancel(ctx)
			defer cancel()
			h.Wait(c)
		})
		wg.Go(func() {
			for !h.IsDone() {
				h.Done()
				runtime.Gosched() // lets the other goroutines run where all share one thread (js/wasm)
			}
		})
		wg.Go(func() {
			h.Then(ctx, q, func(context.Context) error { return nil }).Wait(ctx)
		})
		if round%2 == 0 {
			close(gate)
		} else {
			go close(gate)
		}
		wg.Wait()
		select {
		case <-h.Done():
		default:
			t.Fatal("Done is not closed once the task is done")
		}
	}
	q.Close()
}

// TestTryGoFillsTheFreeSlots: on an idle queue of n slots, n calls of TryGo
// in a row all start, and the next reports false (the second one used to
// report false, its slot still counted as queued).
func TestTryGoFillsTheFreeSlots(t *testing.T) {
	for _, n := range []int{1, 2, 4, 8} {
		synctest.Test(t, func(t *testing.T) {
			q := taskqueue.NewConcurrent(n)
			gate := make(chan struct{})
			for i := range n {
				if !q.TryGo(func() { <-gate }) {
					t.Fatalf("limit %d: TryGo %d = false with a free slot", n, i+1)
				}
			}
			if q.TryGo(func() { t.Error("a refused TryGo ran") }) {
				t.Errorf("limit %d: TryGo %d = true with every slot taken", n, n+1)
			}
			synctest.Wait()
			if st := q.Stats(); st.Running != n || st.Queued != 0 {
				t.Errorf("limit %d: Stats = %+v; want %d running, none queued", n, st, n)
			}
			close(gate)
			q.Close()
		})
	}
}

// TestTryGoOnAChildNeverQueues: TryGo on a child whose target is full or
// suspended reports false and never runs f (it used to queue f for later).
func TestTryGoOnAChildNeverQueues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewConcurrent(1)
		child := taskqueue.NewConcurrent(2, taskqueue.WithTarget(target))
		release := block(t, target)
		if child.TryGo(func() { t.Error("a refused TryGo ran") }) {
			t.Error("TryGo on a child of a full target = true")
		}
		release()
		synctest.Wait()
		target.Suspend()
		if child.TryGo(func() { t.Error("a refused TryGo ran") }) {
			t.Error("TryGo on a child of a suspended target = true")
		}
		target.Resume()
		gate := make(chan struct{})
		if !child.TryGo(func() { <-gate }) {
			t.Error("TryGo on an idle child of an idle target = false")
		}
		synctest.Wait()
		close(gate)
		target.Close()
	})
}

// TestCloseNowStopsGroupMembers: members waiting in a group, behind a
// member that runs, never run once CloseNow returns; they fail with
// ErrClosed, and CloseNow and Stats count them.
func TestCloseNowStopsGroupMembers(t *testing.T) {
	for _, limit := range []int{1, 2} {
		synctest.Test(t, func(t *testing.T) {
			q := taskqueue.NewConcurrent(limit)
			g := taskqueue.NewGroup(t.Context(), q)
			gate := make(chan struct{})
			var ran atomic.Int32
			for range limit {
				g.Go(func(context.Context) error { ran.Add(1); <-gate; return nil })
			}
			synctest.Wait()
			for range 10 {
				g.Go(func(context.Context) error { ran.Add(1); return nil })
			}
			if n := q.CloseNow(); n != 10 {
				t.Errorf("limit %d: CloseNow = %d; want the 10 members waiting", limit, n)
			}
			close(gate)
			err := g.Wait(context.Background())
			if ran.Load() != int32(limit) {
				t.Errorf("limit %d: %d members ran; want the %d running at CloseNow", limit, ran.Load(), limit)
			}
			if !errors.Is(err, taskqueue.ErrClosed) {
				t.Errorf("limit %d: Wait = %v; want ErrClosed among the errors", limit, err)
			}
			synctest.Wait() // Stats add up once q is idle: the runners end after their members
			if st := q.Stats(); st.Canceled != 10 || st.Completed != uint64(limit) {
				t.Errorf("limit %d: Stats = %+v; want 10 canceled, %d completed", limit, st, limit)
			}
		})
	}
}

// TestCancelOnErrorStatsAddUp: with WithCancelOnError, every member ends up
// completed or canceled in the queue's Stats, whatever the schedule (about
// one trial in 400 used to lose the members added after the cancel).
func TestCancelOnErrorStatsAddUp(t *testing.T) {
	trials := 300
	if testing.Short() {
		trials = 50
	}
	errBoom := errors.New("boom")
	for trial := range trials {
		q := taskqueue.NewConcurrent(4)
		g := taskqueue.NewGroup(context.Background(), q, taskqueue.WithCancelOnError())
		for i := range 1000 {
			g.Go(func(context.Context) error {
				if i == 10 {
					return errBoom
				}
				return nil
			})
		}
		if err := g.Wait(context.Background()); err != errBoom {
			t.Fatalf("trial %d: Wait = %v", trial, err)
		}
		q.Close()
		if st := q.Stats(); st.Completed+st.Canceled != 1000 {
			t.Fatalf("trial %d: Completed %d + Canceled %d = %d; want 1000", trial, st.Completed, st.Canceled, st.Completed+st.Canceled)
		}
	}
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

// TestGroupWaitFromAMemberPanics: a member that waits for its own group,
// with its context, on a concurrent queue, panics with a message instead of
// hanging (it used to hang forever).
func TestGroupWaitFromAMemberPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(4)
		g := taskqueue.NewGroup(t.Context(), q)
		var msg any
		g.Go(func(ctx context.Context) error {
			msg = panicValue(func() { g.Wait(ctx) })
			return nil
		})
		if err := g.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if want := "taskqueue: Group.Wait from a member of the group, which would wait for itself"; fmt.Sprint(msg) != want {
			t.Errorf("Wait from a member panicked with %v; want %q", msg, want)
		}
		q.Close()
	})
}

// TestDelayedTasksStartInDueOrder: on a serial queue, delayed tasks start in
// the order they come due, whatever order they were submitted in. Their keys
// are durations on the monotonic clock: keyed by wall-clock nanoseconds, a
// step of the wall clock would reorder them.
func TestDelayedTasksStartInDueOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		var order []int
		delays := []int{7, 3, 9, 1, 3, 8, 2, 6, 5, 4}
		for i, d := range delays {
			q.RunAfter(t.Context(), time.Duration(d)*time.Second, func(context.Context) error {
				order = append(order, i)
				return nil
			})
		}
		time.Sleep(10 * time.Second)
		q.Close()
		want := []int{3, 6, 1, 4, 9, 8, 7, 0, 5, 2} // by delay, submission order among equals
		if fmt.Sprint(order) != fmt.Sprint(want) {
			t.Errorf("started %v; want %v", order, want)
		}
	})
}
