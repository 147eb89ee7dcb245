package taskqueue_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestRunAfterNeverStartsEarly: a delayed task starts exactly when it comes
// due, not a nanosecond before, and leaves no timer behind; the typed
// RunAfter gives its value.
func TestRunAfterNeverStartsEarly(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		start := time.Now()
		var ranAt atomic.Int64
		h := q.RunAfter(t.Context(), time.Hour, func(context.Context) error {
			ranAt.Store(int64(time.Since(start)))
			return nil
		})
		time.Sleep(time.Hour - time.Nanosecond)
		synctest.Wait()
		if ranAt.Load() != 0 {
			t.Fatalf("task ran after %v; want 1h", time.Duration(ranAt.Load()))
		}
		if err := h.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := time.Duration(ranAt.Load()); got != time.Hour {
			t.Errorf("task ran after %v; want 1h", got)
		}
		if q.HasTimer() {
			t.Error("queue keeps a timer with no delayed task")
		}
		f := taskqueue.RunAfter(t.Context(), q, time.Minute, func(context.Context) (time.Duration, error) {
			return time.Since(start), nil
		})
		if v, err := f.Wait(t.Context()); v != time.Hour+time.Minute || err != nil {
			t.Errorf("RunAfter[Duration] = %v, %v; want 1h1m0s, nil", v, err)
		}
	})
}

// TestRunAfterDueOrder: on a serial queue, delayed tasks start in the order
// they come due, in submission order when they come due together, none
// early, and a task with d <= 0 is RunAsync: it starts at once, in its turn,
// and is never counted as delayed. The due times are durations on the
// monotonic clock: keyed by wall-clock nanoseconds, a step of the wall clock
// would reorder them.
func TestRunAfterDueOrder(t *testing.T) {
	for _, k := range kinds {
		if !k.serial {
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := k.new()
				r := rand.New(rand.NewPCG(5, 6))
				type sub struct {
					delay time.Duration
					n     int
				}
				type start struct {
					n  int
					at time.Duration
				}
				var subs []sub
				var mu sync.Mutex
				var started []start
				t0 := time.Now()
				delayed := 0
				for n := range 200 {
					d := time.Duration(r.IntN(23)-2) * time.Second // many equal delays, some <= 0
					if d > 0 {
						delayed++
					}
					subs = append(subs, sub{max(d, 0), n})
					q.RunAfter(t.Context(), d, func(context.Context) error {
						mu.Lock()
						defer mu.Unlock()
						started = append(started, start{n, time.Since(t0)})
						return nil
					})
				}
				if s := q.Stats(); s.Delayed != delayed {
					t.Errorf("Stats().Delayed = %d; want the %d tasks with d > 0", s.Delayed, delayed)
				}
				if err := q.Close(); err != nil {
					t.Fatal(err)
				}
				slices.SortStableFunc(subs, func(a, b sub) int { return int(a.delay - b.delay) })
				for i, s := range subs {
					if started[i].n != s.n {
						t.Fatalf("task %d started %dth; want task %d (due order, then submission order)", started[i].n, i, s.n)
					}
					if started[i].at != s.delay {
						t.Errorf("task %d started after %v; want %v", s.n, started[i].at, s.delay)
					}
				}
			})
		})
	}
}

// TestRunAfterCancelLeavesTheTimer: a canceled delayed task leaves the
// queue's timer and its room in a bounded queue at once, completes with
// context.Canceled, and never runs.
func TestRunAfterCancelLeavesTheTimer(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new(taskqueue.WithMaxQueued(2), taskqueue.WithFailWhenFull())
		ran := false
		run := func(context.Context) error { ran = true; return nil }
		early := q.RunAfter(t.Context(), time.Minute, run)
		late := q.RunAfter(t.Context(), time.Hour, run)
		if err := q.Go(func() {}); err != taskqueue.ErrQueueFull {
			t.Errorf("Go on a queue full of delayed tasks = %v; want ErrQueueFull", err)
		}
		if !early.Cancel() {
			t.Fatal("Cancel of a delayed task = false; want true")
		}
		if s := q.Stats(); s.Delayed != 1 {
			t.Errorf("Stats().Delayed = %d; want 1", s.Delayed)
		}
		if !late.Cancel() {
			t.Fatal("Cancel of a delayed task = false; want true")
		}
		if q.HasTimer() {
			t.Error("queue keeps its timer after every delayed task was canceled")
		}
		if early.Err() != context.Canceled || late.Err() != context.Canceled {
			t.Errorf("Err() = %v, %v; want Canceled twice", early.Err(), late.Err())
		}
		if err := q.Go(func() {}); err != nil {
			t.Errorf("Go once the delayed tasks were canceled = %v; want nil: their room is free at once", err)
		}
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		if ran {
			t.Error("a canceled delayed task ran")
		}
		if s := q.Stats(); s.Delayed != 0 || s.Canceled != 2 || s.Completed != 1 || s.Rejected != 1 {
			t.Errorf("Stats() = %+v; want 0 delayed, 2 canceled, 1 completed, 1 rejected", s)
		}
	})
}

// TestRunAfterContextWatched: a delayed task whose context ends leaves the
// queue's timer and its room in a bounded queue at once, without anyone
// waiting on its handle.
func TestRunAfterContextWatched(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new(taskqueue.WithMaxQueued(1), taskqueue.WithFailWhenFull())
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		h := q.RunAfter(ctx, time.Hour, func(context.Context) error { return nil })
		time.Sleep(time.Minute)
		synctest.Wait()
		if h.Err() != context.DeadlineExceeded {
			t.Errorf("Err() = %v one minute in; want DeadlineExceeded", h.Err())
		}
		if q.HasTimer() {
			t.Error("queue keeps its timer for a task whose context ended")
		}
		if err := q.Go(func() {}); err != nil {
			t.Errorf("Go once the delayed task's context ended = %v; want nil: its room is free", err)
		}
	})
}

// endingCtx is a context that ends between two looks at it: its first Err
// reports nil, every later one context.Canceled, as a context canceled by
// another goroutine while RunAfter queues its task would.
type endingCtx struct {
	context.Context
	looks atomic.Int32
	done  chan struct{}
}

func (c *endingCtx) Done() <-chan struct{} { return c.done }

func (c *endingCtx) Err() error {
	if c.looks.Add(1) == 1 {
		return nil
	}
	return context.Canceled
}

// TestRunAfterWithAContextThatEndsAsItIsQueued: a context that ends while
// RunAfter puts its task in the delayed heap cancels the task, which never
// runs; RunAfter returns (it took the queue's lock for the heap, and the
// cancel takes it too: a cancel made under it would wait for itself).
func TestRunAfterWithAContextThatEndsAsItIsQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		ctx := &endingCtx{Context: context.Background(), done: make(chan struct{})}
		ran := false
		h := q.RunAfter(ctx, time.Second, func(context.Context) error { ran = true; return nil })
		time.Sleep(2 * time.Second)
		if err := h.Err(); err != context.Canceled || ran {
			t.Errorf("a delayed task whose context ended as it was queued: Err() = %v, ran %v; want Canceled, never run", err, ran)
		}
		if st := q.Stats(); st.Canceled != 1 || st.Delayed != 0 || q.HasTimer() {
			t.Errorf("Stats() = %+v, a timer %v; want the task canceled, none delayed, no timer", st, q.HasTimer())
		}
		q.Close()
	})
}

// TestRunAfterHoldsNoGoroutine checks that waiting tasks cost no goroutine:
// 1,000 of them wait in the queue's heap, on its one timer, and none runs
// or is queued on its scheduler, whose workers are its only goroutines.
func TestRunAfterHoldsNoGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(4)
		var ran atomic.Int32
		for i := range 1000 {
			q.RunAfter(t.Context(), time.Duration(i+1)*time.Millisecond, func(context.Context) error {
				ran.Add(1)
				return nil
			})
		}
		synctest.Wait()
		if st := q.Stats(); st.Delayed != 1000 || st.Running != 0 || st.Queued != 0 || !q.HasTimer() {
			t.Errorf("1000 delayed tasks: Stats() = %+v, a timer %v; want 1000 delayed, none running or queued, one timer", st, q.HasTimer())
		}
		q.Close()
		if ran.Load() != 1000 {
			t.Errorf("%d delayed tasks ran; want 1000", ran.Load())
		}
	})
}

// TestRunAfterMisuse: RunAfter and the typed RunAfter panic with a nil
// function.
func TestRunAfterMisuse(t *testing.T) {
	ctx := context.Background()
	q := taskqueue.NewSerial()
	checkMisuses(t, []misuse{
		{"RunAfter(nil)", func() { q.RunAfter(ctx, 1, nil) }, "taskqueue: RunAfter with a nil function"},
		{"RunAfter[int](nil)", func() { taskqueue.RunAfter[int](ctx, q, 1, nil) }, "taskqueue: RunAfter with a nil function"},
	})
	q.Close()
}
