package taskqueue_test

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

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestCloseNowCountsWhatNeverRan: Stats().Running counts only tasks that
// have started, so that once it reaches the limit, CloseNow cancels exactly
// the tasks that never ran, and says how many. A worker used to count as
// running before it took its task, and CloseNow then canceled that task too:
// its count was one higher than the tasks that never ran.
func TestCloseNowCountsWhatNeverRan(t *testing.T) {
	rounds := 2000
	if testing.Short() {
		rounds = 200
	}
	for round := range rounds {
		const limit, total = 2, 10
		q := taskqueue.NewConcurrent(limit)
		release := make(chan struct{})
		var ran atomic.Int32
		for range total {
			q.Go(func() {
				ran.Add(1)
				<-release
			})
		}
		for q.Stats().Running < limit {
			runtime.Gosched()
		}
		n := q.CloseNow()
		close(release)
		if err := q.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := int(ran.Load()); got != limit || n != total-limit {
			t.Fatalf("round %d: CloseNow = %d and %d tasks ran, once Running reached %d; want %d and %d", round, n, got, limit, total-limit, limit)
		}
		if st := q.Stats(); st.Canceled != uint64(n) || st.Completed != limit {
			t.Fatalf("round %d: %+v; want Canceled %d, Completed %d", round, st, n, limit)
		}
	}
}

// TestCloseDrainsAndRejects: Close stops a queue from accepting tasks and
// waits until every task it accepted has run, delayed ones when they come
// due; every submission after it fails with ErrClosed, and a second Close
// returns nil.
func TestCloseDrainsAndRejects(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		var ran atomic.Int32
		count := func(context.Context) error { ran.Add(1); return nil }
		for range 10 {
			q.RunAsync(t.Context(), count)
		}
		delayed := q.RunAfter(t.Context(), time.Hour, count)
		start := time.Now()
		if err := q.Close(); err != nil {
			t.Fatalf("Close = %v", err)
		}
		if got := ran.Load(); got != 11 {
			t.Errorf("%d tasks ran by Close; want 11, the delayed one included", got)
		}
		if waited := time.Since(start); waited != time.Hour {
			t.Errorf("Close returned after %v; want 1h, when the delayed task came due", waited)
		}
		if delayed.Err() != nil {
			t.Errorf("delayed task: Err() = %v; want nil", delayed.Err())
		}
		// Everything submitted after Close is refused, clearly.
		checkRefused(t, q, taskqueue.ErrClosed, count)
		if err := q.Close(); err != nil {
			t.Errorf("second Close = %v; want nil", err)
		}
		if got := ran.Load(); got != 11 {
			t.Errorf("%d tasks ran; want 11", got)
		}
	})
}

// TestRunSyncFromOwnTaskWhileClosing checks that a task accepted before Close
// may still use RunSync on its own queue during the drain: that adds no work.
func TestRunSyncFromOwnTaskWhileClosing(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		proceed := make(chan struct{})
		h := q.RunAsync(t.Context(), func(ctx context.Context) error {
			<-proceed
			return q.RunSync(ctx, func(context.Context) error { return nil })
		})
		synctest.Wait()
		closed := make(chan error)
		go func() { closed <- q.Close() }()
		synctest.Wait()
		close(proceed)
		if err := h.Wait(t.Context()); err != nil {
			t.Errorf("RunSync from a task during Close = %v; want nil", err)
		}
		if err := <-closed; err != nil {
			t.Errorf("Close = %v", err)
		}
	})
}

// TestShutdownFromOwnTaskPanics: Shutdown from one of the queue's own tasks,
// with the task's context, panics instead of waiting for itself, and has
// closed the queue all the same.
func TestShutdownFromOwnTaskPanics(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		var msg any
		q.RunSync(t.Context(), func(ctx context.Context) error {
			msg = testkit.PanicValue(func() { q.Shutdown(ctx) })
			return nil
		})
		if want := "taskqueue: Shutdown from a task of the queue, which would wait for itself"; fmt.Sprint(msg) != want {
			t.Errorf("Shutdown from a task, with its context, panicked with %v; want %q", msg, want)
		}
		// The panic is instead of the wait: q is closed all the same.
		if err := q.RunAsync(t.Context(), func(context.Context) error { return nil }).Err(); !errors.Is(err, taskqueue.ErrClosed) {
			t.Errorf("RunAsync after the Shutdown that panicked: %v; want ErrClosed", err)
		}
		if err := q.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
}

// TestShutdownDeadline: Shutdown returns ctx.Err() when its context is done
// first, the tasks going on, and may be called again to wait for them.
func TestShutdownDeadline(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		release := block(t, q)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if err := q.Shutdown(ctx); err != context.DeadlineExceeded {
			t.Errorf("Shutdown = %v; want DeadlineExceeded", err)
		}
		release()
		if err := q.Shutdown(t.Context()); err != nil {
			t.Errorf("Shutdown = %v; want nil", err)
		}
	})
}

// TestCloseNow: CloseNow cancels every task that has not started (queued,
// delayed, of Go, a waiting RunSync), completes their handles with
// ErrClosed, leaves no timer, reports how many it canceled, lets the
// running tasks finish for Shutdown, and a second CloseNow cancels nothing.
func TestCloseNow(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		release := block(t, q)
		var ran atomic.Int32
		count := func(context.Context) error { ran.Add(1); return nil }
		var hs []*taskqueue.Handle
		for range 5 {
			hs = append(hs, q.RunAsync(t.Context(), count))
		}
		hs = append(hs, q.RunAfter(t.Context(), time.Minute, count))
		q.Go(func() { ran.Add(1) })
		waiting := make(chan error)
		go func() { waiting <- q.RunSync(t.Context(), count) }()
		synctest.Wait()

		if n := q.CloseNow(); n != 8 {
			t.Errorf("CloseNow() = %d; want 8 (5 queued, 1 delayed, 1 Go, 1 RunSync)", n)
		}
		if err := <-waiting; err != taskqueue.ErrClosed {
			t.Errorf("RunSync waiting at CloseNow = %v; want ErrClosed", err)
		}
		for i, h := range hs {
			if err := h.Err(); err != taskqueue.ErrClosed {
				t.Errorf("handle %d: Err() = %v; want ErrClosed", i, err)
			}
		}
		if q.HasTimer() {
			t.Error("queue keeps a timer after CloseNow")
		}
		release()
		if err := q.Shutdown(t.Context()); err != nil {
			t.Errorf("Shutdown after CloseNow = %v", err)
		}
		if ran.Load() != 0 {
			t.Errorf("%d canceled tasks ran", ran.Load())
		}
		s := q.Stats()
		if want := (taskqueue.Stats{Limit: s.Limit, Completed: uint64(s.Limit), Succeeded: uint64(s.Limit), Canceled: 8}); s != want {
			t.Errorf("Stats() = %+v; want %+v", s, want)
		}
		if n := q.CloseNow(); n != 0 {
			t.Errorf("a second CloseNow() = %d; want 0", n)
		}
	})
}

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

// TestCloseNowRacesSubmitters: while CloseNow races with submitters on real
// time, every accepted task runs exactly once or its handle completes with
// ErrClosed, CloseNow's count matches what it dropped, and Stats adds up
// once idle.
func TestCloseNowRacesSubmitters(t *testing.T) {
	for round := range 40 {
		var q *taskqueue.Queue
		if round%2 == 0 {
			q = taskqueue.NewSerial()
		} else {
			q = taskqueue.NewConcurrent(2)
		}
		ctx := context.Background()
		var goAccepted, goRan, asyncRan, submissions atomic.Int64
		const subs = 4
		var handles [subs][]*taskqueue.Handle
		var ranFlags [subs][]*atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for s := range subs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := range 300 {
					submissions.Add(1)
					if i%2 == 0 {
						if q.Go(func() { goRan.Add(1) }) == nil {
							goAccepted.Add(1)
						}
					} else {
						flag := new(atomic.Int32)
						h := q.RunAsync(ctx, func(context.Context) error {
							flag.Add(1)
							asyncRan.Add(1)
							return nil
						})
						handles[s] = append(handles[s], h)
						ranFlags[s] = append(ranFlags[s], flag)
					}
				}
			}()
		}
		close(start)
		for range round * 10 {
			runtime.Gosched()
		}
		canceled := q.CloseNow()
		wg.Wait()
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if err := q.Shutdown(sctx); err != nil {
			t.Fatalf("round %d: Shutdown after CloseNow: %v", round, err)
		}
		cancel()
		var closedHandles int64
		for s := range subs {
			for i, h := range handles[s] {
				if !h.IsDone() {
					t.Fatalf("round %d: handle pending after CloseNow and Shutdown", round)
				}
				ran := ranFlags[s][i].Load()
				switch err := h.Err(); {
				case err == nil:
					if ran != 1 {
						t.Fatalf("round %d: handle nil but task ran %d times", round, ran)
					}
				case errors.Is(err, taskqueue.ErrClosed):
					closedHandles++
					if ran != 0 {
						t.Fatalf("round %d: handle ErrClosed but task ran %d times", round, ran)
					}
				default:
					t.Fatalf("round %d: unexpected handle error %v", round, err)
				}
			}
		}
		st := q.Stats()
		if st.Completed != uint64(goRan.Load()+asyncRan.Load()) {
			t.Fatalf("round %d: Stats.Completed = %d, ran %d", round, st.Completed, goRan.Load()+asyncRan.Load())
		}
		if st.Succeeded != st.Completed || st.Failed != 0 || st.Panicked != 0 {
			t.Fatalf("round %d: stats %+v", round, st)
		}
		if st.Canceled != uint64(canceled) {
			t.Fatalf("round %d: CloseNow returned %d, Stats.Canceled = %d", round, canceled, st.Canceled)
		}
		if int64(canceled) != goAccepted.Load()-goRan.Load()+(closedHandles-int64(st.Rejected)+(submissions.Load()/2-goAccepted.Load())) {
			// canceled = go dropped + handles canceled; handles canceled = closedHandles - rejected handles
			// rejected = rejected Go + rejected handles, rejected Go = submissions/2 - goAccepted
			t.Fatalf("round %d: CloseNow returned %d; Go accepted %d ran %d; ErrClosed handles %d; Rejected %d",
				round, canceled, goAccepted.Load(), goRan.Load(), closedHandles, st.Rejected)
		}
		if total := st.Completed + st.Canceled + st.Rejected; total != uint64(submissions.Load()) {
			t.Fatalf("round %d: Completed+Canceled+Rejected = %d, submissions %d (%+v)", round, total, submissions.Load(), st)
		}
		if st.Queued != 0 || st.Running != 0 || st.Delayed != 0 {
			t.Fatalf("round %d: idle closed queue has stats %+v", round, st)
		}
	}
}

// TestCloseNowRacesInPlaceCalls: tasks whose helpers run RunSync in their
// place race CloseNow on a
// concurrent queue. Docs: CloseNow "cancels every task that has not
// started"; "Every handle completes"; Stats "add up exactly once q is idle":
// Completed is Succeeded + Failed + Panicked, and every submission ends as
// completed, canceled or rejected (an in-place RunSync counts as a completed
// task, as the queue reports it). A broken queue loses a call (the sum is
// short), counts one twice, or leaves a handle pending (the deadline).
func TestCloseNowRacesInPlaceCalls(t *testing.T) {
	for iter := 0; iter < 40 && !t.Failed(); iter++ {
		q := taskqueue.NewConcurrent(2)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		var calls, ranInPlace atomic.Int64
		var helpers sync.WaitGroup
		var hs []*taskqueue.Handle
		closed := make(chan struct{})
		go func() {
			for i := 0; i < iter%7*50; i++ {
				runtime.Gosched()
			}
			q.CloseNow()
			close(closed)
		}()
		for i := 0; i < 20; i++ {
			calls.Add(1)
			hs = append(hs, q.RunAsync(ctx, func(tctx context.Context) error {
				var wg sync.WaitGroup
				for k := 0; k < 3; k++ {
					wg.Add(1)
					helpers.Add(1)
					calls.Add(1)
					go func() {
						defer wg.Done()
						defer helpers.Done()
						if err := q.RunSync(tctx, func(context.Context) error {
							ranInPlace.Add(1)
							return nil
						}); err != nil {
							t.Errorf("in-place RunSync of a running task: %v", err)
						}
					}()
				}
				wg.Wait()
				return nil
			}))
		}
		<-closed
		for _, h := range hs {
			if err := h.Wait(ctx); err != nil && !errors.Is(err, taskqueue.ErrClosed) {
				t.Errorf("task: %v", err)
			}
		}
		waitOrFail(t, &helpers, 15*time.Second, "helpers")
		if err := q.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		s := q.Stats()
		if s.Completed != s.Succeeded+s.Failed+s.Panicked || s.Running != 0 || s.Queued != 0 {
			t.Errorf("stats of an idle queue: %+v", s)
		}
		if got := s.Completed + s.Canceled + s.Rejected; got != uint64(calls.Load()) {
			t.Errorf("completed %d + canceled %d + rejected %d = %d, want %d calls (%d ran in place)",
				s.Completed, s.Canceled, s.Rejected, got, calls.Load(), ranInPlace.Load())
		}
	}
}

// TestCloseFromGoroutinesAfterManyTasks starts and ends many workers, each
// task running a nested RunSync in its place, then closes from new
// goroutines: none of them holds a slot, so Close neither panics nor waits
// for itself.
func TestCloseFromGoroutinesAfterManyTasks(t *testing.T) {
	ctx := context.Background()
	for i := range 50 {
		q := taskqueue.NewConcurrent(4)
		for range 200 {
			q.RunAsync(ctx, func(ctx context.Context) error {
				return q.RunSync(ctx, func(context.Context) error { runtime.Gosched(); return nil })
			})
		}
		if err := q.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		done := make(chan any)
		for range 4 {
			go func() {
				defer func() { done <- recover() }()
				q.Close()
			}()
		}
		for range 4 {
			if v := <-done; v != nil {
				t.Fatalf("round %d: Close from a new goroutine panicked: %v", i, v)
			}
		}
	}
}

// TestCloseTargetClosesChildren: closing a target closes its subtree, its
// children and the lanes of a Keyed on it, to new tasks; Close of the
// target waits for the tasks they accepted, delayed ones and running ones
// included.
func TestCloseTargetClosesChildren(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		root := taskqueue.NewConcurrent(2)
		child := taskqueue.NewSerial(taskqueue.WithTarget(root))
		k := taskqueue.NewKeyed[int](root)
		var ran atomic.Int32
		child.RunAfter(ctx, time.Hour, func(context.Context) error { ran.Add(1); return nil })
		k.RunAfter(ctx, 1, 2*time.Hour, func(context.Context) error { ran.Add(1); return nil })
		child.Go(func() { time.Sleep(time.Second); ran.Add(1) })
		closed := make(chan error)
		go func() { closed <- root.Close() }()
		synctest.Wait()
		if err := child.Go(func() {}); err != taskqueue.ErrClosed {
			t.Errorf("Go on a child of a closed target = %v; want ErrClosed", err)
		}
		if h := child.RunAfter(ctx, time.Second, func(context.Context) error { return nil }); h.Err() != taskqueue.ErrClosed {
			t.Errorf("RunAfter on a child of a closed target: %v; want ErrClosed", h.Err())
		}
		if err := k.Go(2, func() {}); err != taskqueue.ErrClosed {
			t.Errorf("Keyed.Go on a closed target = %v; want ErrClosed", err)
		}
		select {
		case <-closed:
			t.Fatal("Close of the target returned before the subtree's accepted tasks ran")
		default:
		}
		time.Sleep(2 * time.Hour)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		if got := ran.Load(); got != 3 {
			t.Errorf("%d of the subtree's 3 accepted tasks ran; want 3", got)
		}
	})
}

// TestCloseNowOfATargetClosesItsSubtree: CloseNow on a target cancels its
// own waiting tasks; the queues of its subtree are closed to new tasks and
// run what they had accepted, as documented, until CloseNow is called on
// them.
func TestCloseNowOfATargetClosesItsSubtree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewSerial()
		child := taskqueue.NewSerial(taskqueue.WithTarget(target))
		k := taskqueue.NewKeyed[int](target)
		ctx := context.Background()
		block := make(chan struct{})
		target.Go(func() { <-block })
		synctest.Wait()
		h1 := child.RunAsync(ctx, func(context.Context) error { return nil })
		h2 := k.RunAsync(ctx, 5, func(context.Context) error { return nil })
		h3 := child.RunAfter(ctx, time.Hour, func(context.Context) error { return nil })
		h4 := target.RunAsync(ctx, func(context.Context) error { return nil })
		n := target.CloseNow()
		if err := child.Go(func() {}); !errors.Is(err, taskqueue.ErrClosed) {
			t.Errorf("child Go after the target's CloseNow: %v; want ErrClosed", err)
		}
		close(block)
		if err := target.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		for i, h := range []*taskqueue.Handle{h1, h2, h3} {
			if !h.IsDone() || h.Err() != nil {
				t.Errorf("subtree handle %d after target's CloseNow: done %v err %v; want it run", i, h.IsDone(), h.Err())
			}
		}
		if !errors.Is(h4.Err(), taskqueue.ErrClosed) || n != 1 {
			t.Errorf("target.CloseNow() = %d, its own task's Err %v; want 1, ErrClosed", n, h4.Err())
		}
	})
}

// TestShutdownOfAnIdleQueueFromATask: Shutdown of an idle queue has nothing
// to wait for, so it returns nil at once, even from a task that holds a slot
// the queue's work would need: a task of its serial target, or of a sibling
// on that target.
func TestShutdownOfAnIdleQueueFromATask(t *testing.T) {
	for _, from := range []string{"the serial target", "a sibling"} {
		t.Run(from, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				root := taskqueue.NewSerial()
				child := taskqueue.NewConcurrent(2, taskqueue.WithTarget(root))
				caller := root
				if from == "a sibling" {
					caller = taskqueue.NewSerial(taskqueue.WithTarget(root))
				}
				var err error
				var msg string
				caller.RunAsync(t.Context(), func(ctx context.Context) error {
					msg = testkit.PanicMessage(func() { err = child.Shutdown(ctx) })
					return nil
				}).Wait(t.Context())
				if msg != "" || err != nil {
					t.Errorf("Shutdown of an idle queue from a task of %s: %v, panic %q; want nil", from, err, msg)
				}
				if err := child.Go(func() {}); err != taskqueue.ErrClosed {
					t.Errorf("Go after Shutdown = %v; want ErrClosed", err)
				}
				root.Close()
			})
		})
	}
}
