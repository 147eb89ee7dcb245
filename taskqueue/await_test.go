package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestWaitsThatWouldWaitForThemselvesPanic: every blocking call of the
// package goes through one rule, which panics, naming the call, when the
// caller's work (told by its context) could never see the awaited work done:
// it is that work, or it holds the one slot of a serial queue the work needs
// to start. Each case used to wait until its context ended, or forever.
func TestWaitsThatWouldWaitForThemselvesPanic(t *testing.T) {
	type tree struct{ root, a, b *taskqueue.Queue } // a and b: serial children of a serial root
	cases := []struct {
		name string
		want string
		// in runs in a task of tr.a (or of tr.root, if onRoot), with the
		// task's context, and returns what it did not panic with.
		in     func(ctx context.Context, tr tree)
		onRoot bool
	}{{
		name: "Handle.Wait for a task of its own serial queue",
		want: "Handle.Wait from a task of the serial queue it waits for",
		in: func(ctx context.Context, tr tree) {
			tr.a.RunAsync(context.Background(), nop).Wait(ctx)
		},
	}, {
		name: "Future.Wait for a task of a sibling on a serial target",
		want: "Handle.Wait from a task that holds the one slot of a serial queue that the queue it waits for runs on",
		in: func(ctx context.Context, tr tree) {
			taskqueue.RunAsync(context.Background(), tr.b, func(context.Context) (int, error) { return 1, nil }).Wait(ctx)
		},
	}, {
		name: "Handle.Wait for a task of the target, from a child's task",
		want: "Handle.Wait from a task of the serial queue it waits for",
		in: func(ctx context.Context, tr tree) {
			tr.root.RunAsync(context.Background(), nop).Wait(ctx)
		},
	}, {
		name: "Handle.Wait for a task of a child, from the target's task",
		want: "Handle.Wait from a task that holds the one slot of a serial queue that the queue it waits for runs on",
		in: func(ctx context.Context, tr tree) {
			tr.a.RunAsync(context.Background(), nop).Wait(ctx)
		},
		onRoot: true,
	}, {
		name: "Group.Wait for members on a sibling",
		want: "Group.Wait from a task that holds the one slot of a serial queue that the queue it waits for runs on",
		in: func(ctx context.Context, tr tree) {
			waitForOneMember(ctx, taskqueue.NewGroup(context.Background(), tr.b))
		},
	}, {
		name: "Group.Wait for members on its own serial queue, made with the task's context",
		want: "Group.Wait from a task of the serial queue it waits for",
		in: func(ctx context.Context, tr tree) {
			waitForOneMember(ctx, taskqueue.NewGroup(ctx, tr.a))
		},
	}, {
		name: "Group.Wait for members on its own serial queue, made with another context",
		want: "Group.Wait from a task of the serial queue it waits for",
		in: func(ctx context.Context, tr tree) {
			waitForOneMember(ctx, taskqueue.NewGroup(context.Background(), tr.a))
		},
	}, {
		name: "Group.Wait from a member of the group, on a concurrent queue",
		want: "Group.Wait from a member of the group",
		in: func(ctx context.Context, tr tree) {
			q := taskqueue.NewConcurrent(4)
			defer q.Close()
			g := taskqueue.NewGroup(ctx, q)
			var msg any
			g.Go(func(ctx context.Context) error {
				msg = testkit.PanicValue(func() { g.Wait(ctx) })
				return nil
			})
			g.Wait(ctx)
			panic(msg)
		},
	}, {
		name: "GroupOf.Wait for members on its own serial queue",
		want: "GroupOf.Wait from a task of the serial queue it waits for",
		in: func(ctx context.Context, tr tree) {
			g := taskqueue.NewGroupOf[int](context.Background(), tr.a)
			g.Go(func(context.Context) (int, error) { return 1, nil })
			g.Wait(ctx)
		},
	}, {
		name: "GroupOf.Completed of a group made with the task's context",
		want: "GroupOf.Completed from a task of the serial queue it waits for",
		in: func(ctx context.Context, tr tree) {
			g := taskqueue.NewGroupOf[int](ctx, tr.a)
			g.Go(func(context.Context) (int, error) { return 1, nil })
			for range g.Completed() {
			}
		},
	}, {
		name: "RunSync on a busy sibling",
		want: "RunSync from a task that holds the one slot of a serial queue that the queue it waits for runs on",
		in: func(ctx context.Context, tr tree) {
			tr.b.Go(func() {}) // b is busy: RunSync cannot run on the caller
			tr.b.RunSync(ctx, nop)
		},
	}, {
		name: "Apply on a busy sibling",
		want: "Apply from a task that holds the one slot of a serial queue that the queue it waits for runs on",
		in: func(ctx context.Context, tr tree) {
			tr.b.Go(func() {})
			taskqueue.Apply(ctx, tr.b, 4, func(int) {})
		},
	}, {
		name: "Map on a busy sibling",
		want: "Map from a task that holds the one slot of a serial queue that the queue it waits for runs on",
		in: func(ctx context.Context, tr tree) {
			tr.b.Go(func() {})
			taskqueue.Map(ctx, tr.b, []int{1, 2}, func(_ context.Context, i int) (int, error) { return i, nil })
		},
	}, {
		name: "Handle.Wait from a function run in the task's place",
		want: "Handle.Wait from a task that holds the one slot of a serial queue that the queue it waits for runs on",
		in: func(ctx context.Context, tr tree) {
			var msg any
			tr.a.RunSync(ctx, func(ctx context.Context) error {
				msg = testkit.PanicValue(func() { tr.b.RunAsync(context.Background(), nop).Wait(ctx) })
				return nil
			})
			panic(msg)
		},
	}, {
		name: "Shutdown of the target from a child's task",
		want: "Shutdown from a task of the queue",
		in: func(ctx context.Context, tr tree) {
			tr.root.Shutdown(ctx)
		},
	}, {
		name: "Handle.Wait for its own task, from a goroutine it waits for",
		want: "Handle.Wait from the task it waits for",
		in: func(ctx context.Context, tr tree) {
			h := ctx.Value(selfKey{}).(*atomic.Pointer[taskqueue.Handle]).Load()
			done := make(chan any)
			go func() { done <- testkit.PanicValue(func() { h.Wait(ctx) }) }()
			panic(<-done)
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				root := taskqueue.NewSerial()
				tr := tree{root, taskqueue.NewSerial(taskqueue.WithTarget(root)), taskqueue.NewSerial(taskqueue.WithTarget(root))}
				on := tr.a
				if c.onRoot {
					on = tr.root
				}
				var self atomic.Pointer[taskqueue.Handle]
				ctx := context.WithValue(t.Context(), selfKey{}, &self)
				var msg string
				stored := make(chan struct{}) // the task may start before RunAsync returns
				h := on.RunAsync(ctx, func(ctx context.Context) error {
					<-stored
					msg = testkit.PanicMessage(func() { c.in(ctx, tr) })
					return nil
				})
				self.Store(h)
				close(stored)
				if err := h.Wait(t.Context()); err != nil {
					t.Fatal(err)
				}
				if want := "taskqueue: " + c.want + ", which would wait for itself"; msg != want {
					t.Errorf("panicked with %q; want %q", msg, want)
				}
				if err := root.Close(); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

type selfKey struct{}

// waitForOneMember adds a member to g and waits for it with ctx.
func waitForOneMember(ctx context.Context, g *taskqueue.Group) {
	g.Go(nop)
	g.Wait(ctx)
}

// TestWaitsHoldTheirSlots: a task keeps its slots while it waits. On a
// target of one slot that is not serial (NewConcurrent(1), whose limit may
// change), a task of one child that waits for a sibling holds the slot the
// sibling needs: the wait lasts until its context ends, exactly, and the
// sibling's task runs after, on the slot the waiter gave back. Nothing is
// lent to the awaited task meanwhile. The same holds for the tasks of a
// concurrent queue of one or two slots that all wait for a later task of
// the queue; with a slot free, such a wait ends.
func TestWaitsHoldTheirSlots(t *testing.T) {
	waits := map[string]func(ctx context.Context, q *taskqueue.Queue, ran *atomic.Int64) error{
		"Handle.Wait": func(ctx context.Context, q *taskqueue.Queue, ran *atomic.Int64) error {
			return q.RunAsync(context.Background(), func(context.Context) error { ran.Add(1); return nil }).Wait(ctx)
		},
		"RunSync": func(ctx context.Context, q *taskqueue.Queue, ran *atomic.Int64) error {
			q.Go(func() {}) // q is busy: the call waits for its turn
			return q.RunSync(ctx, func(context.Context) error { ran.Add(1); return nil })
		},
		"Group.Wait": func(ctx context.Context, q *taskqueue.Queue, ran *atomic.Int64) error {
			g := taskqueue.NewGroup(context.Background(), q)
			g.Go(func(context.Context) error { ran.Add(1); return nil })
			return g.Wait(ctx)
		},
	}
	for name, wait := range waits {
		t.Run(name+"/sibling", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				target := taskqueue.NewConcurrent(1)
				a := taskqueue.NewSerial(taskqueue.WithTarget(target))
				b := taskqueue.NewSerial(taskqueue.WithTarget(target))
				var ran atomic.Int64
				start := time.Now()
				h := a.RunAsync(context.Background(), func(ctx context.Context) error {
					ctx, cancel := context.WithTimeout(ctx, time.Hour)
					defer cancel()
					err := wait(ctx, b, &ran)
					if ran.Load() != 0 {
						t.Errorf("the awaited work ran while the waiter held the target's one slot")
					}
					return err
				})
				// Group.Wait cancels the group when its context ends: the
				// member never runs, and the context's error is the group's.
				if err := h.Wait(context.Background()); !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("the waiting task returned %v; want context.DeadlineExceeded", err)
				}
				if waited := time.Since(start); waited != time.Hour {
					t.Errorf("the wait ended after %v; want 1h, when its context ended", waited)
				}
				if err := target.Close(); err != nil {
					t.Fatal(err)
				}
				// A task runs after the wait gave up; a RunSync call and a
				// group's member, given up before they started, never run.
				want := map[string]int64{"Handle.Wait": 1, "RunSync": 0, "Group.Wait": 0}[name]
				if ran.Load() != want {
					t.Errorf("the awaited work ran %d times after the wait; want %d", ran.Load(), want)
				}
			})
		})
	}
	// A queue lends no slot of its own: on a concurrent queue whose slots
	// all wait for a later task of the queue, the awaited task does not start
	// while they wait; waiter i gives up after i+1 seconds, the first freeing
	// its slot at 1s, when the awaited task runs and the others see it done.
	for _, limit := range []int{1, 2} {
		t.Run(fmt.Sprintf("own queue of %d slots", limit), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := taskqueue.NewConcurrent(limit)
				gate := make(chan struct{})
				var awaited *taskqueue.Handle
				var waiters []*taskqueue.Handle
				start := time.Now()
				for i := range limit {
					waiters = append(waiters, q.RunAsync(context.Background(), func(ctx context.Context) error {
						<-gate
						ctx, cancel := context.WithTimeout(ctx, time.Duration(i+1)*time.Second)
						defer cancel()
						err := awaited.Wait(ctx)
						if i == 0 && (!errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second) {
							t.Errorf("the first Wait for a task of its own queue: %v after %v; want DeadlineExceeded after 1s", err, time.Since(start))
						}
						if i > 0 && (err != nil || time.Since(start) != time.Second) {
							t.Errorf("Wait %d: %v after %v; want nil after 1s, once the first waiter freed its slot", i, err, time.Since(start))
						}
						return nil
					}))
				}
				var ranAt atomic.Int64
				awaited = q.RunAsync(context.Background(), func(context.Context) error {
					ranAt.Store(int64(time.Since(start)))
					return nil
				})
				close(gate)
				for _, h := range append(waiters, awaited) {
					if err := h.Wait(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				if at := time.Duration(ranAt.Load()); at != time.Second {
					t.Errorf("the awaited task ran at %v; want 1s, when the first wait gave up, and not while every slot of its queue waited", at)
				}
				q.Close()
			})
		})
	}
	// With a free slot, the wait for a later task of its own queue ends: the
	// awaited task runs on the other slot.
	t.Run("own queue with a free slot", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := taskqueue.NewConcurrent(2)
			var later *taskqueue.Handle
			ready := make(chan struct{})
			h := q.RunAsync(context.Background(), func(ctx context.Context) error {
				<-ready
				return later.Wait(ctx)
			})
			later = q.RunAsync(context.Background(), nop)
			close(ready)
			if err := h.Wait(context.Background()); err != nil {
				t.Errorf("Wait for a later task of its own queue, with a free slot = %v; want nil", err)
			}
			q.Close()
		})
	})
}

// TestWaitsWithAnotherContextLastUntilItEnds: a task is told by its
// context; a wait that, from a task of a serial queue, waits for its own
// queue with another context (here context.Background() with a deadline)
// cannot be told from an outsider's, and lasts until that context is done,
// exactly, without panicking: Handle.Wait, Group.Wait (of a group made with
// either context), RunSync and Shutdown.
func TestWaitsWithAnotherContextLastUntilItEnds(t *testing.T) {
	cases := map[string]func(task context.Context, q *taskqueue.Queue, other context.Context) error{
		"Handle.Wait": func(_ context.Context, q *taskqueue.Queue, other context.Context) error {
			return q.RunAsync(context.Background(), nop).Wait(other)
		},
		"Group.Wait of a group made with another context": func(_ context.Context, q *taskqueue.Queue, other context.Context) error {
			g := taskqueue.NewGroup(context.Background(), q)
			g.Go(nop)
			return g.Wait(other)
		},
		"Group.Wait of a group made with the task's context": func(task context.Context, q *taskqueue.Queue, other context.Context) error {
			g := taskqueue.NewGroup(task, q)
			g.Go(nop)
			return g.Wait(other)
		},
		"RunSync": func(_ context.Context, q *taskqueue.Queue, other context.Context) error {
			return q.RunSync(other, nop)
		},
		"Shutdown": func(_ context.Context, q *taskqueue.Queue, other context.Context) error {
			return q.Shutdown(other)
		},
	}
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler)) // RunSync's warning of a slow wait
	for name, wait := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := taskqueue.NewSerial()
				start := time.Now()
				var msg any
				var err error
				h := q.RunAsync(context.Background(), func(task context.Context) error {
					other, cancel := context.WithTimeout(context.Background(), time.Hour)
					defer cancel()
					msg = testkit.PanicValue(func() { err = wait(task, q, other) })
					return nil
				})
				if err := h.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
				if msg != nil || !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Hour {
					t.Errorf("panicked with %v, returned %v after %v; want DeadlineExceeded after 1h, when the other context ended", msg, err, time.Since(start))
				}
				q.Close()
			})
		})
	}
}

// TestWaitForAContinuationOfItsOwnQueuedTaskPanics: a continuation's
// antecedents are work that a wait for it waits for. A task of a serial
// queue that waits, with its context, for a continuation (on another queue)
// of a task it queued on its own queue could only wait for itself, the
// antecedent needing the slot the waiter holds: the wait panics, naming the
// call, as for the antecedent itself, whether the continuation was made
// with Handle.Then or with the generic Then.
func TestWaitForAContinuationOfItsOwnQueuedTaskPanics(t *testing.T) {
	waits := map[string]func(ctx context.Context, q, other *taskqueue.Queue){
		"Handle.Then": func(ctx context.Context, q, other *taskqueue.Queue) {
			h := q.RunAsync(ctx, nop)
			h.Then(ctx, other, nop).Wait(ctx)
		},
		"Then": func(ctx context.Context, q, other *taskqueue.Queue) {
			f := taskqueue.RunAsync(ctx, q, func(context.Context) (int, error) { return 1, nil })
			taskqueue.Then(ctx, f, other, func(_ context.Context, x int) (int, error) { return x + 1, nil }).Wait(ctx)
		},
	}
	for name, wait := range waits {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q, other := taskqueue.NewSerial(), taskqueue.NewConcurrent(2)
				start := time.Now()
				var msg string
				q.RunAsync(t.Context(), func(ctx context.Context) error {
					ctx, cancel := context.WithTimeout(ctx, time.Hour) // so that a wait that does not panic ends
					defer cancel()
					msg = testkit.PanicMessage(func() { wait(ctx, q, other) })
					return nil
				}).Wait(t.Context())
				if want := "taskqueue: Handle.Wait from a task of the serial queue it waits for, which would wait for itself"; msg != want {
					t.Errorf("the wait panicked with %q after %v; want %q at once", msg, time.Since(start), want)
				}
				q.Close()
				other.Close()
			})
		})
	}
}

// TestWaitsFromAFunctionRunInATasksPlacePanic: a function that RunSync runs
// in a task's place, on the task's own queue, on an idle sibling or on the
// target, holds what the task holds: the one slot of the serial target. Its
// waits for a sibling's work (Handle.Wait, Group.Wait, RunSync behind a busy
// sibling) could only wait for themselves, and panic, naming the call, as
// they do from the task's own body.
func TestWaitsFromAFunctionRunInATasksPlacePanic(t *testing.T) {
	type tree struct{ root, a, b, idle *taskqueue.Queue } // serial children of a serial root
	places := map[string]func(tr tree) *taskqueue.Queue{
		"own queue":    func(tr tree) *taskqueue.Queue { return tr.a },
		"idle sibling": func(tr tree) *taskqueue.Queue { return tr.idle },
		"target":       func(tr tree) *taskqueue.Queue { return tr.root },
	}
	waits := map[string]func(ctx context.Context, b *taskqueue.Queue){
		"Handle.Wait": func(ctx context.Context, b *taskqueue.Queue) { b.RunAsync(context.Background(), nop).Wait(ctx) },
		"Group.Wait": func(ctx context.Context, b *taskqueue.Queue) {
			waitForOneMember(ctx, taskqueue.NewGroup(context.Background(), b))
		},
		"RunSync": func(ctx context.Context, b *taskqueue.Queue) {
			b.Go(func() {}) // b is busy: RunSync cannot run on the caller
			b.RunSync(ctx, nop)
		},
	}
	for pname, place := range places {
		for wname, wait := range waits {
			t.Run(pname+"/"+wname, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					root := taskqueue.NewSerial()
					child := func() *taskqueue.Queue { return taskqueue.NewSerial(taskqueue.WithTarget(root)) }
					tr := tree{root, child(), child(), child()}
					start := time.Now()
					var msg string
					tr.a.RunAsync(t.Context(), func(ctx context.Context) error {
						ctx, cancel := context.WithTimeout(ctx, time.Hour) // so that a wait that does not panic ends
						defer cancel()
						return place(tr).RunSync(ctx, func(ctx context.Context) error {
							msg = testkit.PanicMessage(func() { wait(ctx, tr.b) })
							return nil
						})
					}).Wait(t.Context())
					want := "taskqueue: " + wname + " from a task that holds the one slot of a serial queue that the queue it waits for runs on, which would wait for itself"
					if msg != want {
						t.Errorf("panicked with %q after %v; want %q at once", msg, time.Since(start), want)
					}
					root.Close()
				})
			})
		}
	}
}
