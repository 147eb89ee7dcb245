package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
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

// TestKeyedMemoryFollowsKeysWithWork: keys used once leave no lane behind.
// A Keyed keeps a bounded number of idle lanes to reuse (filled first), so
// the heap is measured after a first round of n keys and again after a second
// round of n other keys: the second round must not grow it.
func TestKeyedMemoryFollowsKeysWithWork(t *testing.T) {
	skipHeapTestUnderRace(t)
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
	total := hammerSize(20_000, 200_000)
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

// TestKeyedLaneLivesWhileItsDueTaskIsQueued: a lane is not idle while its
// delayed task, due now, moves from the lane's heap to its scheduler. A
// submission refused for the key in that instant (a TryGo behind the task)
// used to find the lane idle, since the task was in neither, and dropped
// it: the task ran on a lane no longer counted, and Total missed it (the
// whole-library model caught it, one run in about twenty). The instant is
// the timer's, when a goroutine that slept as long wakes too: rounds try the
// two orders.
func TestKeyedLaneLivesWhileItsDueTaskIsQueued(t *testing.T) {
	for round := range 1000 {
		synctest.Test(t, func(t *testing.T) {
			target := taskqueue.NewSerial()
			release := block(t, target) // the due task waits for its turn
			k := taskqueue.NewKeyed[int](target)
			var ran atomic.Int32
			k.RunAfter(t.Context(), 1, time.Millisecond, func(context.Context) error { ran.Add(1); return nil })
			time.Sleep(time.Millisecond)
			tried := k.TryGo(1, func() { ran.Add(1) })
			release()
			target.Close()
			synctest.Wait()
			want := uint64(1)
			if tried {
				want = 2
			}
			if st := k.Total(); st.Completed != want || uint64(ran.Load()) != want || k.Lanes() != 0 {
				t.Fatalf("round %d: TryGo = %v, %d ran, Total() = %+v, Lanes() = %d; want %d completed, no lane",
					round, tried, ran.Load(), st, k.Lanes(), want)
			}
		})
	}
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

// TestKeyedTryGo: TryGo starts f only when its key is idle and the target
// has a free slot, and never queues it.
func TestKeyedTryGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[int](target)
		release := make(chan struct{})
		ran := make(chan int, 8)
		block := func(key int) func() { return func() { ran <- key; <-release } }
		if !k.TryGo(1, block(1)) || !k.TryGo(2, block(2)) {
			t.Fatal("TryGo on two idle keys of a target with two free slots = false")
		}
		if k.TryGo(1, func() { ran <- -1 }) {
			t.Error("TryGo on a key with a task running = true")
		}
		if k.TryGo(3, func() { ran <- -3 }) {
			t.Error("TryGo with the target's slots all taken = true")
		}
		close(release)
		if err := target.Close(); err != nil {
			t.Fatal(err)
		}
		close(ran)
		var got []int
		for key := range ran {
			got = append(got, key)
		}
		if len(got) != 2 || got[0] < 0 || got[1] < 0 {
			t.Errorf("ran %v; want keys 1 and 2 only: a refused TryGo never runs its function", got)
		}
	})
}

// TestKeyedStats: Stats tells a key's counts while it has work; Total adds
// every lane, those dropped included.
func TestKeyedStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[int](target, taskqueue.WithName("players"),
			taskqueue.WithPanicHandler(func(*taskqueue.PanicError) {}))
		release := make(chan struct{})
		k.Go(1, func() { <-release })
		k.Go(1, func() {})
		k.RunAsync(t.Context(), 1, func(context.Context) error { return errors.New("no") })
		obs := k.RunAsync(t.Context(), 2, func(context.Context) error { panic("x") })
		synctest.Wait()
		if st := k.Stats(1); st.Running != 1 || st.Queued != 2 || st.Name != "players[1]" {
			t.Errorf("Stats(1) = %+v; want 1 running, 2 queued, named players[1]", st)
		}
		if st := k.Stats(3); st != (taskqueue.Stats{}) {
			t.Errorf("Stats of a key with no work = %+v; want the zero Stats", st)
		}
		close(release)
		synctest.Wait()
		obs.Wait(t.Context())
		if st := k.Total(); st.Completed != 4 || st.Failed != 1 || st.Panicked != 1 || st.Succeeded != 2 || st.Name != "players" {
			t.Errorf("Total = %+v; want 4 completed: 2 succeeded, 1 failed, 1 panicked", st)
		}
		target.Close()
	})
}

// TestKeyedStatsOfReusedLanes: an unnamed Keyed reuses the lanes of keys
// that went idle; a reused lane's Stats count only the work of its new key,
// and Total counts every task once.
func TestKeyedStatsOfReusedLanes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[int](target, taskqueue.WithPanicHandler(func(*taskqueue.PanicError) {}))
		const keys = 20
		for key := range keys {
			k.Go(key, func() {})
			k.RunAsync(t.Context(), key, func(context.Context) error { return errors.New("no") })
			if key%2 == 0 {
				k.Go(key, func() { panic("x") })
			}
			synctest.Wait() // the key's lane goes idle, and back to be reused
		}
		release := make(chan struct{})
		k.Go(keys, func() { <-release })
		k.Go(keys, func() {})
		synctest.Wait()
		if st := k.Stats(keys); st.Running != 1 || st.Queued != 1 || st.Completed != 0 || st.Failed != 0 || st.Panicked != 0 {
			t.Errorf("Stats of a key on a reused lane = %+v; want 1 running, 1 queued, nothing completed", st)
		}
		close(release)
		synctest.Wait()
		want := taskqueue.Stats{Completed: keys*2 + keys/2 + 2, Failed: keys, Panicked: keys / 2}
		want.Succeeded = want.Completed - want.Failed - want.Panicked
		st := k.Total()
		if st.Completed != want.Completed || st.Failed != want.Failed || st.Panicked != want.Panicked || st.Succeeded != want.Succeeded {
			t.Errorf("Total = %+v; want %d completed, %d failed, %d panicked, %d succeeded",
				st, want.Completed, want.Failed, want.Panicked, want.Succeeded)
		}
		target.Close()
	})
}

// TestKeyedStatsSampleNoWaits: Keyed's Stats and Total leave Wait zero, as
// their docs say, while a key's lane has sampled waits of its own: 6,400
// tasks queued behind one another on one key, and again on a second key
// that reuses the first one's lane.
func TestKeyedStatsSampleNoWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[int](target)
		for key := range 2 {
			release := make(chan struct{})
			k.Go(key, func() { <-release })
			for range 6400 {
				k.Go(key, func() { time.Sleep(time.Millisecond) })
			}
			synctest.Wait()
			close(release)
			time.Sleep(time.Second) // a thousand of them have run
			if st, tot := k.Stats(key), k.Total(); st.Wait != (scheduler.Latency{}) || tot.Wait != (scheduler.Latency{}) || st.Completed == 0 {
				t.Errorf("key %d: Stats(key) = %+v, Total() = %+v; want some completed, and Wait zero in both", key, st, tot)
			}
			synctest.Wait()
			time.Sleep(10 * time.Second)
			synctest.Wait() // the lane has gone idle, to be reused by the next key
		}
		target.Close()
	})
}

// TestKeyedStatsAcrossReuse: "Stats returns the counts of key's lane (...
// what its tasks did while it held the key), or the zero Stats if key has
// no work now." "Total returns
// the counts of every lane together, those of the lanes dropped so far
// included."
//
// One key's lane goes idle and comes back five times; each time it is given,
// behind a gate, a success, a failure, a panic and a task that blocks. While the blocking task
// runs, Stats(key) counts this lane's four finished tasks and one running,
// and Total counts those of the dropped lanes too. Once idle, Lanes is 0,
// Stats(key) is zero and Total holds every task. A broken implementation
// loses a dropped lane's counts from Total, counts them twice (when the lane
// is reused), or carries them into the new lane's Stats.
func TestKeyedStatsAcrossReuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewConcurrent(2)
		var panics atomic.Int32
		k := taskqueue.NewKeyed[string](target, taskqueue.WithPanicHandler(func(*taskqueue.PanicError) { panics.Add(1) }))
		boom := errors.New("boom")
		for r := uint64(0); r < 5; r++ {
			// Behind a gate, so that the lane lives through all five.
			gate := make(chan struct{})
			hg := k.RunAsync(context.Background(), "a", func(context.Context) error { <-gate; return nil })
			hs := k.RunAsync(context.Background(), "a", func(context.Context) error { return nil })
			hf := k.RunAsync(context.Background(), "a", func(context.Context) error { return boom })
			if err := k.Go("a", func() { panic("in a task of the key") }); err != nil {
				t.Fatal(err)
			}
			release := make(chan struct{})
			h := k.RunAsync(context.Background(), "a", func(context.Context) error { <-release; return nil })
			close(gate)
			synctest.Wait()
			if hg.Err() != nil || hs.Err() != nil || !errors.Is(hf.Err(), boom) {
				t.Fatalf("round %d: tasks ended with %v and %v", r, hs.Err(), hf.Err())
			}
			got := k.Stats("a")
			want := taskqueue.Stats{Limit: 1, Running: 1, Completed: 4, Succeeded: 2, Failed: 1, Panicked: 1}
			if got.Limit != want.Limit || got.Running != want.Running || got.Queued != 0 || got.Completed != want.Completed ||
				got.Succeeded != want.Succeeded || got.Failed != want.Failed || got.Panicked != want.Panicked || got.Canceled != 0 {
				t.Errorf("round %d: Stats of the reused key while busy: %+v, want %+v", r, got, want)
			}
			tot := k.Total()
			if tot.Running != 1 || tot.Completed != 5*r+4 || tot.Succeeded != 3*r+2 || tot.Failed != r+1 || tot.Panicked != r+1 {
				t.Errorf("round %d: Total while busy: %+v, want Running 1, Completed %d, Succeeded %d, Failed %d, Panicked %d",
					r, tot, 5*r+4, 3*r+2, r+1, r+1)
			}
			close(release)
			if err := h.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			if n := k.Lanes(); n != 0 {
				t.Errorf("round %d: %d lanes after the key went idle, want 0", r, n)
			}
			if s := k.Stats("a"); s != (taskqueue.Stats{}) {
				t.Errorf("round %d: Stats of an idle key: %+v, want the zero Stats", r, s)
			}
			tot = k.Total()
			if tot.Running != 0 || tot.Queued != 0 || tot.Completed != 5*(r+1) || tot.Succeeded != 3*(r+1) || tot.Failed != r+1 || tot.Panicked != r+1 {
				t.Errorf("round %d: Total once idle: %+v, want Completed %d, Succeeded %d, Failed %d, Panicked %d",
					r, tot, 5*(r+1), 3*(r+1), r+1, r+1)
			}
		}
		if n := panics.Load(); n != 5 {
			t.Errorf("panic handler saw %d panics, want 5", n)
		}
	})
}

// TestKeyedCanceledAcrossReuse: CancelKey's tasks count as
// Canceled in Total after the lane is dropped, and a closed target's refusals
// count too. "Every accepted call runs exactly once or reports an error."
func TestKeyedCanceledAcrossReuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewSerial()
		k := taskqueue.NewKeyed[int](target)
		var ran atomic.Int32
		for r := uint64(1); r <= 3; r++ {
			release := make(chan struct{})
			h0 := k.RunAsync(context.Background(), 7, func(context.Context) error { <-release; ran.Add(1); return nil })
			synctest.Wait()
			var hs []*taskqueue.Handle
			for i := 0; i < 4; i++ {
				hs = append(hs, k.RunAsync(context.Background(), 7, func(context.Context) error { ran.Add(1); return nil }))
			}
			if n := k.CancelKey(7); n != 4 {
				t.Errorf("round %d: CancelKey canceled %d, want 4", r, n)
			}
			close(release)
			if err := h0.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			for _, h := range hs {
				if err := h.Wait(context.Background()); !errors.Is(err, context.Canceled) {
					t.Errorf("canceled task: %v", err)
				}
			}
			synctest.Wait()
			tot := k.Total()
			if tot.Canceled != 4*r || tot.Completed != r || tot.Succeeded != r {
				t.Errorf("round %d: Total %+v, want Canceled %d, Completed %d", r, tot, 4*r, r)
			}
		}
		if err := target.Close(); err != nil {
			t.Fatal(err)
		}
		if err := k.Go(7, func() {}); !errors.Is(err, taskqueue.ErrClosed) {
			t.Errorf("Go on a closed target's Keyed: %v", err)
		}
		if n := ran.Load(); n != 3 {
			t.Errorf("%d tasks ran, want 3", n)
		}
	})
}

// TestKeyedLanesUnderLoad: keys submitted to from goroutines of their own,
// in every form, their lanes going idle and reused: per key, tasks never
// overlap and run in submission order; keys run in parallel, never more at
// once than the target's limit; every task runs exactly once; once the
// target is closed, Total adds up to every submission, Lanes is 0, a key
// with no work has the zero Stats, and submissions fail with ErrClosed.
// A broken implementation that creates a second lane for a key whose first
// is being dropped runs two tasks of the key at once, or reorders them; one
// that drops a lane with a task in it loses the task; one that folds a
// dropped lane's counts twice, or not at all, breaks Total.
func TestKeyedLanesUnderLoad(t *testing.T) {
	for round := 0; round < 10; round++ {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[int](target)
		tg := newGauge("target of two slots", 2)
		const keys, perKey = 6, 300
		var running [keys]atomic.Int32
		var last [keys]atomic.Int64
		var runs [keys][perKey]atomic.Int32
		for key := range last {
			last[key].Store(-1)
		}
		var bad atomic.Value
		fail := func(s string) { bad.CompareAndSwap(nil, s) }
		var wg sync.WaitGroup
		for key := 0; key < keys; key++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(round), uint64(key)))
				var hs []*taskqueue.Handle
				for i := 0; i < perKey; i++ {
					f := func() {
						if running[key].Add(1) != 1 {
							fail(fmt.Sprintf("key %d: two tasks at once", key))
						}
						if prev := last[key].Swap(int64(i)); prev != int64(i)-1 {
							fail(fmt.Sprintf("key %d: task %d after task %d", key, i, prev))
						}
						runs[key][i].Add(1)
						tg.Enter(fmt.Sprintf("task %d of key %d", i, key))
						runtime.Gosched()
						tg.Leave()
						running[key].Add(-1)
					}
					switch rng.IntN(4) {
					case 0:
						if err := k.Go(key, f); err != nil {
							fail(err.Error())
						}
					case 1:
						hs = append(hs, k.RunAsync(context.Background(), key, func(context.Context) error { f(); return nil }))
					case 2:
						if err := k.RunSync(context.Background(), key, func(context.Context) error { f(); return nil }); err != nil {
							fail(err.Error())
						}
					default:
						// Let the lane drain so that it is dropped and made again.
						h := k.RunAsync(context.Background(), key, func(context.Context) error { f(); return nil })
						if err := h.Wait(context.Background()); err != nil {
							fail(err.Error())
						}
						_ = k.Stats(key)
						_ = k.Total()
					}
				}
				for _, h := range hs {
					if err := h.Wait(context.Background()); err != nil {
						fail(err.Error())
					}
				}
			}()
		}
		wg.Wait()
		if err := target.Close(); err != nil {
			t.Fatal(err)
		}
		if v := bad.Load(); v != nil {
			t.Fatalf("round %d: %s", round, v)
		}
		for key := 0; key < keys; key++ {
			for i := 0; i < perKey; i++ {
				if n := runs[key][i].Load(); n != 1 {
					t.Fatalf("round %d: key %d task %d ran %d times", round, key, i, n)
				}
			}
		}
		tot := k.Total()
		if tot.Completed != keys*perKey || tot.Succeeded != keys*perKey || tot.Queued != 0 || tot.Running != 0 || tot.Canceled != 0 {
			t.Fatalf("round %d: Total %+v, want Completed = Succeeded = %d and nothing queued or running", round, tot, keys*perKey)
		}
		if n := k.Lanes(); n != 0 {
			t.Fatalf("round %d: %d lanes after the target closed", round, n)
		}
		checkGauges(t, tg)
		if st := k.Stats(keys); st != (taskqueue.Stats{}) {
			t.Errorf("Stats of a key with no work: %+v, want the zero Stats", st)
		}
		if err := k.Go(1, func() {}); err != taskqueue.ErrClosed {
			t.Errorf("Keyed.Go after the target closed = %v; want ErrClosed", err)
		}
		if h := k.RunAsync(context.Background(), 1, nop); h.Err() != taskqueue.ErrClosed {
			t.Errorf("Keyed.RunAsync after the target closed: Err() = %v; want ErrClosed", h.Err())
		}
		if k.TryGo(1, func() {}) {
			t.Error("Keyed.TryGo after the target closed = true")
		}
	}
}

// TestKeyedReadsWhileLanesDrop: "A Keyed is safe for use by multiple
// goroutines": Stats and Total read
// while one key's lane is dropped and made again, over and over. Under -race
// a read that is not synchronized with a lane's drop is reported. Total's
// Completed must never go down: it counts the tasks of live lanes and of
// dropped ones, so a task that has ended is always among them. A broken
// implementation reads a dropping lane's counts without its lock (race), or
// lets a task's count vanish between its lane and the dropped total, or
// counts it in both (then it would go down afterwards).
func TestKeyedReadsWhileLanesDrop(t *testing.T) {
	for round := 0; round < 20; round++ {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[int](target)
		stop := make(chan struct{})
		var readers sync.WaitGroup
		var bad atomic.Value
		const n = 500
		for r := 0; r < 2; r++ {
			readers.Add(1)
			go func() {
				defer readers.Done()
				var prev uint64
				for {
					select {
					case <-stop:
						return
					default:
					}
					// One RunSync at a time: a lane of key 1 has at most
					// one task queued or running, and no more than every
					// task ended.
					if st := k.Stats(1); st.Completed > n || st.Running > 1 || st.Queued > 1 ||
						st.Completed != st.Succeeded+st.Failed+st.Panicked && st.Running+st.Queued == 0 {
						bad.CompareAndSwap(nil, fmt.Sprintf("Stats(1) of a lane that runs one task at a time: %+v", st))
					}
					tot := k.Total()
					if tot.Completed < prev {
						bad.CompareAndSwap(nil, fmt.Sprintf("Total().Completed went down from %d to %d", prev, tot.Completed))
					}
					prev = tot.Completed
				}
			}()
		}
		for i := 0; i < n; i++ {
			if err := k.RunSync(context.Background(), 1, func(context.Context) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		close(stop)
		readers.Wait()
		if err := target.Close(); err != nil {
			t.Fatal(err)
		}
		if v := bad.Load(); v != nil {
			t.Fatalf("round %d: %s", round, v)
		}
		if tot := k.Total(); tot.Completed != n {
			t.Fatalf("round %d: Total %+v, want Completed %d", round, tot, n)
		}
	}
}

// TestKeyedDelayedTasksKeepTheirLane: "the key's lane lives while the task
// waits, and its tasks keep their order with it": delayed tasks keep their
// lane and run in due order after the key's task queued at once;
// Stats(key) and Total show them as Delayed, CancelKey counts them, and the
// counts survive the lane's drop. A broken implementation drops the lane
// while a delayed task waits (Lanes 0, the task lost or run out of order) or
// forgets the canceled task in Total.
func TestKeyedDelayedTasksKeepTheirLane(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[string](target)
		var log testkit.Log
		note := func(i int) func(context.Context) error {
			return func(context.Context) error { log.Add(fmt.Sprint(i)); return nil }
		}
		h0 := k.RunAfter(context.Background(), "p", 2*time.Second, note(0))
		k.RunAfter(context.Background(), "p", time.Second, note(1))
		k.RunAsync(context.Background(), "p", note(2))
		synctest.Wait()
		if n := k.Lanes(); n != 1 {
			t.Errorf("lanes while delayed tasks wait: %d, want 1", n)
		}
		if st := k.Stats("p"); st.Delayed != 2 || st.Completed != 1 {
			t.Errorf("Stats while delayed tasks wait: %+v, want Delayed 2, Completed 1", st)
		}
		if err := h0.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if n := k.Lanes(); n != 0 {
			t.Errorf("lanes once idle: %d", n)
		}
		h3 := k.RunAfter(context.Background(), "p", time.Hour, note(3))
		synctest.Wait()
		if tot := k.Total(); tot.Delayed != 1 || tot.Completed != 3 {
			t.Errorf("Total with one delayed task: %+v", tot)
		}
		if n := k.CancelKey("p"); n != 1 {
			t.Errorf("CancelKey: %d, want 1", n)
		}
		if err := h3.Wait(context.Background()); err != context.Canceled {
			t.Errorf("canceled delayed task: %v", err)
		}
		synctest.Wait()
		if tot := k.Total(); tot.Delayed != 0 || tot.Completed != 3 || tot.Canceled != 1 || k.Lanes() != 0 {
			t.Errorf("Total after CancelKey and the lane's drop: %+v, lanes %d; want Completed 3, Canceled 1", tot, k.Lanes())
		}
		if order := log.Take(); fmt.Sprint(order) != "[2 1 0]" {
			t.Errorf("ran %v, want [2 1 0]: the task queued at once, then the delayed ones in due order", order)
		}
	})
}

// TestKeyedCancelKey: CancelKey cancels the key's tasks that have not
// started, delayed ones and those of Go included, and counts them; the
// running one goes on, later ones run after it, and other keys are not
// touched; a key with no work has nothing to cancel.
func TestKeyedCancelKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[string](target)
		ctx := context.Background()
		release := make(chan struct{})
		var log testkit.Log
		rec := log.Add
		k.RunAsync(ctx, "p", func(context.Context) error { <-release; rec("running"); return nil })
		var hs []*taskqueue.Handle
		for range 3 {
			hs = append(hs, k.RunAsync(ctx, "p", func(context.Context) error { rec("canceled ran"); return nil }))
		}
		k.Go("p", func() { rec("canceled Go ran") })
		hs = append(hs, k.RunAfter(ctx, "p", time.Minute, func(context.Context) error { rec("canceled delayed ran"); return nil }))
		other := k.RunAsync(ctx, "q", func(context.Context) error { rec("other key"); return nil })
		synctest.Wait()
		if st := k.Stats("p"); st.Queued != 4 || st.Delayed != 1 || st.Running != 1 {
			t.Errorf("Stats(p) = %+v", st)
		}
		if n := k.CancelKey("p"); n != 5 {
			t.Errorf("CancelKey = %d, want 5", n)
		}
		for i, h := range hs {
			if !h.IsDone() || !errors.Is(h.Err(), context.Canceled) {
				t.Errorf("handle %d after CancelKey: done %v err %v", i, h.IsDone(), h.Err())
			}
		}
		after := k.RunAsync(ctx, "p", func(context.Context) error { rec("after"); return nil })
		if k.TryGo("p", func() { rec("trygo ran") }) {
			t.Errorf("Keyed.TryGo on a key with a running task reported true")
		}
		close(release)
		if err := after.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if err := other.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if err := target.Close(); err != nil {
			t.Fatal(err)
		}
		var p []string
		for _, s := range log.Take() {
			if s != "other key" {
				p = append(p, s)
			}
		}
		if len(p) != 2 || p[0] != "running" || p[1] != "after" {
			t.Errorf("key p ran %v, want [running after]", p)
		}
		tot := k.Total()
		if tot.Canceled != 5 || tot.Completed != 3 {
			t.Errorf("Total %+v, want Canceled 5 Completed 3", tot)
		}
		if n := k.CancelKey("nobody"); n != 0 {
			t.Errorf("CancelKey of a key with no work = %d; want 0", n)
		}
		if k.Lanes() != 0 {
			t.Errorf("Lanes = %d", k.Lanes())
		}
	})
}

// TestKeyedRunSyncInPlace: RunSync from a key's task, with the task's
// context, runs in the task's place on its own key, on another key (an idle
// sibling lane) and on the target, even when the target has a single slot.
func TestKeyedRunSyncInPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewSerial()
		k := taskqueue.NewKeyed[int](target)
		ctx := context.Background()
		var steps []int
		h := k.RunAsync(ctx, 1, func(tctx context.Context) error {
			steps = append(steps, 1)
			wctx, cancel := context.WithTimeout(tctx, time.Hour)
			defer cancel()
			if err := k.RunSync(wctx, 1, func(context.Context) error { steps = append(steps, 2); return nil }); err != nil {
				return err
			}
			if err := k.RunSync(wctx, 2, func(context.Context) error { steps = append(steps, 3); return nil }); err != nil {
				return err
			}
			if err := target.RunSync(wctx, func(context.Context) error { steps = append(steps, 4); return nil }); err != nil {
				return err
			}
			return nil
		})
		if err := h.Wait(ctx); err != nil {
			t.Fatalf("task: %v (steps %v)", err, steps)
		}
		if len(steps) != 4 {
			t.Fatalf("steps %v", steps)
		}
		target.Close()
	})
}

// TestKeyedCancelKeyRace: CancelKey racing with submissions on real time:
// every accepted task runs once or is counted as canceled, in CancelKey's
// counts and in Total.
func TestKeyedCancelKeyRace(t *testing.T) {
	for round := range 30 {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[int](target)
		var accepted, ran, canceled atomic.Int64
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for key := range 3 {
			wg.Add(2)
			go func() {
				defer wg.Done()
				for range 200 {
					if k.Go(key, func() { ran.Add(1) }) == nil {
						accepted.Add(1)
					}
				}
			}()
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					canceled.Add(int64(k.CancelKey(key)))
					time.Sleep(time.Microsecond)
				}
			}()
		}
		time.AfterFunc(time.Millisecond, func() { close(stop) })
		wg.Wait()
		if err := target.Close(); err != nil {
			t.Fatal(err)
		}
		if accepted.Load() != ran.Load()+canceled.Load() {
			t.Fatalf("round %d: accepted %d, ran %d, CancelKey counted %d", round, accepted.Load(), ran.Load(), canceled.Load())
		}
		tot := k.Total()
		if tot.Canceled != uint64(canceled.Load()) || tot.Completed != uint64(ran.Load()) {
			t.Fatalf("round %d: Total %+v, ran %d canceled %d", round, tot, ran.Load(), canceled.Load())
		}
		if k.Lanes() != 0 {
			t.Fatalf("round %d: Lanes %d", round, k.Lanes())
		}
	}
}

// TestKeyedMisuse: NewKeyed without a target or with one of its own, nil
// functions, and the zero Keyed panic with a message naming the call.
func TestKeyedMisuse(t *testing.T) {
	ctx := context.Background()
	q := taskqueue.NewConcurrent(2)
	k := taskqueue.NewKeyed[int](q)
	var zero taskqueue.Keyed[int]
	const zeroKeyed = "taskqueue: use of a zero Keyed; make one with NewKeyed"
	checkMisuses(t, []misuse{
		{"NewKeyed(nil)", func() { taskqueue.NewKeyed[int](nil) }, "taskqueue: NewKeyed with a nil target"},
		{"NewKeyed with WithTarget", func() { taskqueue.NewKeyed[int](q, taskqueue.WithTarget(q)) },
			"taskqueue: NewKeyed with WithTarget: the lanes' target is NewKeyed's first argument"},
		{"Keyed.Go(nil)", func() { k.Go(1, nil) }, "taskqueue: Keyed.Go with a nil function"},
		{"Keyed.TryGo(nil)", func() { k.TryGo(1, nil) }, "taskqueue: Keyed.TryGo with a nil function"},
		{"Keyed.RunAsync(nil)", func() { k.RunAsync(ctx, 1, nil) }, "taskqueue: Keyed.RunAsync with a nil function"},
		{"Keyed.RunSync(nil)", func() { k.RunSync(ctx, 1, nil) }, "taskqueue: Keyed.RunSync with a nil function"},
		{"Keyed.RunAfter(nil)", func() { k.RunAfter(ctx, 1, time.Second, nil) }, "taskqueue: Keyed.RunAfter with a nil function"},
		{"zero Keyed: Go", func() { zero.Go(1, func() {}) }, zeroKeyed},
		{"zero Keyed: Lanes", func() { zero.Lanes() }, zeroKeyed},
	})
	q.Close()
}
