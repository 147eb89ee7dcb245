package taskqueue_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// The end-to-end tests run under mainthread.Run, as a program would, so that
// the main thread is really served.
func TestMain(m *testing.M) {
	mainthread.Run(func() {
		goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
	})
}

// TestWorkersMarshalResultsToTheMainThread: tasks on a concurrent queue
// compute, and hand each result to the main thread, which alone touches the
// shared state; a serial queue waits synchronously for a main-thread call.
func TestWorkersMarshalResultsToTheMainThread(t *testing.T) {
	ctx := context.Background()
	work := taskqueue.NewConcurrent(runtime.GOMAXPROCS(0))
	results := make([]int, 64) // touched only on the main thread
	var offMain atomic.Int32
	for i := range results {
		work.Go(func() {
			square := i * i
			if err := taskqueue.RunAsyncOnMainThread(func() {
				if !mainthread.IsMain() {
					offMain.Add(1)
				}
				results[i] = square
			}); err != nil {
				t.Error(err)
			}
		})
	}
	if err := work.Close(); err != nil {
		t.Fatal(err)
	}
	var sum int
	serial := taskqueue.NewSerial()
	err := serial.RunSync(ctx, func(ctx context.Context) error {
		return taskqueue.RunSyncOnMainThread(ctx, func() {
			for _, r := range results {
				sum += r
			}
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := 63 * 64 * 127 / 6; sum != want {
		t.Errorf("sum of squares = %d; want %d", sum, want)
	}
	if n := offMain.Load(); n > 0 {
		t.Errorf("%d results were applied off the main thread", n)
	}
}

// TestMainThreadCallsQueueAndBack: a function on the main thread waits on a
// queue task that posts back to the main thread with RunAsyncOnMainThread,
// which never blocks, so nothing deadlocks; and RunSyncOnMainThread from the
// main thread itself runs inline.
func TestMainThreadCallsQueueAndBack(t *testing.T) {
	ctx := context.Background()
	q := taskqueue.NewSerial()
	order := make(chan string, 3)
	taskqueue.RunSyncOnMainThread(ctx, func() {
		// On the main thread: a nested main-thread call runs inline.
		taskqueue.RunSyncOnMainThread(ctx, func() { order <- "inline on main" })
		h := q.RunAsync(ctx, func(ctx context.Context) error {
			return taskqueue.RunAsyncOnMainThread(func() { order <- "posted from the queue" })
		})
		if err := h.Wait(ctx); err != nil {
			t.Error(err)
		}
		order <- "main waited for the queue"
	})
	taskqueue.RunSyncOnMainThread(ctx, func() {}) // the posted function has run by now
	close(order)
	var got []string
	for s := range order {
		got = append(got, s)
	}
	want := []string{"inline on main", "main waited for the queue", "posted from the queue"}
	if len(got) != len(want) {
		t.Fatalf("got %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v; want %v", got, want)
		}
	}
}

// TestMainLoomBudget: a flood of main-thread posts is spread over frames by
// the main loom's budget, and every post runs once.
func TestMainLoomBudget(t *testing.T) {
	mainthread.Loom().Configure(loom.WithBudget(100, 0))
	defer mainthread.Loom().Configure(loom.WithBudget(0, 0))
	var ran atomic.Int32
	start := mainthread.Loom().Frame()
	for range 1000 {
		taskqueue.RunAsyncOnMainThread(func() { ran.Add(1) })
	}
	taskqueue.RunSyncOnMainThread(context.Background(), func() {})
	if got := ran.Load(); got != 1000 {
		t.Errorf("%d posts ran; want 1000", got)
	}
	if frames := mainthread.Loom().Frame() - start; frames < 10 {
		t.Errorf("1000 posts ran in %d frames with a budget of 100; want at least 10", frames)
	}
}

func TestOnlyTheMainGoroutineIsMain(t *testing.T) {
	if mainthread.IsMain() {
		t.Error("a test goroutine claims to be the main goroutine")
	}
	isMain := false
	taskqueue.RunSyncOnMainThread(context.Background(), func() { isMain = mainthread.IsMain() })
	if !isMain {
		t.Error("IsMain() = false on the main thread")
	}
}

// TestCoroutineWaitsForATask: a coroutine of the main loom sends heavy work
// to a queue and waits for its handle; it resumes on the main thread, in the
// first frame after the task is done, and uses the result there.
func TestCoroutineWaitsForATask(t *testing.T) {
	ctx := context.Background()
	work := taskqueue.NewConcurrent(2)
	type result struct {
		v      int
		onMain bool
		err    error
	}
	done := make(chan result, 1)
	taskqueue.RunAsyncOnMainThread(func() {
		mainthread.Loom().StartCoroutine(func(yield func(loom.Instruction) bool) {
			f := taskqueue.RunAsync(ctx, work, func(context.Context) (int, error) {
				sum := 0
				for i := range 1000 {
					sum += i
				}
				return sum, nil
			})
			if !yield(loom.WaitFor(f)) {
				return
			}
			v, err := f.Result() // done: Result reports at once
			done <- result{v, mainthread.IsMain(), err}
		})
	})
	r := <-done
	if r.v != 499500 || !r.onMain || r.err != nil {
		t.Errorf("result %d on the main thread %v, error %v; want 499500, true, nil", r.v, r.onMain, r.err)
	}
	if err := work.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWorkOffTheFrameDroppedByCloseNow: a coroutine waits for a task that
// CloseNow drops before it starts; the task's Future completes with
// ErrClosed, the coroutine resumes and reads it, and a goroutine's Await
// returns. (The loom's own RunOff, which this replaces, never completed.)
func TestWorkOffTheFrameDroppedByCloseNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		l := loom.New()
		q := taskqueue.NewSerial()
		started, release := make(chan struct{}), make(chan struct{})
		q.Go(func() { close(started); <-release })
		<-started
		f := taskqueue.RunAsync(ctx, q, func(context.Context) (int, error) { return 1, nil })
		var got error
		c := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			if yield(loom.WaitFor(f)) {
				_, got = f.Result()
			}
		})
		l.Update()
		if n := q.CloseNow(); n != 1 {
			t.Errorf("CloseNow = %d; want 1", n)
		}
		close(release)
		l.Update()
		if !c.IsDone() || !errors.Is(got, taskqueue.ErrClosed) {
			t.Errorf("the waiting coroutine: done %v, read %v; want done, ErrClosed", c.IsDone(), got)
		}
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if err := loom.Await(wctx, f); !errors.Is(err, taskqueue.ErrClosed) {
			t.Errorf("Await = %v; want ErrClosed", err)
		}
		q.Close()
		l.Close()
	})
}
