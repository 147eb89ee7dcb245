package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/internal/mainhook"
	_ "github.com/taskqueue-go/taskqueue/mainthread" // installs the main-thread entry points
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestRunSyncOnOwnConcurrentQueueKeepsTheBooks is a program that once
// corrupted the scheduler's slot books: a task of a concurrent queue with a
// free slot calls RunSync on its own queue. The inner call took a second slot
// under the same goroutine, and freeing it freed the worker's own, so that
// a slot stayed recorded under a goroutine that had exited, and Close from
// a plain goroutine later panicked as if called from a task.
func TestRunSyncOnOwnConcurrentQueueKeepsTheBooks(t *testing.T) {
	ctx := context.Background()
	q := taskqueue.NewConcurrent(2)
	h := q.RunAsync(ctx, func(ctx context.Context) error {
		return q.RunSync(ctx, func(context.Context) error { return nil })
	})
	if err := h.Wait(ctx); err != nil {
		t.Fatalf("Wait = %v", err)
	}
	closed := make(chan any)
	go func() {
		defer func() { closed <- recover() }()
		q.Close()
	}()
	if v := <-closed; v != nil {
		t.Fatalf("Close from a plain goroutine panicked: %v", v)
	}
}

// TestRunSyncInPlaceTakesNoSecondSlot checks, while the tasks run, that a
// RunSync from a task runs on the task's own slot: the queue never counts
// more tasks running than its limit, nor more slots than tasks.
func TestRunSyncInPlaceTakesNoSecondSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q := taskqueue.NewConcurrent(3)
		release := make(chan struct{})
		inner := make(chan taskqueue.Stats, 2)
		for range 2 {
			q.RunAsync(ctx, func(ctx context.Context) error {
				return q.RunSync(ctx, func(context.Context) error {
					inner <- q.Stats()
					<-release
					return nil
				})
			})
		}
		synctest.Wait()
		for range 2 {
			if st := <-inner; st.Running > 4 {
				t.Errorf("Running = %d inside two RunSync in place; want at most 4 (two tasks, each with its inner call)", st.Running)
			}
		}
		// Two slots are held, so the third is free: a third task starts.
		third := make(chan struct{})
		q.Go(func() { close(third) })
		synctest.Wait()
		select {
		case <-third:
		default:
			t.Error("a third task did not start beside two tasks running RunSync in place on a queue of three slots")
		}
		close(release)
		q.Close()
	})
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

// TestWaitsShowsACycle builds the cross-queue deadlock the RunSync
// documentation describes, with contexts that end it, and checks that Waits
// shows each waiting goroutine holding the queue the other waits for.
func TestWaitsShowsACycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		a, b := taskqueue.NewSerial(), taskqueue.NewSerial()
		inA, inB := make(chan struct{}), make(chan struct{})
		ha := a.RunAsync(ctx, func(ctx context.Context) error {
			close(inA)
			<-inB
			return b.RunSync(ctx, func(context.Context) error { return nil })
		})
		hb := b.RunAsync(ctx, func(ctx context.Context) error {
			close(inB)
			<-inA
			return a.RunSync(ctx, func(context.Context) error { return nil })
		})
		synctest.Wait()
		ws := taskqueue.Waits(a, b)
		if len(ws) != 2 {
			t.Fatalf("Waits = %v; want two waits", ws)
		}
		for _, w := range ws {
			other := a
			if w.Queue == a {
				other = b
			}
			if len(w.Holds) != 1 || w.Holds[0] != other {
				t.Errorf("a wait for %s holds %v; want the other queue", name(a, b, w.Queue), w.Holds)
			}
		}
		cancel()
		for _, h := range []*taskqueue.Handle{ha, hb} {
			if err := h.Wait(context.Background()); err != context.Canceled {
				t.Errorf("task in the cycle ended with %v; want Canceled", err)
			}
		}
		if ws := taskqueue.Waits(a, b); len(ws) != 0 {
			t.Errorf("Waits after the cycle ended = %v; want none", ws)
		}
	})
}

func name(a, b, q *taskqueue.Queue) string {
	switch q {
	case a:
		return "a"
	case b:
		return "b"
	}
	return fmt.Sprint(q)
}

// TestCanceledTasksBehindAStuckHeadFreeTheirMemory: a bounded queue whose
// head does not move, and a million tasks submitted and canceled behind it.
// Their entries once stayed in the list until the head moved, 16 bytes each
// plus the tasks; now the heap must not grow with them.
func TestCanceledTasksBehindAStuckHeadFreeTheirMemory(t *testing.T) {
	n := 1_000_000
	if testing.Short() || raceEnabled {
		n = 100_000
	}
	ctx := context.Background()
	q := taskqueue.NewSerial(taskqueue.WithMaxQueued(4), taskqueue.WithFailWhenFull())
	release := make(chan struct{})
	started := make(chan struct{})
	q.Go(func() { close(started); <-release }) // the running task, stuck
	<-started
	q.Go(func() {}) // the head of the list, stuck behind it
	before := liveHeap()
	for range n {
		h := q.RunAsync(ctx, func(context.Context) error { return nil })
		if !h.Cancel() {
			t.Fatalf("Cancel of a queued task = false (%v)", h.Err())
		}
	}
	grown := liveHeap() - before
	close(release)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	perEntry := float64(grown) / float64(n)
	t.Logf("the heap grew by %d bytes over %d canceled tasks behind a stuck head: %.3f B each", grown, n, perEntry)
	if perEntry > 0.5 {
		t.Errorf("the heap grew by %d bytes over %d canceled tasks behind a stuck head (%.2f B each); want it not to grow with them", grown, n, perEntry)
	}
	if st := q.Stats(); st.Canceled != uint64(n) {
		t.Errorf("Canceled = %d; want %d", st.Canceled, n)
	}
}

// liveHeap returns the bytes of live heap objects, after two collections:
// the first moves what sync.Pools hold to their victim caches, the second
// frees it.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestClosedErrorsMatchErrClosed: the closed errors of the main-thread
// helpers match this package's ErrClosed and keep the main loop's text.
func TestClosedErrorsMatchErrClosed(t *testing.T) {
	if mainhook.ErrClosed == nil {
		t.Fatal("package mainthread, imported by these tests, installed no closed error")
	}
	err := taskqueue.MainError(mainhook.ErrClosed)
	if !errors.Is(err, taskqueue.ErrClosed) || !errors.Is(err, mainhook.ErrClosed) {
		t.Errorf("the closed error of RunAsyncOnMainThread, %v, matches ErrClosed %v and the main loop's %v; want both",
			err, errors.Is(err, taskqueue.ErrClosed), errors.Is(err, mainhook.ErrClosed))
	}
	if err.Error() != mainhook.ErrClosed.Error() {
		t.Errorf("its text is %q; want mainthread's", err)
	}
	if err := taskqueue.MainError(context.Canceled); err != context.Canceled {
		t.Errorf("other errors are changed: %v", err)
	}
}

// TestNoMainThreadIsNotAHang: in a program that does not import package
// mainthread, nothing serves the main thread, and the helpers say so at once.
func TestNoMainThreadIsNotAHang(t *testing.T) {
	taskqueue.WithoutMainThread(func() {
		if err := taskqueue.RunSyncOnMainThread(context.Background(), func() {}); err != taskqueue.ErrNoMainThread {
			t.Errorf("RunSyncOnMainThread = %v; want ErrNoMainThread", err)
		}
		if err := taskqueue.RunAsyncOnMainThread(func() {}); err != taskqueue.ErrNoMainThread {
			t.Errorf("RunAsyncOnMainThread = %v; want ErrNoMainThread", err)
		}
	})
}

// TestZeroValuesPanicWithAMessage: the zero Queue and Handle are not usable,
// as documented, and say how to make one.
func TestZeroValuesPanicWithAMessage(t *testing.T) {
	var q taskqueue.Queue
	var h taskqueue.Handle
	for name, c := range map[string]struct {
		f    func()
		want string
	}{
		"Queue.Go":    {func() { q.Go(func() {}) }, "taskqueue: use of a zero Queue; make one with NewSerial or NewConcurrent"},
		"Handle.Wait": {func() { h.Wait(context.Background()) }, "taskqueue: use of a zero Handle; handles are made by a queue's RunAsync, RunAfter and RunBarrier"},
		"Handle.Done": {func() { h.Done() }, "taskqueue: use of a zero Handle; handles are made by a queue's RunAsync, RunAfter and RunBarrier"},
	} {
		got := func() (v any) {
			defer func() { v = recover() }()
			c.f()
			return nil
		}()
		if fmt.Sprint(got) != c.want {
			t.Errorf("%s panicked with %v; want %q", name, got, c.want)
		}
	}
}

// TestZeroGroupsAndThenPanic: the zero Group and GroupOf, Then on a zero
// Handle, and Apply on a zero Queue panic with a message, as documented,
// instead of returning nil, hanging or dereferencing nil.
func TestZeroGroupsAndThenPanic(t *testing.T) {
	ctx := context.Background()
	q := taskqueue.NewSerial()
	defer q.Close()
	var g taskqueue.Group
	var gi taskqueue.GroupOf[int]
	var h taskqueue.Handle
	var zq taskqueue.Queue
	for name, c := range map[string]struct {
		f    func()
		want string
	}{
		"Group.Go":      {func() { g.Go(func(context.Context) error { return nil }) }, "taskqueue: use of a zero Group; make one with NewGroup"},
		"Group.Wait":    {func() { g.Wait(ctx) }, "taskqueue: use of a zero Group; make one with NewGroup"},
		"GroupOf.Wait":  {func() { gi.Wait(ctx) }, "taskqueue: use of a zero GroupOf; make one with NewGroupOf"},
		"Handle.Then":   {func() { h.Then(ctx, q, func(context.Context) error { return nil }) }, "taskqueue: use of a zero Handle; handles are made by a queue's RunAsync, RunAfter and RunBarrier"},
		"Apply on zero": {func() { taskqueue.Apply(ctx, &zq, 3, func(int) {}) }, "taskqueue: use of a zero Queue; make one with NewSerial or NewConcurrent"},
	} {
		got := func() (v any) {
			defer func() { v = recover() }()
			c.f()
			return nil
		}()
		if fmt.Sprint(got) != c.want {
			t.Errorf("%s panicked with %v; want %q", name, got, c.want)
		}
	}
}
