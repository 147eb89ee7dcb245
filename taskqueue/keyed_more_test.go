package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

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

// TestKeyedRunAfterKeepsOrder: a delayed task holds its key's lane and keeps
// its place among the key's tasks by due time.
func TestKeyedRunAfterKeepsOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewConcurrent(4)
		k := taskqueue.NewKeyed[string](target)
		var order []string
		note := func(s string) func(context.Context) error {
			return func(context.Context) error { order = append(order, s); return nil }
		}
		k.RunAfter(t.Context(), "a", 2*time.Second, note("late"))
		k.RunAfter(t.Context(), "a", time.Second, note("soon"))
		if n := k.Lanes(); n != 1 {
			t.Errorf("Lanes() = %d with delayed tasks waiting; want 1: the lane lives while they wait", n)
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if fmt.Sprint(order) != "[soon late]" {
			t.Errorf("ran %v; want [soon late]", order)
		}
		if n := k.Lanes(); n != 0 {
			t.Errorf("Lanes() = %d once the key is idle; want 0", n)
		}
		target.Close()
	})
}

// TestKeyedCancelKey: CancelKey cancels the key's queued and delayed tasks,
// lets its running task finish, and later tasks of the key run after it.
func TestKeyedCancelKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[string](target)
		release := make(chan struct{})
		var order []string
		k.Go("p", func() { <-release; order = append(order, "running") })
		h := k.RunAsync(t.Context(), "p", func(context.Context) error { order = append(order, "queued"); return nil })
		d := k.RunAfter(t.Context(), "p", time.Minute, func(context.Context) error { order = append(order, "delayed"); return nil })
		other := k.RunAsync(t.Context(), "q", func(context.Context) error { return nil })
		synctest.Wait()
		if n := k.CancelKey("p"); n != 2 {
			t.Errorf("CancelKey = %d; want 2 (one queued, one delayed)", n)
		}
		if !errors.Is(h.Err(), context.Canceled) || !errors.Is(d.Err(), context.Canceled) {
			t.Errorf("canceled handles report %v, %v; want context.Canceled", h.Err(), d.Err())
		}
		after := k.RunAsync(t.Context(), "p", func(context.Context) error { order = append(order, "after"); return nil })
		close(release)
		if err := after.Wait(t.Context()); err != nil || other.Wait(t.Context()) != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(order) != "[running after]" {
			t.Errorf("ran %v; want [running after]", order)
		}
		if n := k.CancelKey("nobody"); n != 0 {
			t.Errorf("CancelKey of a key with no work = %d; want 0", n)
		}
		target.Close()
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

// TestKeyedAndZeroValueMisuse: the mistakes that used to be silent or a nil
// dereference panic with a message naming the call.
func TestKeyedAndZeroValueMisuse(t *testing.T) {
	q := taskqueue.NewConcurrent(2)
	other := taskqueue.NewConcurrent(1)
	var zero taskqueue.Queue
	var zeroKeyed taskqueue.Keyed[int]
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"NewKeyed with WithTarget", func() { taskqueue.NewKeyed[int](q, taskqueue.WithTarget(other)) },
			"taskqueue: NewKeyed with WithTarget: the lanes' target is NewKeyed's first argument"},
		{"WithTarget twice", func() { taskqueue.NewSerial(taskqueue.WithTarget(q), taskqueue.WithTarget(other)) },
			"taskqueue: WithTarget given more than once: a queue has one target"},
		{"Resume", func() { q.Resume() }, "taskqueue: Resume of a queue that is not suspended"},
		{"zero Queue Go", func() { zero.Go(func() {}) }, "taskqueue: use of a zero Queue; make one with NewSerial or NewConcurrent"},
		{"zero Queue RunSync", func() { zero.RunSync(context.Background(), func(context.Context) error { return nil }) },
			"taskqueue: use of a zero Queue; make one with NewSerial or NewConcurrent"},
		{"zero Keyed Go", func() { zeroKeyed.Go(1, func() {}) }, "taskqueue: use of a zero Keyed; make one with NewKeyed"},
		{"Keyed TryGo nil", func() { taskqueue.NewKeyed[int](q).TryGo(1, nil) }, "taskqueue: Keyed.TryGo with a nil function"},
		{"Keyed RunAfter nil", func() { taskqueue.NewKeyed[int](q).RunAfter(context.Background(), 1, time.Second, nil) },
			"taskqueue: Keyed.RunAfter with a nil function"},
		{"Handle.Then on nil", func() {
			(*taskqueue.Handle)(nil).Then(context.Background(), q, func(context.Context) error { return nil })
		},
			"taskqueue: Handle.Then on a nil Handle"},
	} {
		if got := fmt.Sprint(panicValue(c.f)); got != c.want {
			t.Errorf("%s panicked with %q; want %q", c.name, got, c.want)
		}
	}
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
