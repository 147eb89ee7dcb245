package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// A queueKind makes queues of one kind; the contract tests run on each.
type queueKind struct {
	name   string
	new    func(opts ...taskqueue.Option) *taskqueue.Queue
	serial bool // runs one task at a time
}

var kinds = []queueKind{
	{"serial", taskqueue.NewSerial, true},
	{"concurrent=1", func(opts ...taskqueue.Option) *taskqueue.Queue { return taskqueue.NewConcurrent(1, opts...) }, true},
	{"concurrent=4", func(opts ...taskqueue.Option) *taskqueue.Queue { return taskqueue.NewConcurrent(4, opts...) }, false},
	// Children run on a target's slots: every contract holds for them too.
	{"child/serial", func(opts ...taskqueue.Option) *taskqueue.Queue {
		return taskqueue.NewSerial(append(opts, taskqueue.WithTarget(taskqueue.NewConcurrent(4)))...)
	}, true},
	{"child/concurrent=4", func(opts ...taskqueue.Option) *taskqueue.Queue {
		return taskqueue.NewConcurrent(4, append(opts, taskqueue.WithTarget(taskqueue.NewConcurrent(8)))...)
	}, false},
	{"grandchild/serial", func(opts ...taskqueue.Option) *taskqueue.Queue {
		child := taskqueue.NewConcurrent(2, taskqueue.WithTarget(taskqueue.NewConcurrent(4)))
		return taskqueue.NewSerial(append(opts, taskqueue.WithTarget(child), taskqueue.WithQuantum(1))...)
	}, true},
}

// forEachKind runs test once per queue kind, each in its own synctest bubble.
func forEachKind(t *testing.T, test func(t *testing.T, k queueKind)) {
	t.Helper()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { test(t, k) })
		})
	}
}

// panics collects the panics a queue's handler receives.
type panics struct {
	mu  sync.Mutex
	got []*taskqueue.PanicError
}

func (p *panics) handler() taskqueue.Option {
	return taskqueue.WithPanicHandler(func(e *taskqueue.PanicError) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.got = append(p.got, e)
	})
}

func (p *panics) take() []*taskqueue.PanicError {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := p.got
	p.got = nil
	return got
}

// block submits tasks that take every slot of q until the returned function
// is called, and waits until they run.
func block(t *testing.T, q *taskqueue.Queue) (release func()) {
	t.Helper()
	gate := make(chan struct{})
	for range q.Stats().Limit {
		q.Go(func() { <-gate })
	}
	synctest.Wait()
	return func() { close(gate) }
}

// panicValue runs f and returns what it panicked with, or nil.
func panicValue(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

func TestRunSyncReturnsTheResult(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		errBad := errors.New("bad")
		if err := q.RunSync(t.Context(), func(context.Context) error { return errBad }); err != errBad {
			t.Errorf("RunSync = %v; want %v", err, errBad)
		}
		v, err := taskqueue.RunSync(t.Context(), q, func(context.Context) (int, error) { return 42, nil })
		if v != 42 || err != nil {
			t.Errorf("RunSync[int] = %v, %v; want 42, nil", v, err)
		}
		v, err = taskqueue.RunSync(t.Context(), q, func(context.Context) (int, error) { return 7, errBad })
		if v != 7 || err != errBad {
			t.Errorf("RunSync[int] = %v, %v; want 7, bad (the value comes with the error)", v, err)
		}
		// The same with a busy queue, where the task runs on a worker.
		release := block(t, q)
		result := make(chan int)
		go func() {
			v, _ := taskqueue.RunSync(t.Context(), q, func(context.Context) (int, error) { return 9, nil })
			result <- v
		}()
		synctest.Wait()
		release()
		if v := <-result; v != 9 {
			t.Errorf("RunSync[int] on a busy queue = %v; want 9", v)
		}
	})
}

func TestRunAsyncResult(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		f := taskqueue.RunAsync(t.Context(), q, func(context.Context) (string, error) { return "hi", nil })
		if v, err := f.Wait(t.Context()); v != "hi" || err != nil {
			t.Errorf("Result = %q, %v; want \"hi\", nil", v, err)
		}
		select {
		case <-f.Done():
		default:
			t.Error("Done() not closed after Result")
		}
		h := q.RunAsync(t.Context(), func(context.Context) error { return nil })
		if err := h.Wait(t.Context()); err != nil || h.Err() != nil {
			t.Errorf("Wait = %v, Err = %v; want nil, nil", err, h.Err())
		}
	})
}

func TestWaitContextBoundsTheWait(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		release := block(t, q)
		h := q.RunAsync(t.Context(), func(context.Context) error { return nil })
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := h.Wait(ctx); err != context.DeadlineExceeded {
			t.Errorf("Wait = %v; want DeadlineExceeded", err)
		}
		f := taskqueue.RunAsync(t.Context(), q, func(context.Context) (int, error) { return 1, nil })
		if v, err := f.Wait(ctx); v != 0 || err != context.DeadlineExceeded {
			t.Errorf("Result = %v, %v; want 0, DeadlineExceeded", v, err)
		}
		if h.Err() != nil {
			t.Errorf("Err() = %v while pending; want nil", h.Err())
		}
		release()
		if err := h.Wait(t.Context()); err != nil {
			t.Errorf("Wait after the queue freed = %v; want nil", err)
		}
	})
}

// onCallerStack reports whether the calling goroutine's stack holds a frame of
// function fn.
func onCallerStack(fn string) bool {
	buf := make([]byte, 64<<10)
	return strings.Contains(string(buf[:runtime.Stack(buf, false)]), fn)
}

func TestRunSyncOnIdleQueueRunsOnCaller(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		inline := false
		q.RunSync(t.Context(), func(context.Context) error {
			inline = onCallerStack("TestRunSyncOnIdleQueueRunsOnCaller")
			return nil
		})
		if !inline {
			t.Error("RunSync on an idle queue did not run on the caller's goroutine")
		}
	})
}

// TestRunSyncFromOwnTask is the re-entry that deadlocks every other Go pool
// on a serial queue: a task waits synchronously for more work on its queue.
func TestRunSyncFromOwnTask(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		var order []string
		h := q.RunAsync(t.Context(), func(ctx context.Context) error {
			order = append(order, "outer")
			type key struct{}
			derived := context.WithValue(ctx, key{}, 1) // the mark survives derivation
			return q.RunSync(derived, func(ctx context.Context) error {
				order = append(order, "inner")
				v, err := taskqueue.RunSync(ctx, q, func(context.Context) (string, error) {
					return "innermost", nil
				})
				order = append(order, v)
				return err
			})
		})
		if err := h.Wait(t.Context()); err != nil {
			t.Fatalf("Wait = %v", err)
		}
		if want := []string{"outer", "inner", "innermost"}; !slices.Equal(order, want) {
			t.Errorf("order = %v; want %v", order, want)
		}
	})
}

// TestRunSyncWithTheTasksContext checks the re-entry rule: RunSync with the
// context a task received runs in the task's place, from the task itself, from
// an iter.Pull body it drives, and from goroutines it starts and waits for,
// the nested functions never overlapping.
func TestRunSyncWithTheTasksContext(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		var in, most atomic.Int32
		nested := func(context.Context) (int, error) {
			n := in.Add(1)
			defer in.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			return 1, nil
		}
		v, err := taskqueue.RunAsync(context.Background(), q, func(ctx context.Context) (int, error) {
			sum := 0
			v, _ := taskqueue.RunSync(ctx, q, nested) // from the task
			sum += v
			next, stop := iter.Pull(func(yield func(int) bool) { // from a body it drives
				v, _ := taskqueue.RunSync(ctx, q, nested)
				yield(v)
			})
			v, _ = next()
			stop()
			sum += v
			var wg sync.WaitGroup
			var total atomic.Int32
			for range 8 { // from goroutines it waits for
				wg.Go(func() {
					v, _ := taskqueue.RunSync(ctx, q, nested)
					total.Add(int32(v))
				})
			}
			wg.Wait()
			return sum + int(total.Load()), nil
		}).Wait(context.Background())
		if v != 10 || err != nil {
			t.Errorf("RunSync with the task's context, 10 times = %d, %v; want 10, nil", v, err)
		}
		if most.Load() != 1 {
			t.Errorf("%d functions run in one task's place overlapped; want none", most.Load())
		}
	})
}

// TestRunSyncFromAnOutsiderWarns checks what RunSync does when called from
// inside a serial queue's task without the task's context: it waits behind
// the task, which here waits for it, until its context ends; meanwhile it
// warns through log/slog that it may be waiting for itself.
func TestRunSyncFromAnOutsiderWarns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logged strings.Builder
		old := slog.Default()
		slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
		defer slog.SetDefault(old)
		q := taskqueue.NewSerial(taskqueue.WithName("ui"))
		done := make(chan error)
		q.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*5*time.Second)
			defer cancel()
			done <- q.RunSync(ctx, func(context.Context) error { return nil })
		})
		if err := <-done; err != context.DeadlineExceeded {
			t.Errorf("RunSync from a Go task of a serial queue = %v; want DeadlineExceeded", err)
		}
		if got := logged.String(); !strings.Contains(got, "may be its caller") || !strings.Contains(got, "queue=ui") {
			t.Errorf("logged %q; want the warning that the call may wait for itself", got)
		}
	})
}

// TestRunSyncAfterTheTaskReturned checks that a context kept past its task's
// end no longer runs in the task's place: the call waits its turn.
func TestRunSyncAfterTheTaskReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		kept := make(chan context.Context, 1)
		q.RunAsync(t.Context(), func(ctx context.Context) error { kept <- ctx; return nil }).Wait(t.Context())
		ctx := <-kept
		release := make(chan struct{})
		q.Go(func() { <-release })
		done := make(chan struct{})
		go func() {
			q.RunSync(ctx, func(context.Context) error { return nil })
			close(done)
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("RunSync with the context of a task that returned ran beside the queue's running task")
		default:
		}
		close(release)
		<-done
	})
}

func TestSubmitToOwnQueueNeverBlocks(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		var ran atomic.Int32
		h := q.RunAsync(t.Context(), func(ctx context.Context) error {
			for range 100 {
				q.RunAsync(ctx, func(context.Context) error { ran.Add(1); return nil })
				if err := q.Go(func() { ran.Add(1) }); err != nil {
					return err
				}
			}
			return nil
		})
		if err := h.Wait(t.Context()); err != nil {
			t.Fatalf("Wait = %v", err)
		}
		synctest.Wait()
		if got := ran.Load(); got != 200 {
			t.Errorf("%d tasks ran; want 200", got)
		}
	})
}

func TestContextDoneBeforeStart(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		ran := false
		run := func(context.Context) error { ran = true; return nil }

		// Done at submission.
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := q.RunAsync(ctx, run).Err(); err != context.Canceled {
			t.Errorf("RunAsync with a canceled context: Err() = %v; want Canceled", err)
		}
		if err := q.RunSync(ctx, run); err != context.Canceled {
			t.Errorf("RunSync with a canceled context = %v; want Canceled", err)
		}

		// Done while queued: the handle completes without waiting for the
		// queue to reach the task.
		release := block(t, q)
		ctx, cancel = context.WithCancel(t.Context())
		h := q.RunAsync(ctx, run)
		done := h.Done()
		cancel()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("handle not done after its context was canceled")
		}
		if h.Err() != context.Canceled {
			t.Errorf("Err() = %v; want Canceled", h.Err())
		}

		// Done while queued, with nobody watching: the queue skips it.
		ctx, cancel = context.WithCancel(t.Context())
		h = q.RunAsync(ctx, run)
		cancel()
		release()
		if err := h.Wait(t.Context()); err != context.Canceled {
			t.Errorf("Wait = %v; want Canceled", err)
		}
		synctest.Wait()
		if ran {
			t.Error("a task whose context was done before it started ran")
		}
		// The tasks refused at submission are not counted.
		if s := q.Stats(); s.Canceled != 2 || s.Completed != uint64(q.Stats().Limit) {
			t.Errorf("Stats() = %+v; want 2 canceled and %d completed (the blockers)", s, q.Stats().Limit)
		}
	})
}

func TestCancel(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		release := block(t, q)
		ran := false
		h := q.RunAsync(t.Context(), func(context.Context) error { ran = true; return nil })
		if !h.Cancel() {
			t.Error("Cancel of a queued task = false; want true")
		}
		if h.Cancel() {
			t.Error("second Cancel = true; want false")
		}
		if h.Err() != context.Canceled {
			t.Errorf("Err() = %v; want Canceled", h.Err())
		}
		started := make(chan struct{})
		running := q.RunBarrier(t.Context(), func(context.Context) error { close(started); return nil })
		release()
		<-started
		if running.Cancel() {
			t.Error("Cancel of a started task = true; want false")
		}
		running.Wait(t.Context())
		synctest.Wait()
		if ran {
			t.Error("canceled task ran")
		}
		if s := q.Stats(); s.Queued != 0 || s.Canceled != 1 {
			t.Errorf("Stats() = %+v; want 0 queued, 1 canceled", s)
		}
	})
}

func TestPanics(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		var p panics
		q := k.new(p.handler())
		errBoom := errors.New("boom")

		// A task with a handle that a caller waits for: the caller gets the
		// panic, and the handler stays out.
		release := block(t, q)
		h := q.RunAsync(t.Context(), func(context.Context) error { panic(errBoom) })
		waited := make(chan error)
		go func() { waited <- h.Wait(t.Context()) }()
		synctest.Wait()
		release()
		err := <-waited
		var pe *taskqueue.PanicError
		if !errors.As(err, &pe) || !errors.Is(err, errBoom) {
			t.Fatalf("Wait = %v; want a *PanicError wrapping boom", err)
		}
		if !strings.Contains(string(pe.Stack), "TestPanics") {
			t.Errorf("stack does not show the panicking task:\n%s", pe.Stack)
		}
		if got := p.take(); len(got) != 0 {
			t.Errorf("handler got %v; want nothing: the waiting caller got the panic", got)
		}
		// A task with a handle that nobody waits for: the handler gets it,
		// and the handle still reports it.
		h = q.RunAsync(t.Context(), func(context.Context) error { panic(errBoom) })
		synctest.Wait()
		if got := p.take(); len(got) != 1 || !errors.Is(got[0], errBoom) || h.Err() != got[0] {
			t.Errorf("handler got %v; want the unwatched handle's panic, which Err reports too", got)
		}

		// RunSync re-panics in the caller; the handler stays out.
		v := panicValue(func() {
			q.RunSync(t.Context(), func(context.Context) error { panic("sync") })
		})
		if pe, ok := v.(*taskqueue.PanicError); !ok || pe.Value != "sync" {
			t.Errorf("RunSync panicked with %v; want a *PanicError of \"sync\"", v)
		}
		release = block(t, q)
		result := make(chan any)
		go func() {
			result <- panicValue(func() {
				taskqueue.RunSync(t.Context(), q, func(context.Context) (int, error) { panic("sync on a worker") })
			})
		}()
		synctest.Wait()
		release()
		if v := <-result; fmt.Sprint(v.(*taskqueue.PanicError).Value) != "sync on a worker" {
			t.Errorf("RunSync on a worker panicked with %v", v)
		}
		if got := p.take(); len(got) != 0 {
			t.Errorf("handler got %d panics that RunSync callers took; want 0", len(got))
		}

		// Go: the handler gets it, and the queue goes on.
		q.Go(func() { panic("go") })
		if err := q.RunSync(t.Context(), func(context.Context) error { return nil }); err != nil {
			t.Errorf("RunSync after a panic = %v", err)
		}
		synctest.Wait()
		if got := p.take(); len(got) != 1 || got[0].Value != "go" {
			t.Errorf("handler got %v; want the panic of the Go task", got)
		}
		if s := q.Stats(); s.Panicked != 5 {
			t.Errorf("Stats().Panicked = %d; want 5", s.Panicked)
		}
	})
}

// TestPanicAfterRunSyncLeft checks that a panic in a RunSync task whose caller
// stopped waiting reaches the handler.
func TestPanicAfterRunSyncLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p panics
		q := taskqueue.NewSerial(p.handler())
		release := block(t, q)
		ctx, cancel := context.WithCancel(t.Context())
		started := make(chan struct{})
		proceed := make(chan struct{})
		result := make(chan error)
		q.Go(func() {}) // keeps RunSync off the idle path
		go func() {
			result <- q.RunSync(ctx, func(context.Context) error {
				close(started)
				<-proceed
				panic("late")
			})
		}()
		synctest.Wait()
		release()
		<-started
		cancel()
		if err := <-result; err != context.Canceled {
			t.Errorf("RunSync = %v; want Canceled", err)
		}
		close(proceed)
		synctest.Wait()
		if got := p.take(); len(got) != 1 || got[0].Value != "late" {
			t.Errorf("handler got %v; want the late panic", got)
		}
	})
}

func TestGoexit(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		h := q.RunAsync(t.Context(), func(context.Context) error { runtime.Goexit(); return nil })
		if err := h.Wait(t.Context()); err != taskqueue.ErrGoexit {
			t.Errorf("Wait = %v; want ErrGoexit", err)
		}
		returned := make(chan bool)
		go func() {
			defer func() { returned <- false }()
			q.RunSync(t.Context(), func(context.Context) error { runtime.Goexit(); return nil })
			returned <- true
		}()
		if <-returned {
			t.Error("RunSync returned after its task called Goexit; want the caller to exit too")
		}
		// The queue goes on.
		if err := q.RunSync(t.Context(), func(context.Context) error { return nil }); err != nil {
			t.Errorf("RunSync after Goexit = %v", err)
		}
	})
}

func TestSerialOrderAndVisibility(t *testing.T) {
	for _, k := range kinds {
		if !k.serial {
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			q := k.new()
			var order []int // no lock: each task sees the writes of the one before
			for i := range 1000 {
				if i%3 == 0 {
					q.Go(func() { order = append(order, i) })
				} else {
					q.RunAsync(t.Context(), func(context.Context) error { order = append(order, i); return nil })
				}
			}
			if err := q.Close(); err != nil {
				t.Fatal(err)
			}
			for i, v := range order {
				if v != i {
					t.Fatalf("order[%d] = %d; want %d", i, v, i)
				}
			}
			if len(order) != 1000 {
				t.Errorf("%d tasks ran; want 1000", len(order))
			}
		})
	}
}

func TestConcurrencyLimit(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		var running, peak atomic.Int32
		gate := make(chan struct{})
		for range 3 * q.Stats().Limit {
			q.Go(func() {
				n := running.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				<-gate
				running.Add(-1)
			})
		}
		synctest.Wait()
		if got := running.Load(); got != int32(q.Stats().Limit) {
			t.Errorf("%d tasks run at once; want %d", got, q.Stats().Limit)
		}
		close(gate)
		q.Close()
		if got := peak.Load(); got != int32(q.Stats().Limit) {
			t.Errorf("peak concurrency %d; want %d", got, q.Stats().Limit)
		}
	})
}

func TestBarrier(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		var running atomic.Int32
		var alone atomic.Bool
		var before, after atomic.Int32
		gate := make(chan struct{})
		for range 4 {
			q.Go(func() { running.Add(1); <-gate; before.Add(1); running.Add(-1) })
		}
		h := q.RunBarrier(t.Context(), func(context.Context) error {
			alone.Store(running.Load() == 0 && before.Load() == 4 && after.Load() == 0)
			return nil
		})
		for range 4 {
			q.Go(func() { after.Add(1) })
		}
		synctest.Wait()
		close(gate)
		if err := h.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		q.Close()
		if !alone.Load() {
			t.Error("barrier did not run alone, after the tasks before it and before those after it")
		}
	})
}

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
		if err := q.Go(func() {}); err != taskqueue.ErrClosed {
			t.Errorf("Go = %v; want ErrClosed", err)
		}
		if err := q.RunAsync(t.Context(), count).Err(); err != taskqueue.ErrClosed {
			t.Errorf("RunAsync: Err() = %v; want ErrClosed", err)
		}
		if err := q.RunBarrier(t.Context(), count).Err(); err != taskqueue.ErrClosed {
			t.Errorf("RunBarrier: Err() = %v; want ErrClosed", err)
		}
		if err := q.RunAfter(t.Context(), time.Second, count).Err(); err != taskqueue.ErrClosed {
			t.Errorf("RunAfter: Err() = %v; want ErrClosed", err)
		}
		if err := q.RunSync(t.Context(), count); err != taskqueue.ErrClosed {
			t.Errorf("RunSync = %v; want ErrClosed", err)
		}
		if _, err := taskqueue.RunSync(t.Context(), q, func(context.Context) (int, error) { return 1, nil }); err != taskqueue.ErrClosed {
			t.Errorf("RunSync[int] = %v; want ErrClosed", err)
		}
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

func TestShutdownFromOwnTaskPanics(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		var msg any
		q.RunSync(t.Context(), func(ctx context.Context) error {
			msg = panicValue(func() { q.Shutdown(ctx) })
			return nil
		})
		if want := "taskqueue: Shutdown from a task of the queue, which would wait for itself"; fmt.Sprint(msg) != want {
			t.Errorf("Shutdown from a task, with its context, panicked with %v; want %q", msg, want)
		}
		if err := q.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
}

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
	})
}

func TestRunSyncContextDone(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		release := block(t, q)
		ran := false
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := q.RunSync(ctx, func(context.Context) error { ran = true; return nil }); err != context.DeadlineExceeded {
			t.Errorf("RunSync while queued = %v; want DeadlineExceeded", err)
		}
		release()
		synctest.Wait()
		if ran {
			t.Error("RunSync task ran after its caller gave up while it was queued")
		}
		if s := q.Stats(); s.Canceled != 1 {
			t.Errorf("Stats().Canceled = %d; want 1", s.Canceled)
		}
	})
}

func TestConstructorAndNilPanics(t *testing.T) {
	q := taskqueue.NewSerial()
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"NewConcurrent(0)", func() { taskqueue.NewConcurrent(0) }, "taskqueue: NewConcurrent(0): concurrency must be positive"},
		{"WithMaxQueued(0)", func() { taskqueue.WithMaxQueued(0) }, "taskqueue: WithMaxQueued(0): bound must be positive"},
		{"WithFailWhenFull alone", func() { taskqueue.NewSerial(taskqueue.WithFailWhenFull()) }, "taskqueue: WithFailWhenFull without WithMaxQueued: an unbounded queue is never full"},
		{"WithPanicHandler(nil)", func() { taskqueue.WithPanicHandler(nil) }, "taskqueue: WithPanicHandler(nil)"},
		{"Go(nil)", func() { q.Go(nil) }, "taskqueue: Go with a nil function"},
		{"RunAsync(nil)", func() { q.RunAsync(context.Background(), nil) }, "taskqueue: RunAsync with a nil function"},
		{"RunSync(nil)", func() { q.RunSync(context.Background(), nil) }, "taskqueue: RunSync with a nil function"},
		{"RunAfter(nil)", func() { q.RunAfter(context.Background(), 1, nil) }, "taskqueue: RunAfter with a nil function"},
		{"RunBarrier(nil)", func() { q.RunBarrier(context.Background(), nil) }, "taskqueue: RunBarrier with a nil function"},
		{"RunAsync[int](nil)", func() { taskqueue.RunAsync[int](context.Background(), q, nil) }, "taskqueue: RunAsync with a nil function"},
		{"RunSync[int](nil)", func() { taskqueue.RunSync[int](context.Background(), q, nil) }, "taskqueue: RunSync with a nil function"},
		{"RunAfter[int](nil)", func() { taskqueue.RunAfter[int](context.Background(), q, 1, nil) }, "taskqueue: RunAfter with a nil function"},
	} {
		if got := fmt.Sprint(panicValue(c.f)); got != c.want {
			t.Errorf("%s panicked with %q; want %q", c.name, got, c.want)
		}
	}
}

func TestTryGo(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		var ran atomic.Int32
		if !q.TryGo(func() { ran.Add(1) }) {
			t.Fatal("TryGo on an idle queue = false")
		}
		synctest.Wait()
		release := block(t, q)
		if q.TryGo(func() { ran.Add(1) }) {
			t.Error("TryGo on a queue with every slot taken = true")
		}
		release()
		synctest.Wait()
		q.Suspend()
		if q.TryGo(func() { ran.Add(1) }) {
			t.Error("TryGo on a suspended queue = true")
		}
		q.Resume()
		q.Close()
		if q.TryGo(func() { ran.Add(1) }) {
			t.Error("TryGo on a closed queue = true")
		}
		if got := ran.Load(); got != 1 {
			t.Errorf("%d TryGo functions ran; want 1", got)
		}
	})
}

// TestStatsOutcomes: every way a task ends is counted once, in its field.
func TestStatsOutcomes(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		ctx := context.Background()
		var p panics
		q := k.new(p.handler())
		errBoom := errors.New("boom")
		q.RunAsync(ctx, func(context.Context) error { return nil }).Wait(ctx)
		q.RunAsync(ctx, func(context.Context) error { return errBoom }).Wait(ctx)
		q.RunAsync(ctx, func(context.Context) error { panic("x") }).Wait(ctx)
		q.RunAsync(ctx, func(context.Context) error { runtime.Goexit(); return nil }).Wait(ctx)
		q.RunSync(ctx, func(context.Context) error { return errBoom })
		q.Go(func() {})
		q.Go(func() { panic("y") })
		q.Close()
		want := taskqueue.Stats{Limit: q.Stats().Limit, Completed: 7, Succeeded: 2, Failed: 3, Panicked: 2} // the limit is the kind's, checked elsewhere
		if got := q.Stats(); got != want {
			t.Errorf("Stats() = %+v; want %+v", got, want)
		}
	})
}
