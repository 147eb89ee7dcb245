package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestRunSyncReturnsTheResult: RunSync returns f's error, and the typed
// RunSync its value with its error, on the caller and on a worker.
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

// TestRunSyncOnIdleQueueRunsOnCaller: RunSync on an idle queue runs f on the
// calling goroutine.
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

// TestRunSyncContextDone: RunSync whose context ends while f is queued
// returns ctx.Err(), and f never runs; Stats counts it as canceled.
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

// TestRunSyncContextDoneWhileFRuns: when the caller's context is done while
// f runs on a worker, RunSync returns ctx.Err() at once, f runs on, and its
// panic, which no caller will see, goes to the queue's panic handler, once.
func TestRunSyncContextDoneWhileFRuns(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		var p panics
		q := k.new(taskqueue.WithPanicHandler(p.Add))
		release := block(t, q) // RunSync waits for a worker
		ctx, cancel := context.WithCancel(t.Context())
		started := make(chan struct{})
		proceed := make(chan struct{})
		result := make(chan error, 1)
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
		synctest.Wait()
		select {
		case err := <-result:
			if err != context.Canceled {
				t.Errorf("RunSync = %v; want Canceled", err)
			}
		default:
			t.Fatal("RunSync did not return at once when its context ended while f ran on a worker")
		}
		close(proceed)
		q.Close()
		if got := p.Take(); len(got) != 1 || got[0].Value != "late" {
			t.Errorf("handler got %v; want the late panic, once", got)
		}
	})
}

// outcome runs call on a goroutine of its own and reports how it ended.
type outcome struct {
	returned bool
	panicked any
	goexit   bool
}

func runOn(call func()) <-chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		var o outcome
		normal := false
		defer func() {
			if !normal {
				o.panicked = recover()
				o.goexit = o.panicked == nil
			}
			ch <- o
		}()
		call()
		o.returned = true
		normal = true
	}()
	return ch
}

// syncPaths runs RunSync(f) on q on its three paths: idle (on the caller),
// busy (on a worker, with the generic RunSync) and in the place of a running
// task, and gives each outcome.
func syncPaths(t *testing.T, q *taskqueue.Queue, f func(context.Context) error) map[string]outcome {
	ctx := context.Background()
	res := map[string]outcome{}
	res["idle"] = <-runOn(func() { q.RunSync(ctx, f) })
	release := block(t, q)
	ch := runOn(func() {
		taskqueue.RunSync(ctx, q, func(ctx context.Context) (int, error) { return 1, f(ctx) })
	})
	synctest.Wait()
	release()
	res["worker"] = <-ch
	err := q.RunAsync(ctx, func(tctx context.Context) error {
		res["inplace"] = <-runOn(func() { q.RunSync(tctx, f) })
		return nil
	}).Wait(ctx)
	if err != nil {
		t.Fatalf("outer task: %v", err)
	}
	return res
}

// TestRunSyncRepanicsOnEveryPath: RunSync panics in its caller with f's
// panic as a *PanicError, holding the value and f's stack, on each of the
// three paths f can run on, and the handler does not see it.
func TestRunSyncRepanicsOnEveryPath(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		var p panics
		q := k.new(taskqueue.WithName("pp"), taskqueue.WithPanicHandler(p.Add))
		res := syncPaths(t, q, func(context.Context) error { panic("boom") })
		for name, o := range res {
			pe, ok := o.panicked.(*taskqueue.PanicError)
			if !ok {
				t.Errorf("%s: RunSync ended with %+v, want a *PanicError panic", name, o)
				continue
			}
			if fmt.Sprint(pe.Value) != "boom" || !strings.Contains(string(pe.Stack), "TestRunSyncRepanicsOnEveryPath") {
				t.Errorf("%s: PanicError value %v; want boom, with a stack that shows f:\n%s", name, pe.Value, pe.Stack)
			}
		}
		q.Close()
		if got := p.Take(); len(got) != 0 {
			t.Errorf("handler saw %d panics that RunSync re-panicked; want none", len(got))
		}
		if s := q.Stats(); s.Panicked != 3 {
			t.Errorf("Stats().Panicked = %d; want 3, one a path", s.Panicked)
		}
	})
}

// TestRunSyncGoexitOnEveryPath: when f calls runtime.Goexit, RunSync calls
// it too, on each of the three paths f can run on, and the queue goes on.
func TestRunSyncGoexitOnEveryPath(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		res := syncPaths(t, q, func(context.Context) error { runtime.Goexit(); return nil })
		for name, o := range res {
			if !o.goexit {
				t.Errorf("%s: RunSync ended with %+v after f called runtime.Goexit, want Goexit", name, o)
			}
		}
		if err := q.RunSync(context.Background(), nop); err != nil {
			t.Errorf("RunSync after Goexit = %v", err)
		}
		q.Close()
	})
}

// TestRunSyncOnAClosedQueueFromATask: RunSync on a closed queue returns
// ErrClosed, as to anyone, also from a task whose wait for that queue would
// wait for itself: there is no wait to judge.
func TestRunSyncOnAClosedQueueFromATask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewSerial()
		child := taskqueue.NewSerial(taskqueue.WithTarget(target))
		child.Close()
		var err error
		target.RunSync(t.Context(), func(ctx context.Context) error {
			err = child.RunSync(ctx, func(context.Context) error { return nil })
			return nil
		})
		if !errors.Is(err, taskqueue.ErrClosed) {
			t.Errorf("RunSync on a closed child from a task of its serial target: %v; want ErrClosed", err)
		}
		target.Close()
	})
}

// taskWithHelpers runs on q one task whose n helpers call RunSync with its
// context, each after ready is closed, and returns the task's handle and how
// many helper functions ran; gauge g counts what executes.
func taskWithHelpers(t *testing.T, ctx context.Context, q *taskqueue.Queue, g *testkit.Gauge, n int, started chan<- struct{}, ready <-chan struct{}) (*taskqueue.Handle, *atomic.Int64) {
	var ran atomic.Int64
	h := q.RunAsync(ctx, func(tctx context.Context) error {
		close(started)
		<-ready
		var wg sync.WaitGroup
		for k := 0; k < n; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := q.RunSync(tctx, func(context.Context) error {
					g.Enter("in place")
					ran.Add(1)
					runtime.Gosched()
					g.Leave()
					return nil
				}); err != nil {
					t.Errorf("helper RunSync: %v", err)
				}
			}()
		}
		wg.Wait()
		return nil
	})
	return h, &ran
}

// TestRunSyncBelowASuspendedQueueFromItsTask: Suspend's doc: a RunSync on
// a queue below a suspended q waits, but one that a running task of q makes
// on an idle queue below it runs at once, in the task's place. A task of a
// serial parent, started before Suspend, calls RunSync on its idle serial
// child and gets its function run; an outsider's RunSync on the child waits
// until Resume.
func TestRunSyncBelowASuspendedQueueFromItsTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent := taskqueue.NewSerial()
		child := taskqueue.NewSerial(taskqueue.WithTarget(parent))
		suspended := make(chan struct{})
		var fromTask error
		ran := false
		h := parent.RunAsync(t.Context(), func(ctx context.Context) error {
			<-suspended
			fromTask = child.RunSync(ctx, func(context.Context) error { ran = true; return nil })
			return nil
		})
		synctest.Wait()
		parent.Suspend()
		close(suspended)
		synctest.Wait()
		if !ran || fromTask != nil || !h.IsDone() {
			t.Fatalf("the parent's task's RunSync on its idle child: ran %v, %v, task done %v; want run at once, nil, done", ran, fromTask, h.IsDone())
		}
		outsider := make(chan error, 1)
		go func() { outsider <- child.RunSync(t.Context(), func(context.Context) error { return nil }) }()
		synctest.Wait()
		select {
		case err := <-outsider:
			t.Fatalf("an outsider's RunSync on the child of a suspended queue returned %v before Resume", err)
		default:
		}
		parent.Resume()
		if err := <-outsider; err != nil {
			t.Errorf("the outsider's RunSync after Resume: %v", err)
		}
		parent.Close()
	})
}

// Docs, Suspend: "A RunSync on a suspended queue waits, unless it comes from
// one of q's running tasks, which it runs in place of"; Shutdown: "except
// RunSync from one of q's tasks, which runs in the task's place and adds no
// work" (CloseNow closes as Shutdown does). Helpers of a running task call
// RunSync with its context after the queue is suspended, or closed with
// CloseNow. A broken queue makes them wait for Resume (a hang: the deadline
// reports it), refuses them with ErrClosed, or runs them beside each other.
func TestRunSyncInPlaceWhileSuspendedOrClosed(t *testing.T) {
	for _, mode := range []string{"suspend", "closenow"} {
		for _, kind := range []string{"serial", "concurrent(2)"} {
			t.Run(mode+"/"+kind, func(t *testing.T) {
				q := taskqueue.NewSerial()
				limit := 1
				if kind != "serial" {
					q, limit = taskqueue.NewConcurrent(2), 2
				}
				g := newGauge(kind, limit)
				ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
				defer cancel()
				started, ready := make(chan struct{}), make(chan struct{})
				h, ran := taskWithHelpers(t, ctx, q, g, 8, started, ready)
				// a second task queued behind, which CloseNow cancels
				h2 := q.RunAsync(ctx, func(context.Context) error {
					g.Enter("queued task")
					g.Leave()
					return nil
				})
				<-started
				if mode == "suspend" {
					q.Suspend()
				} else {
					q.CloseNow()
				}
				close(ready)
				if err := h.Wait(ctx); err != nil {
					t.Errorf("task: %v", err)
				}
				if ran.Load() != 8 {
					t.Errorf("%d of 8 in-place functions ran", ran.Load())
				}
				if mode == "suspend" {
					q.Resume()
					if err := h2.Wait(ctx); err != nil {
						t.Errorf("queued task: %v", err)
					}
				} else if err := h2.Wait(ctx); kind == "serial" && !errors.Is(err, taskqueue.ErrClosed) {
					t.Errorf("queued task after CloseNow: %v, want ErrClosed", err)
				}
				checkGauges(t, g)
			})
		}
	}
}

// TestRunSyncMisuse: RunSync and the typed RunSync panic with a nil
// function.
func TestRunSyncMisuse(t *testing.T) {
	ctx := context.Background()
	q := taskqueue.NewSerial()
	checkMisuses(t, []misuse{
		{"RunSync(nil)", func() { q.RunSync(ctx, nil) }, "taskqueue: RunSync with a nil function"},
		{"RunSync[int](nil)", func() { taskqueue.RunSync[int](ctx, q, nil) }, "taskqueue: RunSync with a nil function"},
	})
	q.Close()
}

// TestRunSyncAllocations: RunSync costs one allocation, the record that is
// f's context, on the caller of an idle queue and in the place of a task.
func TestRunSyncAllocations(t *testing.T) {
	ctx := context.Background()
	for _, q := range []*taskqueue.Queue{taskqueue.NewSerial(), taskqueue.NewConcurrent(4)} {
		if a := testing.AllocsPerRun(100, func() { q.RunSync(ctx, nop) }); a != 1 {
			t.Errorf("limit %d: RunSync on an idle queue allocates %v times a call; want 1", q.Stats().Limit, a)
		}
		q.RunSync(ctx, func(task context.Context) error {
			if a := testing.AllocsPerRun(100, func() { q.RunSync(task, nop) }); a != 1 {
				t.Errorf("limit %d: RunSync in a task's place allocates %v times a call; want 1", q.Stats().Limit, a)
			}
			return nil
		})
		q.Close()
	}
}
