package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// "Stats returns the counts of key's lane (... what its tasks did while it
// held the key), or the zero Stats if key has no work now." "Total returns
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
func TestOutside4KeyedStatsAcrossReuse(t *testing.T) {
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
			if err := k.Go("a", func() { panic("o4") }); err != nil {
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

// Cancellations and refusals across reuse: CancelKey's tasks count as
// Canceled in Total after the lane is dropped, and a closed target's refusals
// count too. "Every accepted call runs exactly once or reports an error."
func TestOutside4KeyedCanceledAcrossReuse(t *testing.T) {
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

// Lanes that go idle and are reused under load: per key, tasks never overlap
// and run in submission order; every task runs exactly once; once the
// target is closed, Total adds up to every submission and Lanes is 0.
// A broken implementation that creates a second lane for a key whose first
// is being dropped runs two tasks of the key at once, or reorders them; one
// that drops a lane with a task in it loses the task; one that folds a
// dropped lane's counts twice, or not at all, breaks Total.
func TestOutside4KeyedReuseStress(t *testing.T) {
	for round := 0; round < 10; round++ {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[int](target)
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
	}
}

// "A Keyed is safe for use by multiple goroutines": Stats and Total read
// while one key's lane is dropped and made again, over and over. Under -race
// a read that is not synchronized with a lane's drop is reported. Total's
// Completed must never go down: it counts the tasks of live lanes and of
// dropped ones, so a task that has ended is always among them. A broken
// implementation reads a dropping lane's counts without its lock (race), or
// lets a task's count vanish between its lane and the dropped total, or
// counts it in both (then it would go down afterwards).
func TestOutside4KeyedReadsWhileLanesDrop(t *testing.T) {
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

// "the key's lane lives while the task waits": a delayed task keeps its lane,
// Stats(key) and Total show it as Delayed, CancelKey counts it, and the
// counts survive the lane's drop. A broken implementation drops the lane
// while a delayed task waits (Lanes 0, the task lost or run out of order) or
// forgets the canceled task in Total.
func TestOutside4KeyedDelayedAcrossReuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[string](target)
		var order []int
		var mu sync.Mutex
		note := func(i int) func(context.Context) error {
			return func(context.Context) error { mu.Lock(); order = append(order, i); mu.Unlock(); return nil }
		}
		h1 := k.RunAfter(context.Background(), "p", time.Second, note(1))
		h2 := k.RunAsync(context.Background(), "p", note(2))
		synctest.Wait()
		if n := k.Lanes(); n != 1 {
			t.Errorf("lanes while a delayed task waits: %d, want 1", n)
		}
		if st := k.Stats("p"); st.Delayed != 1 || st.Completed != 1 {
			t.Errorf("Stats while a delayed task waits: %+v, want Delayed 1, Completed 1", st)
		}
		if err := h1.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		_ = h2
		synctest.Wait()
		if n := k.Lanes(); n != 0 {
			t.Errorf("lanes once idle: %d", n)
		}
		h3 := k.RunAfter(context.Background(), "p", time.Hour, note(3))
		synctest.Wait()
		if tot := k.Total(); tot.Delayed != 1 || tot.Completed != 2 {
			t.Errorf("Total with one delayed task: %+v", tot)
		}
		if n := k.CancelKey("p"); n != 1 {
			t.Errorf("CancelKey: %d, want 1", n)
		}
		if err := h3.Wait(context.Background()); err != context.Canceled {
			t.Errorf("canceled delayed task: %v", err)
		}
		synctest.Wait()
		if tot := k.Total(); tot.Delayed != 0 || tot.Completed != 2 || tot.Canceled != 1 || k.Lanes() != 0 {
			t.Errorf("Total after CancelKey and the lane's drop: %+v, lanes %d; want Completed 2, Canceled 1", tot, k.Lanes())
		}
		mu.Lock()
		defer mu.Unlock()
		if len(order) != 2 || order[0] != 2 || order[1] != 1 {
			t.Errorf("ran %v, want [2 1]", order)
		}
	})
}
