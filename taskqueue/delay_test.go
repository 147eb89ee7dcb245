package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

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

// TestRunAfterDueOrder checks that delayed tasks on a serial queue start in
// due order, and in submission order when they come due together.
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
				var subs []sub
				var mu sync.Mutex
				var order []int
				for n := range 200 {
					d := time.Duration(r.IntN(20)+1) * time.Second // many equal delays
					subs = append(subs, sub{d, n})
					q.RunAfter(t.Context(), d, func(context.Context) error {
						mu.Lock()
						defer mu.Unlock()
						order = append(order, n)
						return nil
					})
				}
				if err := q.Close(); err != nil {
					t.Fatal(err)
				}
				slices.SortStableFunc(subs, func(a, b sub) int { return int(a.delay - b.delay) })
				for i, s := range subs {
					if order[i] != s.n {
						t.Fatalf("task %d started %dth; want task %d (due order, then submission order)", order[i], i, s.n)
					}
				}
			})
		})
	}
}

// Delayed tasks never start early and, on a serial queue, start in due order,
// in submission order when due together, mixed with d <= 0 tasks.
func TestOutsideRunAfterDueOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		ctx := context.Background()
		t0 := time.Now()
		delays := []time.Duration{5, 3, 3, 0, 7, 1, -2, 3, 5, 1, 0, 2}
		type rec struct {
			i  int
			at time.Duration
		}
		var mu sync.Mutex
		var got []rec
		var hs []*taskqueue.Handle
		for i, d := range delays {
			d := d * time.Second
			hs = append(hs, q.RunAfter(ctx, d, func(context.Context) error {
				mu.Lock()
				got = append(got, rec{i, time.Since(t0)})
				mu.Unlock()
				return nil
			}))
		}
		if st := q.Stats(); st.Delayed != 9 {
			t.Errorf("Stats.Delayed = %d, want 9", st.Delayed)
		}
		for _, h := range hs {
			if err := h.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
		// expected: stable sort by max(d,0)
		want := []int{3, 6, 10, 5, 9, 11, 1, 2, 7, 0, 8, 4}
		if len(got) != len(want) {
			t.Fatalf("ran %d", len(got))
		}
		for k, r := range got {
			d := delays[r.i] * time.Second
			if r.at < d {
				t.Errorf("task %d (delay %v) started early at %v", r.i, d, r.at)
			}
			if r.i != want[k] {
				t.Errorf("start %d was task %d, want %d (all: %v)", k, r.i, want[k], got)
			}
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

func TestRunAfterCancelLeavesTheTimer(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		ran := false
		run := func(context.Context) error { ran = true; return nil }
		early := q.RunAfter(t.Context(), time.Minute, run)
		late := q.RunAfter(t.Context(), time.Hour, run)
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
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		if ran {
			t.Error("a canceled delayed task ran")
		}
		if s := q.Stats(); s.Delayed != 0 || s.Canceled != 2 {
			t.Errorf("Stats() = %+v; want 0 delayed, 2 canceled", s)
		}
	})
}

// A delayed task whose context ends, or that is canceled, leaves the timer at
// once: its handle is done without waiting for the due time, and Stats shows it.
func TestOutsideRunAfterCancelWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(2, taskqueue.WithMaxQueued(2), taskqueue.WithFailWhenFull())
		ctx, cancel := context.WithCancel(context.Background())
		var ran atomic.Int32
		h1 := q.RunAfter(ctx, time.Hour, func(context.Context) error { ran.Add(1); return nil })
		h2 := q.RunAfter(context.Background(), time.Hour, func(context.Context) error { ran.Add(1); return nil })
		if err := q.Go(func() {}); !errors.Is(err, taskqueue.ErrQueueFull) {
			t.Fatalf("Go on a queue full of delayed tasks: %v, want ErrQueueFull", err)
		}
		cancel()
		synctest.Wait()
		if !h1.IsDone() || !errors.Is(h1.Err(), context.Canceled) {
			t.Fatalf("delayed task whose context ended: done %v err %v", h1.IsDone(), h1.Err())
		}
		if !h2.Cancel() {
			t.Fatal("Cancel of a waiting delayed task returned false")
		}
		if !errors.Is(h2.Err(), context.Canceled) {
			t.Fatalf("Err after Cancel: %v", h2.Err())
		}
		// Room is free at once.
		if err := q.Go(func() {}); err != nil {
			t.Fatalf("Go after the delayed tasks left: %v", err)
		}
		q.Close()
		st := q.Stats()
		if st.Delayed != 0 || st.Canceled != 2 || st.Completed != 1 {
			t.Errorf("stats %+v, want Delayed 0, Canceled 2, Completed 1", st)
		}
		if ran.Load() != 0 {
			t.Fatal("canceled delayed task ran")
		}
	})
}

// TestRunAfterContextWatched checks that a delayed task whose context ends
// leaves the queue at once, without anyone waiting on its handle.
func TestRunAfterContextWatched(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
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
	})
}

// TestRunAfterHoldsNoGoroutine checks that waiting tasks cost no goroutine.
func TestRunAfterHoldsNoGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(4)
		before := testkit.BubbleGoroutines()
		var ran atomic.Int32
		for i := range 1000 {
			q.RunAfter(t.Context(), time.Duration(i+1)*time.Millisecond, func(context.Context) error {
				ran.Add(1)
				return nil
			})
		}
		synctest.Wait()
		if after := testkit.BubbleGoroutines(); after != before {
			t.Errorf("%d goroutines with 1000 delayed tasks; want %d, as before", after, before)
		}
		q.Close()
		if ran.Load() != 1000 {
			t.Errorf("%d delayed tasks ran; want 1000", ran.Load())
		}
	})
}

func TestRunAfterMisuse(t *testing.T) {
	ctx := context.Background()
	q := taskqueue.NewSerial()
	checkMisuses(t, []misuse{
		{"RunAfter(nil)", func() { q.RunAfter(ctx, 1, nil) }, "taskqueue: RunAfter with a nil function"},
		{"RunAfter[int](nil)", func() { taskqueue.RunAfter[int](ctx, q, 1, nil) }, "taskqueue: RunAfter with a nil function"},
	})
	q.Close()
}
