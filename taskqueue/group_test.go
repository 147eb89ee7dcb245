package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

func TestGroupWaitsForAll(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		g := taskqueue.NewGroup(t.Context(), q)
		var ran atomic.Int32
		for range 100 {
			g.Go(func(context.Context) error {
				time.Sleep(time.Millisecond)
				ran.Add(1)
				return nil
			})
		}
		if err := g.Wait(context.Background()); err != nil {
			t.Fatalf("Wait() = %v; want nil", err)
		}
		if got := ran.Load(); got != 100 {
			t.Errorf("%d members ran before Wait returned; want 100", got)
		}
	})
}

// Members that add members: Wait waits for those too.
func TestGroupMembersAddMembers(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		g := taskqueue.NewGroup(t.Context(), k.new())
		var ran atomic.Int32
		var spawn func(depth int) func(context.Context) error
		spawn = func(depth int) func(context.Context) error {
			return func(context.Context) error {
				ran.Add(1)
				if depth < 5 {
					g.Go(spawn(depth + 1))
					g.Go(spawn(depth + 1))
				}
				return nil
			}
		}
		g.Go(spawn(0))
		if err := g.Wait(context.Background()); err != nil {
			t.Fatalf("Wait() = %v", err)
		}
		if got := ran.Load(); got != 63 {
			t.Errorf("%d members ran; want 63", got)
		}
	})
}

// Without WithCancelOnError every member runs, and Wait joins the errors in
// the order the members were added.
func TestGroupJoinsErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		g := taskqueue.NewGroup(t.Context(), k.new())
		var ran atomic.Int32
		var want []error
		for i := range 30 {
			err := fmt.Errorf("member %d", i)
			if i%7 == 3 {
				want = append(want, err)
			}
			g.Go(func(context.Context) error {
				// Later members end first on a concurrent queue.
				time.Sleep(time.Duration(30-i) * time.Millisecond)
				ran.Add(1)
				if i%7 == 3 {
					return err
				}
				return nil
			})
		}
		err := g.Wait(context.Background())
		if got := ran.Load(); got != 30 {
			t.Errorf("%d members ran; want 30", got)
		}
		j, ok := err.(interface{ Unwrap() []error })
		if !ok {
			t.Fatalf("Wait() = %v; want the errors joined", err)
		}
		if got := j.Unwrap(); !slices.Equal(got, want) {
			t.Errorf("Wait() joined %v; want %v", got, want)
		}
	})
}

// One error alone comes back as it is.
func TestGroupOneError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errBoom := errors.New("boom")
		g := taskqueue.NewGroup(t.Context(), taskqueue.NewConcurrent(2))
		g.Go(func(context.Context) error { return nil })
		g.Go(func(context.Context) error { return errBoom })
		if err := g.Wait(context.Background()); err != errBoom {
			t.Errorf("Wait() = %v; want boom itself", err)
		}
	})
}

// On a serial queue the order is fixed: after the failing member, none runs.
func TestGroupCancelOnErrorSerial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		g := taskqueue.NewGroup(t.Context(), q, taskqueue.WithCancelOnError())
		errBoom := errors.New("boom")
		var ran []int
		var ctxs []context.Context
		for i := range 10 {
			g.Go(func(ctx context.Context) error {
				ran = append(ran, i)
				ctxs = append(ctxs, ctx)
				if i == 4 {
					return errBoom
				}
				return nil
			})
		}
		if err := g.Wait(context.Background()); err != errBoom {
			t.Errorf("Wait() = %v; want boom", err)
		}
		if want := []int{0, 1, 2, 3, 4}; !slices.Equal(ran, want) {
			t.Errorf("members %v ran; want %v", ran, want)
		}
		if cause := context.Cause(ctxs[0]); cause != errBoom {
			t.Errorf("cause of the members' context = %v; want boom", cause)
		}
		q.Close()
		if s := q.Stats(); s.Canceled != 5 || s.Completed != 5 || s.Failed != 1 {
			t.Errorf("Stats() = %+v; want 5 completed, 1 failed, 5 canceled", s)
		}
	})
}

// On a concurrent queue the members running at the failure go on, with their
// context canceled; those queued never start.
func TestGroupCancelOnErrorConcurrent(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		g := taskqueue.NewGroup(t.Context(), q, taskqueue.WithCancelOnError())
		errBoom := errors.New("boom")
		var started, sawCancel atomic.Int32
		fail := make(chan struct{})
		for i := range 50 {
			g.Go(func(ctx context.Context) error {
				started.Add(1)
				if i == 0 {
					<-fail
					return errBoom
				}
				select {
				case <-ctx.Done():
					sawCancel.Add(1)
				case <-time.After(time.Hour):
				}
				return nil
			})
		}
		synctest.Wait()
		before := started.Load() // every slot is taken: the rest wait
		if want := int32(q.Stats().Limit); before != want && !k.serial {
			t.Fatalf("%d members started before the failure; want %d", before, want)
		}
		close(fail)
		if err := g.Wait(context.Background()); err != errBoom {
			t.Errorf("Wait() = %v; want boom", err)
		}
		if got := started.Load(); got != before {
			t.Errorf("%d members started; want the %d that had started before the failure", got, before)
		}
		if got := sawCancel.Load(); got != before-1 {
			t.Errorf("%d running members saw the cancel; want %d", got, before-1)
		}
	})
}

func TestGroupPanic(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		var p panics
		g := taskqueue.NewGroup(t.Context(), k.new(p.handler()))
		errBoom := errors.New("boom")
		g.Go(func(context.Context) error { return nil })
		g.Go(func(context.Context) error { panic(errBoom) })
		g.Go(func(context.Context) error { runtime.Goexit(); return nil })
		err := g.Wait(context.Background())
		var pe *taskqueue.PanicError
		if !errors.As(err, &pe) || !errors.Is(err, errBoom) || !errors.Is(err, taskqueue.ErrGoexit) {
			t.Fatalf("Wait() = %v; want a *PanicError wrapping boom and ErrGoexit", err)
		}
		if got := p.take(); len(got) != 0 {
			t.Errorf("handler got %v; want nothing: Wait returns the member's panic", got)
		}
	})
}

// A panic is a failure like any other for WithCancelOnError.
func TestGroupPanicCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p panics
		g := taskqueue.NewGroup(t.Context(), taskqueue.NewSerial(p.handler()), taskqueue.WithCancelOnError())
		var ran atomic.Int32
		g.Go(func(context.Context) error { panic("x") })
		g.Go(func(context.Context) error { ran.Add(1); return nil })
		var pe *taskqueue.PanicError
		if err := g.Wait(context.Background()); !errors.As(err, &pe) || pe.Value != "x" {
			t.Errorf("Wait() = %v; want the panic", err)
		}
		if ran.Load() != 0 {
			t.Error("a member ran after the panic")
		}
		p.take()
	})
}

// A done context cancels the members that have not started, and Wait
// returns once the running ones have, without waiting for the queue to reach
// the others.
func TestGroupContextDone(t *testing.T) {
	for _, opts := range [][]taskqueue.GroupOption{nil, {taskqueue.WithCancelOnError()}} {
		forEachKind(t, func(t *testing.T, k queueKind) {
			q := k.new()
			release := block(t, q) // nothing of the group can start
			ctx, cancel := context.WithCancel(t.Context())
			g := taskqueue.NewGroup(ctx, q, opts...)
			var ran atomic.Int32
			for range 10 {
				g.Go(func(context.Context) error { ran.Add(1); return nil })
			}
			cancel()
			if err := g.Wait(context.Background()); err != context.Canceled {
				t.Errorf("Wait() = %v; want context.Canceled", err)
			}
			release()
			q.Close()
			if got := ran.Load(); got != 0 {
				t.Errorf("%d members ran after their context was done", got)
			}
		})
	}
}

// A context done after every member has ended changes nothing.
func TestGroupContextDoneAfterAll(t *testing.T) {
	for _, opts := range [][]taskqueue.GroupOption{nil, {taskqueue.WithCancelOnError()}} {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			g := taskqueue.NewGroup(ctx, taskqueue.NewConcurrent(2), opts...)
			g.Go(func(context.Context) error { return nil })
			synctest.Wait()
			cancel()
			synctest.Wait()
			if err := g.Wait(context.Background()); err != nil {
				t.Errorf("Wait() = %v; want nil", err)
			}
		})
	}
}

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

func TestGroupQueueRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		q.Close()
		g := taskqueue.NewGroup(t.Context(), q)
		g.Go(func(context.Context) error { return nil })
		if err := g.Wait(context.Background()); !errors.Is(err, taskqueue.ErrClosed) {
			t.Errorf("Wait() on a closed queue = %v; want ErrClosed", err)
		}
		// Members wait in the group, not in the queue: they fail only when
		// the queue takes no task to run them.
		full := taskqueue.NewSerial(taskqueue.WithMaxQueued(1), taskqueue.WithFailWhenFull())
		release := block(t, full)
		full.Go(func() {}) // the last room
		fg := taskqueue.NewGroupOf[int](t.Context(), full)
		fg.Go(func(context.Context) (int, error) { return 1, nil })
		fg.Go(func(context.Context) (int, error) { return 2, nil })
		var got []error
		for _, err := range fg.Completed() {
			got = append(got, err)
		}
		if !slices.Equal(got, []error{taskqueue.ErrQueueFull, taskqueue.ErrQueueFull}) {
			t.Errorf("Completed yielded errors %v; want [ErrQueueFull ErrQueueFull]", got)
		}
		release()
	})
}

// CloseNow drops the group's tasks from the queue: the members waiting fail
// with ErrClosed, and Wait does not hang.
func TestGroupCloseNow(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		release := block(t, q)
		g := taskqueue.NewGroup(t.Context(), q)
		var ran atomic.Int32
		for range 10 {
			g.Go(func(context.Context) error { ran.Add(1); return nil })
		}
		q.CloseNow()
		release()
		err := g.Wait(context.Background())
		if !errors.Is(err, taskqueue.ErrClosed) {
			t.Errorf("Wait() after CloseNow = %v; want ErrClosed", err)
		}
		if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 10 || ran.Load() != 0 {
			t.Errorf("%d members failed and %d ran; want 10 and 0", n, ran.Load())
		}
		g2 := taskqueue.NewGroup(t.Context(), q)
		g2.Go(func(context.Context) error { return nil })
		if err := g2.Wait(context.Background()); err != taskqueue.ErrClosed {
			t.Errorf("Wait() of a group on a closed queue = %v; want ErrClosed", err)
		}
	})
}

// Members run one after the other on a few tasks of the queue, which count
// them as its own.
func TestGroupStats(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		var p panics
		q := k.new(p.handler())
		g := taskqueue.NewGroup(t.Context(), q)
		for i := range 1000 {
			g.Go(func(context.Context) error {
				switch i % 100 {
				case 1:
					return errors.New("x")
				case 2:
					panic("y")
				case 3:
					runtime.Goexit()
				}
				return nil
			})
		}
		g.Wait(context.Background())
		q.Close()
		want := taskqueue.Stats{Completed: 1000, Succeeded: 970, Failed: 20, Panicked: 10}
		got := q.Stats()
		// The wait samples one task of the queue in 64, and how many runner
		// tasks the members ran on depends on the schedule: not compared.
		got.Wait = scheduler.Latency{}
		want.Limit = got.Limit // the queue kind's, checked elsewhere
		if got != want {
			t.Errorf("Stats() = %+v; want %+v", got, want)
		}
		p.take()
	})
}

func TestGroupMisuse(t *testing.T) {
	q := taskqueue.NewSerial()
	done := taskqueue.NewGroup(context.Background(), q)
	done.Wait(context.Background())
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"NewGroup(nil)", func() { taskqueue.NewGroup(context.Background(), nil) }, "taskqueue: NewGroup with a nil queue"},
		{"NewGroupOf(nil)", func() { taskqueue.NewGroupOf[int](context.Background(), nil) }, "taskqueue: NewGroupOf with a nil queue"},
		{"WithGroupLimit(0)", func() { taskqueue.WithGroupLimit(0) }, "taskqueue: WithGroupLimit(0): the limit must be positive"},
		{"Go(nil)", func() { taskqueue.NewGroup(context.Background(), q).Go(nil) }, "taskqueue: Group.Go with a nil function"},
		{"GroupOf.Go(nil)", func() { taskqueue.NewGroupOf[int](context.Background(), q).Go(nil) }, "taskqueue: GroupOf.Go with a nil function"},
		{"Go after Wait", func() { done.Go(func(context.Context) error { return nil }) }, "taskqueue: Group.Go after Wait returned: a group is used once"},
		{"Wait from own serial task", func() {
			q.RunSync(context.Background(), func(ctx context.Context) error {
				g := taskqueue.NewGroup(ctx, q)
				g.Go(func(context.Context) error { return nil })
				return g.Wait(ctx)
			})
		}, "taskqueue: Group.Wait from a task of the serial queue it waits for, which would wait for itself"},
	} {
		v := panicValue(c.f)
		if pe, ok := v.(*taskqueue.PanicError); ok {
			v = pe.Value // re-panicked by RunSync
		}
		if got := fmt.Sprint(v); got != c.want {
			t.Errorf("%s panicked with %q; want %q", c.name, got, c.want)
		}
	}
	q.Close()
}

func TestGroupOfValuesInOrder(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		g := taskqueue.NewGroupOf[int](t.Context(), k.new())
		for i := range 40 {
			g.Go(func(context.Context) (int, error) {
				time.Sleep(time.Duration(40-i) * time.Millisecond)
				return i * i, nil
			})
		}
		vals, err := g.Wait(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if v != i*i {
				t.Fatalf("Wait() values = %v; want the squares in order", vals)
			}
		}
	})
}

// Completed yields each result as its member ends, before the slower ones end.
func TestGroupOfCompleted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		g := taskqueue.NewGroupOf[int](t.Context(), taskqueue.NewConcurrent(4))
		errSlow := errors.New("slow")
		for _, d := range []int{3, 1, 4, 2} {
			g.Go(func(context.Context) (int, error) {
				time.Sleep(time.Duration(d) * time.Second)
				if d == 3 {
					return d, errSlow
				}
				return d, nil
			})
		}
		var got []int
		for v, err := range g.Completed() {
			if at := time.Since(start); at != time.Duration(v)*time.Second {
				t.Errorf("result %d yielded at %v; want as it ended, at %ds", v, at, v)
			}
			if (err != nil) != (v == 3) {
				t.Errorf("result %d yielded with error %v", v, err)
			}
			got = append(got, v)
		}
		if want := []int{1, 2, 3, 4}; !slices.Equal(got, want) {
			t.Errorf("Completed yielded %v; want %v", got, want)
		}
		vals, err := g.Wait(context.Background())
		if !slices.Equal(vals, []int{3, 1, 4, 2}) || err != errSlow {
			t.Errorf("Wait() after Completed = %v, %v; want [3 1 4 2], slow", vals, err)
		}
	})
}

// Breaking out of the loop leaves the members running; a new iteration
// yields every result again.
func TestGroupOfCompletedBreak(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := taskqueue.NewGroupOf[int](t.Context(), taskqueue.NewConcurrent(2), taskqueue.WithCancelOnError())
		for i := range 6 {
			g.Go(func(context.Context) (int, error) {
				time.Sleep(time.Duration(i+1) * time.Second)
				return i, nil
			})
		}
		for range g.Completed() {
			break
		}
		n := 0
		for range g.Completed() {
			n++
		}
		if n != 6 {
			t.Errorf("a second iteration yielded %d results; want 6", n)
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
