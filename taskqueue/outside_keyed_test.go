package taskqueue_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// Each key's tasks run one at a time in submission order, different keys in
// parallel up to the target's limit, whatever the mix of submissions; lanes go
// away once idle and Total adds up.
func TestOutsideKeyedOrderAndExclusivity(t *testing.T) {
	target := taskqueue.NewConcurrent(3)
	k := taskqueue.NewKeyed[int](target)
	const keys, per = 8, 300
	var targetRunning, targetMax atomic.Int32
	inKey := make([]atomic.Int32, keys)
	last := make([]int, keys)
	var bad atomic.Int32
	ctx := context.Background()
	var wg sync.WaitGroup
	var handles sync.Map
	for key := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= per; i++ {
				f := func() {
					r := targetRunning.Add(1)
					for {
						m := targetMax.Load()
						if r <= m || targetMax.CompareAndSwap(m, r) {
							break
						}
					}
					if inKey[key].Add(1) != 1 {
						bad.Add(1)
					}
					if last[key] != i-1 {
						bad.Add(1000)
					}
					last[key] = i
					inKey[key].Add(-1)
					targetRunning.Add(-1)
				}
				switch i % 3 {
				case 0:
					if err := k.Go(key, f); err != nil {
						t.Error(err)
						return
					}
				case 1:
					h := k.RunAsync(ctx, key, func(context.Context) error { f(); return nil })
					handles.Store(h, true)
				case 2:
					if err := k.RunSync(ctx, key, func(context.Context) error { f(); return nil }); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	handles.Range(func(h, _ any) bool {
		if err := h.(*taskqueue.Handle).Wait(ctx); err != nil {
			t.Error(err)
		}
		return true
	})
	if err := target.Close(); err != nil {
		t.Fatal(err)
	}
	if n := bad.Load(); n != 0 {
		t.Fatalf("per-key order or exclusivity broken (%d)", n)
	}
	if m := targetMax.Load(); m > 3 {
		t.Fatalf("%d ran at once on a target of limit 3", m)
	}
	if n := k.Lanes(); n != 0 {
		t.Fatalf("Lanes = %d once idle", n)
	}
	tot := k.Total()
	if tot.Completed != keys*per || tot.Succeeded != keys*per || tot.Queued != 0 || tot.Running != 0 {
		t.Fatalf("Total %+v, want Completed %d", tot, keys*per)
	}
	if st := k.Stats(3); st != (taskqueue.Stats{}) {
		t.Fatalf("Stats of a key with no work: %+v, want zero", st)
	}
	if err := k.Go(1, func() {}); !errors.Is(err, taskqueue.ErrClosed) {
		t.Fatalf("Keyed.Go after target closed: %v", err)
	}
	if h := k.RunAsync(ctx, 1, func(context.Context) error { return nil }); !errors.Is(h.Err(), taskqueue.ErrClosed) {
		t.Fatalf("Keyed.RunAsync after target closed: %v", h.Err())
	}
	if k.TryGo(1, func() {}) {
		t.Fatal("Keyed.TryGo after target closed reported true")
	}
}

// CancelKey cancels the key's waiting tasks (delayed ones too) and counts them;
// the running one goes on, later ones run after it.
func TestOutsideKeyedCancelKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[string](target)
		ctx := context.Background()
		release := make(chan struct{})
		var order []string
		var mu sync.Mutex
		rec := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
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
		mu.Lock()
		defer mu.Unlock()
		var p []string
		for _, s := range order {
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
		if k.Lanes() != 0 {
			t.Errorf("Lanes = %d", k.Lanes())
		}
	})
}

// RunSync from a key's task: on its own key with the task's context it runs in
// place; on another key (an idle sibling lane) with the task's context it runs in
// the task's place too, even when the target has a single slot.
func TestOutsideKeyedRunSyncInPlace(t *testing.T) {
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

// Keyed.TryGo: false when the key has a task queued, or the target has no free slot.
func TestOutsideKeyedTryGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[int](target)
		var ran atomic.Int32
		f := func() { ran.Add(1) }
		block := make(chan struct{})
		if !k.TryGo(1, func() { <-block }) {
			t.Fatal("TryGo on an idle Keyed reported false")
		}
		synctest.Wait()
		if k.TryGo(1, f) {
			t.Errorf("TryGo on a key whose task runs reported true")
		}
		target.Go(func() { <-block })
		synctest.Wait()
		if k.TryGo(2, f) {
			t.Errorf("TryGo with the target's slots all busy reported true")
		}
		close(block)
		target.Close()
		if ran.Load() != 0 {
			t.Errorf("ran %d", ran.Load())
		}
	})
}

// Closing the target closes its children; the target's Shutdown waits for their
// accepted tasks, delayed ones included.
func TestOutsideTargetCloseClosesChildren(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewConcurrent(2)
		child := taskqueue.NewSerial(taskqueue.WithTarget(target))
		k := taskqueue.NewKeyed[int](target)
		ctx := context.Background()
		var ran atomic.Int32
		child.RunAfter(ctx, time.Minute, func(context.Context) error { ran.Add(1); return nil })
		k.RunAfter(ctx, 1, 2*time.Minute, func(context.Context) error { ran.Add(1); return nil })
		child.Go(func() { time.Sleep(time.Second); ran.Add(1) })
		if err := target.Close(); err != nil {
			t.Fatal(err)
		}
		if ran.Load() != 3 {
			t.Errorf("target's Close returned with %d of 3 subtree tasks run", ran.Load())
		}
		if err := child.Go(func() {}); !errors.Is(err, taskqueue.ErrClosed) {
			t.Errorf("child Go after target closed: %v", err)
		}
	})
}

// CloseNow on a target cancels its own waiting tasks; the queues of its
// subtree are closed to new tasks and run what they had accepted, as
// documented, until CloseNow is called on them.
func TestOutsideTargetCloseNowSubtree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewSerial()
		child := taskqueue.NewSerial(taskqueue.WithTarget(target))
		k := taskqueue.NewKeyed[int](target)
		ctx := context.Background()
		block := make(chan struct{})
		target.Go(func() { <-block })
		synctest.Wait()
		h1 := child.RunAsync(ctx, func(context.Context) error { return nil })
		h2 := k.RunAsync(ctx, 5, func(context.Context) error { return nil })
		h3 := child.RunAfter(ctx, time.Hour, func(context.Context) error { return nil })
		h4 := target.RunAsync(ctx, func(context.Context) error { return nil })
		n := target.CloseNow()
		if err := child.Go(func() {}); !errors.Is(err, taskqueue.ErrClosed) {
			t.Errorf("child Go after the target's CloseNow: %v; want ErrClosed", err)
		}
		close(block)
		if err := target.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		for i, h := range []*taskqueue.Handle{h1, h2, h3} {
			if !h.IsDone() || h.Err() != nil {
				t.Errorf("subtree handle %d after target's CloseNow: done %v err %v; want it run", i, h.IsDone(), h.Err())
			}
		}
		if !errors.Is(h4.Err(), taskqueue.ErrClosed) || n != 1 {
			t.Errorf("target.CloseNow() = %d, its own task's Err %v; want 1, ErrClosed", n, h4.Err())
		}
	})
}
