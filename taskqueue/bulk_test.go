package taskqueue_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestApplyRunsEachOnce: Apply calls f once for each i in [0, n), for n from
// 0 to ten thousand, on every kind of queue.
func TestApplyRunsEachOnce(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		for _, n := range []int{0, 1, 2, 7, 100, 10_000} {
			counts := make([]atomic.Int32, n)
			if err := taskqueue.Apply(t.Context(), q, n, func(i int) { counts[i].Add(1) }); err != nil {
				t.Fatalf("Apply(%d) = %v", n, err)
			}
			for i := range counts {
				if c := counts[i].Load(); c != 1 {
					t.Fatalf("Apply(%d): iteration %d ran %d times", n, i, c)
				}
			}
		}
	})
}

// A million iterations cost a few hand-offs, not a million.
func TestApplyChunks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(4)
		var sum atomic.Int64
		if err := taskqueue.Apply(t.Context(), q, 1_000_000, func(i int) { sum.Add(int64(i)) }); err != nil {
			t.Fatal(err)
		}
		if want := int64(1_000_000) * 999_999 / 2; sum.Load() != want {
			t.Errorf("sum = %d; want %d", sum.Load(), want)
		}
		synctest.Wait()
		s := q.Stats()
		if tasks := s.Completed + s.Canceled; tasks > uint64(q.Stats().Limit) {
			t.Errorf("Apply of 1e6 iterations took %d tasks of the queue; want at most %d", tasks, q.Stats().Limit)
		}
	})
}

// The caller takes part: on an idle queue of one slot, every iteration runs
// on the calling goroutine; from a task of a serial queue, Apply runs in the
// task's place and cannot deadlock.
func TestApplyCallerTakesPart(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		ran := 0
		err := q.RunSync(t.Context(), func(ctx context.Context) error {
			return taskqueue.Apply(ctx, q, 1000, func(int) {
				if k.serial {
					ran++ // one at a time: on the caller, which holds the only slot
				}
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if k.serial && ran != 1000 {
			t.Errorf("%d iterations ran; want 1000", ran)
		}
		if !k.serial {
			return
		}
		onCaller := 0
		taskqueue.Apply(t.Context(), q, 1000, func(int) {
			if onCallerStack("TestApplyCallerTakesPart") {
				onCaller++
			}
		})
		if onCaller != 1000 {
			t.Errorf("%d of 1000 iterations ran on the caller of an idle serial queue; want all", onCaller)
		}
	})
}

// On a busy queue the caller waits for a slot, and takes none of its own.
func TestApplyBusyQueue(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		release := block(t, q)
		var ran atomic.Int32
		done := make(chan error)
		go func() { done <- taskqueue.Apply(t.Context(), q, 100, func(int) { ran.Add(1) }) }()
		synctest.Wait()
		if ran.Load() != 0 {
			t.Fatal("Apply ran iterations while every slot of its queue was taken")
		}
		release()
		if err := <-done; err != nil || ran.Load() != 100 {
			t.Errorf("Apply = %v after %d iterations; want nil after 100", err, ran.Load())
		}
	})
}

// TestApplyPanic: a panic in f makes Apply panic in its caller with the
// *PanicError, no iteration runs after Apply returned, and the queue goes
// on.
func TestApplyPanic(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		var after atomic.Bool
		var returned atomic.Bool
		v := testkit.PanicValue(func() {
			taskqueue.Apply(t.Context(), q, 10_000, func(i int) {
				if returned.Load() {
					after.Store(true)
				}
				if i == 5000 {
					panic("at 5000")
				}
			})
		})
		returned.Store(true)
		pe, ok := v.(*taskqueue.PanicError)
		if !ok || pe.Value != "at 5000" {
			t.Fatalf("Apply panicked with %v; want a *PanicError of \"at 5000\"", v)
		}
		synctest.Wait()
		if after.Load() {
			t.Error("an iteration ran after Apply returned")
		}
		if err := q.RunSync(t.Context(), func(context.Context) error { return nil }); err != nil {
			t.Errorf("the queue after a panic in Apply: RunSync = %v", err)
		}
	})
}

// TestApplyGoexit: when f calls runtime.Goexit, so does Apply.
func TestApplyGoexit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(2)
		var reached atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			taskqueue.Apply(t.Context(), q, 1000, func(i int) {
				if i == 999 {
					runtime.Goexit()
				}
			})
			reached.Store(true)
		}()
		<-done
		if reached.Load() {
			t.Error("Apply returned after an iteration called runtime.Goexit")
		}
	})
}

// TestApplyContext: once Apply's context is done no chunk starts and Apply
// returns ctx.Err(); with a context done already it calls f for no i.
func TestApplyContext(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		ctx, cancel := context.WithCancel(t.Context())
		var ran atomic.Int32
		err := taskqueue.Apply(ctx, q, 100_000, func(i int) {
			if ran.Add(1) == 10 {
				cancel()
			}
		})
		if err != context.Canceled {
			t.Errorf("Apply = %v; want context.Canceled", err)
		}
		if n := ran.Load(); n == 100_000 {
			t.Error("every iteration ran after the context was done")
		}
		ran.Store(0)
		if err := taskqueue.Apply(ctx, q, 10, func(int) { ran.Add(1) }); err != context.Canceled || ran.Load() != 0 {
			t.Errorf("Apply with a done context = %v after %d iterations; want context.Canceled after 0", err, ran.Load())
		}
	})
}

// TestApplyRefused: Apply returns ErrClosed on a closed queue, and
// ErrQueueFull as RunAsync would when the caller cannot take part and the
// full queue fails when full, and then calls f for no i.
func TestApplyRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ran := false
		apply := func(ctx context.Context, q *taskqueue.Queue) error {
			return taskqueue.Apply(ctx, q, 10, func(int) { ran = true })
		}
		mapIt := func(ctx context.Context, q *taskqueue.Queue) error {
			_, err := taskqueue.Map(ctx, q, make([]int, 10), func(context.Context, int) (int, error) { ran = true; return 0, nil })
			return err
		}
		done, cancel := context.WithCancel(t.Context())
		cancel()
		for _, call := range []struct {
			name string
			f    func(context.Context, *taskqueue.Queue) error
		}{{"Apply", apply}, {"Map", mapIt}} {
			// Each refusal counts one Rejected, as a RunSync's would.
			rejected := func(q *taskqueue.Queue, when string, want uint64) {
				t.Helper()
				if got := q.Stats().Rejected; got != want {
					t.Errorf("%s %s: Stats().Rejected = %d; want %d", call.name, when, got, want)
				}
			}
			q := taskqueue.NewConcurrent(2)
			if err := call.f(done, q); err != context.Canceled || ran {
				t.Errorf("%s with a done context = %v, ran %v; want context.Canceled, nothing run", call.name, err, ran)
			}
			rejected(q, "with a done context", 1)
			q.Close()
			if err := call.f(t.Context(), q); err != taskqueue.ErrClosed || ran {
				t.Errorf("%s on a closed queue = %v, ran %v; want ErrClosed, nothing run", call.name, err, ran)
			}
			rejected(q, "on a closed queue", 2)
			full := taskqueue.NewConcurrent(2, taskqueue.WithMaxQueued(1), taskqueue.WithFailWhenFull())
			release := block(t, full) // the caller finds no free slot
			full.Go(func() {})        // and no room for a helper
			if err := call.f(t.Context(), full); err != taskqueue.ErrQueueFull || ran {
				t.Errorf("%s on a full queue that fails when full = %v, ran %v; want ErrQueueFull, nothing run", call.name, err, ran)
			}
			rejected(full, "on a full queue", 1)
			release()
			full.Close()
		}
	})
}

// TestBulkMisuse: Apply and Map panic, naming the call, with a negative
// count, a nil function or a nil or zero queue.
func TestBulkMisuse(t *testing.T) {
	ctx := context.Background()
	q := taskqueue.NewSerial()
	var zero taskqueue.Queue
	checkMisuses(t, []misuse{
		{"Apply(-1)", func() { taskqueue.Apply(ctx, q, -1, func(int) {}) }, "taskqueue: Apply(-1): the count must not be negative"},
		{"Apply(nil)", func() { taskqueue.Apply(ctx, q, 1, nil) }, "taskqueue: Apply with a nil function"},
		{"Apply(nil queue)", func() { taskqueue.Apply(ctx, nil, 1, func(int) {}) }, "taskqueue: Apply with a nil queue"},
		{"Apply on a zero Queue", func() { taskqueue.Apply(ctx, &zero, 3, func(int) {}) }, "taskqueue: use of a zero Queue; make one with NewSerial or NewConcurrent"},
		{"Map(nil)", func() { taskqueue.Map[int, int](ctx, q, nil, nil) }, "taskqueue: Map with a nil function"},
		{"Map(nil queue)", func() {
			taskqueue.Map(ctx, nil, []int{1}, func(context.Context, int) (int, error) { return 0, nil })
		}, "taskqueue: Map with a nil queue"},
	})
	q.Close()
}

// TestMapInOrder: Map returns the results in the order of the items, on
// every kind of queue.
func TestMapInOrder(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		items := make([]int, 5000)
		for i := range items {
			items[i] = i
		}
		got, err := taskqueue.Map(t.Context(), k.new(), items, func(_ context.Context, v int) (string, error) {
			return strconv.Itoa(v), nil
		})
		if err != nil || len(got) != len(items) {
			t.Fatalf("Map = %d results, %v", len(got), err)
		}
		for i, s := range got {
			if s != strconv.Itoa(i) {
				t.Fatalf("Map()[%d] = %q", i, s)
			}
		}
	})
}

// After an error, no item starts: on a serial queue the order is fixed.
func TestMapError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errBoom := errors.New("boom")
		var seen []int
		got, err := taskqueue.Map(t.Context(), taskqueue.NewSerial(), []int{1, 2, 3, 4, 5}, func(_ context.Context, v int) (int, error) {
			seen = append(seen, v)
			if v == 3 {
				return 0, errBoom
			}
			return v * 10, nil
		})
		if err != errBoom || !slices.Equal(got, []int{10, 20, 0, 0, 0}) || !slices.Equal(seen, []int{1, 2, 3}) {
			t.Errorf("Map = %v, %v after items %v; want [10 20 0 0 0], boom after [1 2 3]", got, err, seen)
		}
	})
}

// TestMapWithoutResults: Map with no results to keep, the parallel loop
// over items that stops at the first error.
func TestMapWithoutResults(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		var sum atomic.Int64
		items := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
		if _, err := taskqueue.Map(t.Context(), q, items, func(_ context.Context, v int64) (struct{}, error) {
			time.Sleep(time.Duration(v) * time.Millisecond)
			sum.Add(v)
			return struct{}{}, nil
		}); err != nil || sum.Load() != 55 {
			t.Errorf("Map = %v, sum %d; want nil, 55", err, sum.Load())
		}
		errBoom := errors.New("boom")
		var started atomic.Int32
		_, err := taskqueue.Map(t.Context(), q, make([]int, 1000), func(context.Context, int) (struct{}, error) {
			started.Add(1)
			time.Sleep(time.Millisecond)
			return struct{}{}, errBoom
		})
		if err != errBoom {
			t.Errorf("Map = %v; want boom", err)
		}
		if n, limit := started.Load(), q.Stats().Limit; n > int32(limit) {
			t.Errorf("%d items started; want at most the %d that run at once when the first fails", n, limit)
		}
	})
}

// TestApplyPanicRunsNothingAfter: once Apply has panicked in its caller with
// the panic of f, no f runs; the helper tasks that took part count in the
// queue's Stats until they have returned to it, which Shutdown waits for.
func TestApplyPanicRunsNothingAfter(t *testing.T) {
	for range 200 {
		q := taskqueue.NewConcurrent(4)
		var running, after atomic.Int32
		var returned atomic.Bool
		msg := testkit.PanicMessage(func() {
			taskqueue.Apply(context.Background(), q, 1000, func(i int) {
				running.Add(1)
				defer running.Add(-1)
				if returned.Load() {
					after.Add(1)
				}
				if i == 500 {
					panic("boom")
				}
			})
		})
		returned.Store(true)
		if !strings.Contains(msg, "boom") {
			t.Fatalf("Apply panicked with %q; want the panic of f", msg)
		}
		if n := running.Load(); n != 0 {
			t.Fatalf("%d calls of f still running when Apply returned", n)
		}
		if err := q.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := after.Load(); n != 0 {
			t.Fatalf("%d calls of f started after Apply returned", n)
		}
		if st := q.Stats(); st.Running != 0 || st.Queued != 0 {
			t.Fatalf("after Shutdown: %+v; want nothing running or queued", st)
		}
	}
}

// TestObserverSeesApplyAndMapParts: the helpers of Apply and Map, and the
// caller's own part, are tasks of the queue: its Observer hears each start
// and end, as many as Stats counts, whether the call comes from outside or
// from a task of the queue.
func TestObserverSeesApplyAndMapParts(t *testing.T) {
	ctx := context.Background()
	for _, from := range []string{"outside", "a task"} {
		var obs recorder
		q := taskqueue.NewConcurrent(2, taskqueue.WithObserver(&obs))
		call := func(ctx context.Context) error {
			if err := taskqueue.Apply(ctx, q, 1000, func(int) {}); err != nil {
				return err
			}
			_, err := taskqueue.Map(ctx, q, []int{1, 2, 3}, func(_ context.Context, x int) (int, error) { return x, nil })
			return err
		}
		var err error
		if from == "outside" {
			err = call(ctx)
		} else {
			err = q.RunAsync(ctx, call).Wait(ctx)
		}
		if err != nil {
			t.Fatalf("from %s: %v", from, err)
		}
		q.Close()
		s := q.Stats()
		obs.mu.Lock()
		started, ended := obs.started, len(obs.ended)
		obs.mu.Unlock()
		if uint64(started) != s.Completed || uint64(ended) != s.Completed || s.Completed < 2 {
			t.Errorf("from %s: the Observer heard %d starts and %d ends; Stats counts %d tasks completed", from, started, ended, s.Completed)
		}
	}
}
