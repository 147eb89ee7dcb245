package taskqueue_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

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
		before := bubbleGoroutines()
		var ran atomic.Int32
		for i := range 1000 {
			q.RunAfter(t.Context(), time.Duration(i+1)*time.Millisecond, func(context.Context) error {
				ran.Add(1)
				return nil
			})
		}
		synctest.Wait()
		if after := bubbleGoroutines(); after != before {
			t.Errorf("%d goroutines with 1000 delayed tasks; want %d, as before", after, before)
		}
		q.Close()
		if ran.Load() != 1000 {
			t.Errorf("%d delayed tasks ran; want 1000", ran.Load())
		}
	})
}

// TestRunAfterCompaction cancels most of many delayed tasks in random order
// and checks that the rest run, in due order, and nothing canceled does.
func TestRunAfterCompaction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		r := rand.New(rand.NewPCG(7, 8))
		var mu sync.Mutex
		var order []time.Duration
		handles := map[int]*taskqueue.Handle{}
		delays := map[int]time.Duration{}
		for i := range 2000 {
			d := time.Duration(r.IntN(100000)+1) * time.Millisecond
			delays[i] = d
			handles[i] = q.RunAfter(t.Context(), d, func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				order = append(order, d)
				return nil
			})
		}
		var kept []time.Duration
		for i := range 2000 {
			if r.IntN(10) < 8 {
				if !handles[i].Cancel() {
					t.Fatalf("Cancel(%d) = false", i)
				}
			} else {
				kept = append(kept, delays[i])
			}
		}
		if s := q.Stats(); s.Delayed != len(kept) {
			t.Errorf("Stats().Delayed = %d; want %d", s.Delayed, len(kept))
		}
		q.Close()
		slices.Sort(kept)
		if !slices.Equal(order, kept) {
			t.Errorf("ran %d tasks; want the %d kept ones, in due order", len(order), len(kept))
		}
	})
}

// TestDefaultQueuesAcrossBubbles uses the default queues in one synctest
// bubble after another, which works only if they keep no channel, timer or
// goroutine between uses.
func TestDefaultQueuesAcrossBubbles(t *testing.T) {
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				for _, q := range []*taskqueue.Queue{taskqueue.DefaultSerial(), taskqueue.DefaultConcurrent()} {
					h := q.RunAfter(t.Context(), time.Second, func(context.Context) error { return nil })
					v, err := taskqueue.RunSync(t.Context(), q, func(context.Context) (int, error) { return i, nil })
					if v != i || err != nil {
						t.Errorf("RunSync = %v, %v; want %d, nil", v, err, i)
					}
					if err := h.Wait(t.Context()); err != nil {
						t.Errorf("Wait = %v", err)
					}
					q.Go(func() {})
					canceled := q.RunAfter(t.Context(), time.Hour, func(context.Context) error { return nil })
					canceled.Cancel()
				}
				synctest.Wait()
			})
		})
	}
}

func TestDefaultQueues(t *testing.T) {
	var wg sync.WaitGroup
	got := make([]*taskqueue.Queue, 16)
	for i := range got {
		wg.Go(func() {
			if i%2 == 0 {
				got[i] = taskqueue.DefaultSerial()
			} else {
				got[i] = taskqueue.DefaultConcurrent()
			}
		})
	}
	wg.Wait()
	for i, q := range got {
		if q != got[i%2] {
			t.Fatalf("concurrent first use made two default queues")
		}
	}
	if got[0].Stats().Limit != 1 || got[1].Stats().Limit != runtime.GOMAXPROCS(0) {
		t.Errorf("limits %d, %d; want 1, GOMAXPROCS", got[0].Stats().Limit, got[1].Stats().Limit)
	}
	for name, f := range map[string]func(){
		"Close":    func() { taskqueue.DefaultSerial().Close() },
		"Shutdown": func() { taskqueue.DefaultConcurrent().Shutdown(context.Background()) },
		"CloseNow": func() { taskqueue.DefaultSerial().CloseNow() },
	} {
		call := name
		if name == "Close" {
			call = "Shutdown"
		}
		want := "taskqueue: " + call + " of a default queue, which is shared"
		if got := fmt.Sprint(panicValue(f)); got != want {
			t.Errorf("%s panicked with %q; want %q", name, got, want)
		}
	}
}
