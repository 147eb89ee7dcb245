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

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestKeyedOrderAndParallelism: the tasks of one key run one at a time in
// order; different keys run at once, up to the target's limit.
func TestKeyedOrderAndParallelism(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		target := taskqueue.NewConcurrent(3)
		k := taskqueue.NewKeyed[string](target)
		gate := make(chan struct{})
		var now, peak atomic.Int32
		seen := map[string][]int{}
		var mu sync.Mutex
		for i := range 30 {
			key := fmt.Sprint("key", i%5)
			k.Go(key, func() {
				n := now.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				<-gate
				mu.Lock()
				seen[key] = append(seen[key], i)
				mu.Unlock()
				now.Add(-1)
			})
		}
		synctest.Wait()
		if n := now.Load(); n != 3 {
			t.Errorf("%d tasks run at once for 5 keys on a target of limit 3; want 3", n)
		}
		if n := k.Lanes(); n != 5 {
			t.Errorf("Lanes() = %d with 5 keys at work; want 5", n)
		}
		close(gate)
		if err := k.RunSync(ctx, "key0", func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if err := target.Close(); err != nil {
			t.Fatal(err)
		}
		for key, got := range seen {
			for j := 1; j < len(got); j++ {
				if got[j] < got[j-1] {
					t.Errorf("%s ran %v: out of order", key, got)
					break
				}
			}
		}
		if p := peak.Load(); p > 3 {
			t.Errorf("%d tasks ran at once; the target's limit is 3", p)
		}
		if n := k.Lanes(); n != 0 {
			t.Errorf("Lanes() = %d once every key is idle; want 0", n)
		}
		if err := k.Go("late", func() {}); err != taskqueue.ErrClosed {
			t.Errorf("Go on a Keyed of a closed target = %v; want ErrClosed", err)
		}
	})
}

// TestKeyedRunSyncFromOwnKey: a task of a key that calls RunSync on its own
// key runs the inner function in its place; on another key, it waits.
func TestKeyedRunSyncFromOwnKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		k := taskqueue.NewKeyed[int](taskqueue.NewConcurrent(2))
		var got []string
		err := k.RunAsync(ctx, 1, func(ctx context.Context) error {
			got = append(got, "outer")
			if err := k.RunSync(ctx, 1, func(context.Context) error { got = append(got, "own key"); return nil }); err != nil {
				return err
			}
			return k.RunSync(ctx, 2, func(context.Context) error { got = append(got, "other key"); return nil })
		}).Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != "[outer own key other key]" {
			t.Errorf("ran %v", got)
		}
	})
}

// TestKeyedMemoryFollowsKeysWithWork: keys used once leave no lane behind.
// A Keyed keeps a bounded number of idle lanes to reuse (filled first), so
// the heap is measured after a first round of n keys and again after a second
// round of n other keys: the second round must not grow it.
func TestKeyedMemoryFollowsKeysWithWork(t *testing.T) {
	if raceEnabled {
		// The race detector's own allocations move the live heap by tens of
		// kilobytes between two measurements of the same state; this test
		// runs without it (.ci/run runs the memory tests a second time, so).
		t.Skip("heap measurements are meaningless under the race detector")
	}
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	target := taskqueue.NewConcurrent(runtime.GOMAXPROCS(0))
	k := taskqueue.NewKeyed[int](target)
	var ran atomic.Int64
	round := func(first int) {
		for key := first; key < first+n; key++ {
			k.Go(key, func() { ran.Add(1) })
		}
		if err := target.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// The Keyed keeps up to maxFreeLanes idle lanes for reuse, as many as
	// were ever alive at once, which depends on timing: fill that pool first,
	// with 300 keys whose tasks wait together, so that the rounds measure
	// what follows the keys and not how full the pool happened to get.
	gate := make(chan struct{})
	for key := -300; key < 0; key++ {
		k.Go(key, func() { <-gate })
	}
	close(gate)
	round(0)
	before := liveHeap()
	round(n)
	grown := liveHeap() - before
	if ran.Load() != int64(2*n) {
		t.Errorf("%d tasks ran; want %d", ran.Load(), 2*n)
	}
	if l := k.Lanes(); l != 0 {
		t.Errorf("%d lanes left once idle; want 0", l)
	}
	t.Logf("%d more keys, each used once, grew the heap by %d bytes (%.3f B per key)", n, grown, float64(grown)/float64(n))
	if per := float64(grown) / float64(n); per > 0.1 {
		t.Errorf("the heap grew by %.3f B per key ever seen; want it to follow the keys with work (none)", per)
	}
	target.Close()
}

// TestKeyedHammer submits from many goroutines to a few hundred keys at
// random, with cancels, and checks that each key's tasks ran in order,
// exactly once or canceled, and that no lane is left.
func TestKeyedHammer(t *testing.T) {
	total := 200_000
	if testing.Short() {
		total = 20_000
	}
	ctx := context.Background()
	target := taskqueue.NewConcurrent(4)
	k := taskqueue.NewKeyed[int](target, taskqueue.WithQuantum(3))
	const submitters, keys = 8, 300
	last := make([]atomic.Int64, keys*submitters) // per key and submitter: the last sequence number run
	var bad, done atomic.Int64
	var wg sync.WaitGroup
	for sub := range submitters {
		wg.Go(func() {
			for i := range total / submitters {
				key := (i*7 + sub*13) % keys
				slot := &last[key*submitters+sub]
				seq := int64(i + 1)
				task := func(context.Context) error {
					if prev := slot.Swap(seq); prev >= seq {
						bad.Add(1) // out of order, or twice
					}
					done.Add(1)
					return nil
				}
				switch i % 4 {
				case 0:
					k.Go(key, func() { task(ctx) })
				case 1:
					if h := k.RunAsync(ctx, key, task); i%8 == 1 && h.Cancel() {
						done.Add(1)
					}
				case 2:
					k.RunSync(ctx, key, task)
				default:
					k.RunAsync(ctx, key, task)
				}
			}
		})
	}
	wg.Wait()
	if err := target.Close(); err != nil {
		t.Fatal(err)
	}
	if n := bad.Load(); n > 0 {
		t.Errorf("%d tasks ran out of order or twice", n)
	}
	if got, want := done.Load(), int64(total/submitters*submitters); got != want {
		t.Errorf("%d tasks ran or were canceled; want %d", got, want)
	}
	if l := k.Lanes(); l != 0 {
		t.Errorf("%d lanes left; want 0", l)
	}
}

// TestKeyedLanesRetireAfterDelayedTasks: each key gets one RunAfter with a
// short delay; once they have run, every lane has retired and the Keyed
// answers. The goroutine that queues a due task used to run the lane's idle
// function, which reads the lane's Stats, while it held the queue's delay
// lock that Stats takes: the Keyed deadlocked for good within a few hundred
// keys.
func TestKeyedLanesRetireAfterDelayedTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool := taskqueue.NewConcurrent(4)
		k := taskqueue.NewKeyed[int](pool)
		var ran atomic.Int32
		const keys = 2000
		for key := range keys {
			k.RunAfter(t.Context(), key, time.Duration(1+key%7)*time.Millisecond, func(context.Context) error {
				ran.Add(1)
				return nil
			})
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if n := ran.Load(); n != keys {
			t.Errorf("%d delayed tasks ran; want %d", n, keys)
		}
		if n := k.Lanes(); n != 0 {
			t.Errorf("Lanes() = %d once every delayed task ran; want 0", n)
		}
		if st := k.Total(); st.Completed != keys || st.Delayed != 0 {
			t.Errorf("Total() = %+v; want %d completed, none delayed", st, keys)
		}
		pool.Close()
	})
}

// TestKeyedLaneLivesWhileItsDelayedTaskWaits: a lane whose key has a
// delayed task waiting is not idle: a submission refused for that key
// meanwhile leaves it, and the delayed task's run counts in Total. The lane
// used to be dropped as idle, and the delayed task's counts were lost.
func TestKeyedLaneLivesWhileItsDelayedTaskWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[string](target)
		h := k.RunAfter(t.Context(), "a", time.Hour, func(context.Context) error { return nil })
		closed := make(chan error)
		go func() { closed <- target.Close() }() // it waits for the delayed task
		synctest.Wait()
		// The lanes take no new task; the delayed one still runs.
		if err := k.Go("a", func() {}); !errors.Is(err, taskqueue.ErrClosed) {
			t.Fatalf("Go after Close = %v; want ErrClosed", err)
		}
		if n := k.Lanes(); n != 1 {
			t.Errorf("Lanes() = %d while a delayed task waits; want 1", n)
		}
		if err := h.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		if st := k.Total(); st.Completed != 1 || st.Rejected != 1 || k.Lanes() != 0 {
			t.Errorf("Total() = %+v, Lanes() = %d; want Completed 1, Rejected 1, no lane", st, k.Lanes())
		}
	})
}

// TestKeyedCancelOfADelayedTask: canceling a lane's delayed task gives its
// room back with the queue's lock released, so that the lane, idle then,
// retires: its idle function reads the lane's Stats, which takes that lock.
// It used to deadlock.
func TestKeyedCancelOfADelayedTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[int](target)
		for key := range 100 {
			h := k.RunAfter(t.Context(), key, time.Hour, func(context.Context) error { return nil })
			if !h.Cancel() {
				t.Fatalf("Cancel of key %d's delayed task = false", key)
			}
		}
		synctest.Wait()
		if st := k.Total(); k.Lanes() != 0 || st.Canceled != 100 {
			t.Errorf("Lanes() = %d, Total() = %+v; want no lane, 100 canceled", k.Lanes(), st)
		}
		target.Close()
	})
}
