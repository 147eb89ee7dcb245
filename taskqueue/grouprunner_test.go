package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestGroupLimit: WithGroupLimit(3) on a queue of 8: at most 3 members run
// at once, the others wait in the group, not in the queue.
func TestGroupLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(8)
		g := taskqueue.NewGroup(t.Context(), q, taskqueue.WithGroupLimit(3))
		var now, peak atomic.Int32
		var order []int
		var mu sync.Mutex
		for i := range 20 {
			g.Go(func(context.Context) error {
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				n := now.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				time.Sleep(time.Second)
				now.Add(-1)
				return nil
			})
		}
		synctest.Wait()
		if s := q.Stats(); s.Running != 3 || s.Queued != 0 {
			t.Errorf("queue holds %d running, %d queued; want 3 and 0: the rest wait in the group", s.Running, s.Queued)
		}
		if err := g.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if p := peak.Load(); p != 3 {
			t.Errorf("at most %d members ran at once; want 3", p)
		}
		if len(order) != 20 {
			t.Errorf("%d members ran; want 20", len(order))
		}
	})
}

// A limited group that fails drops the members that wait in it.
func TestGroupLimitCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(8)
		g := taskqueue.NewGroup(t.Context(), q, taskqueue.WithGroupLimit(2), taskqueue.WithCancelOnError())
		var ran atomic.Int32
		errBoom := errors.New("boom")
		for i := range 20 {
			g.Go(func(context.Context) error {
				ran.Add(1)
				if i == 1 {
					time.Sleep(time.Second / 2)
					return errBoom
				}
				time.Sleep(time.Second)
				return nil
			})
		}
		if err := g.Wait(context.Background()); err != errBoom {
			t.Errorf("Wait() = %v; want boom", err)
		}
		if got := ran.Load(); got != 2 {
			t.Errorf("%d members ran; want the 2 that had started", got)
		}
	})
}

// Members take turns with the queue's other tasks: a task queued behind a
// group's members waits for a quantum of them, not for all. With one slot,
// the members run in the order they were added.
func TestGroupTakesTurns(t *testing.T) {
	for _, c := range []struct {
		name string
		q    func() *taskqueue.Queue
		opts []taskqueue.GroupOption
	}{
		{"serial", func() *taskqueue.Queue { return taskqueue.NewSerial() }, nil},
		{"limit=1", func() *taskqueue.Queue { return taskqueue.NewConcurrent(1) }, []taskqueue.GroupOption{taskqueue.WithGroupLimit(1)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := c.q()
				release := block(t, q)
				g := taskqueue.NewGroup(t.Context(), q, c.opts...)
				var order []int
				for i := range 200 {
					g.Go(func(context.Context) error { order = append(order, i); return nil })
				}
				q.Go(func() { order = append(order, -1) })
				release()
				if err := g.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
				q.Close()
				at := slices.Index(order, -1)
				if at != 64 {
					t.Errorf("the queue's own task ran after %d members; want 64, a quantum", at)
				}
				members := slices.DeleteFunc(slices.Clone(order), func(i int) bool { return i < 0 })
				if !slices.IsSorted(members) || len(members) != 200 {
					t.Errorf("members ran in the order %v; want the order they were added", members)
				}
			})
		})
	}
}

// TestGroupMembersHeldBySuspendAndSetLimit: members are tasks of their
// queue: once Suspend has returned, none starts until Resume, and once
// SetLimit has lowered the limit, no more than the new limit run once those
// running have ended. A group's task used to run its members one after the
// other whatever the queue's state.
func TestGroupMembersHeldBySuspendAndSetLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(2)
		g := taskqueue.NewGroup(context.Background(), q)
		gauge := &testkit.Gauge{Name: "members"}
		var suspended atomic.Bool
		var startedSuspended atomic.Int32
		for range 8 {
			g.Go(func(context.Context) error {
				if suspended.Load() {
					startedSuspended.Add(1)
				}
				gauge.Enter("member")
				defer gauge.Leave()
				time.Sleep(time.Second)
				return nil
			})
		}
		synctest.Wait() // two members sleep
		q.Suspend()
		suspended.Store(true)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if n := startedSuspended.Load(); n != 0 {
			t.Errorf("%d members started while their queue was suspended", n)
		}
		suspended.Store(false)
		q.SetLimit(1)
		gauge.Limit = 1 // from now on, once the two running have ended
		q.Resume()
		if err := g.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if over := gauge.Over(); over != "" {
			t.Errorf("after SetLimit(1): %s", over)
		}
		q.Close()
	})
}

// TestGroupRunnerRefusedIsNoRejection: a group's own task that a full queue
// refuses is no submission of the user's: the members it leaves count as
// canceled, and Rejected counts nothing for it.
func TestGroupRunnerRefusedIsNoRejection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(1, taskqueue.WithMaxQueued(1))
		block := make(chan struct{})
		q.Go(func() { <-block })
		synctest.Wait()
		q.Go(func() {}) // the queue is full
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		g := taskqueue.NewGroup(ctx, q)
		g.Go(func(context.Context) error { return nil }) // its task waits for room until ctx ends
		if err := g.Wait(context.Background()); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Wait = %v; want the context's error", err)
		}
		close(block)
		q.Close()
		if st := q.Stats(); st.Rejected != 0 || st.Canceled != 1 || st.Completed != 2 {
			t.Errorf("Stats = %+v; want Rejected 0, Canceled 1, Completed 2", st)
		}
	})
}

// TestGroupTryGo: TryGo starts a member only while it can start at once:
// below the group's limit, with no member waiting, on a free slot of the
// queue. GroupOf's results leave out the members it refused.
func TestGroupTryGo(t *testing.T) {
	q := taskqueue.NewConcurrent(4)
	g := taskqueue.NewGroupOf[int](context.Background(), q, taskqueue.WithGroupLimit(2))
	release := make(chan struct{})
	var got []bool
	for i := range 3 {
		got = append(got, g.TryGo(func(context.Context) (int, error) { <-release; return i, nil }))
	}
	close(release)
	vals, err := g.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[true true false]" || fmt.Sprint(vals) != "[0 1]" {
		t.Errorf("TryGo three times with a group limit of 2 = %v, results %v; want [true true false], [0 1]", got, vals)
	}
	g2 := taskqueue.NewGroup(context.Background(), q)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if g2.TryGo(func(context.Context) error { return nil }) {
		t.Error("TryGo on a group of a closed queue = true; want false")
	}
}
