package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
			g := taskqueue.NewGroup(context.Background(), tr.b)
			g.Go(nop)
			g.Wait(ctx)
		},
	}, {
		name: "Group.Wait for members on its own serial queue, made with the task's context",
		want: "Group.Wait from a task of the serial queue it waits for",
		in: func(ctx context.Context, tr tree) {
			g := taskqueue.NewGroup(ctx, tr.a)
			g.Go(nop)
			g.Wait(ctx)
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
				h := on.RunAsync(ctx, func(ctx context.Context) error {
					msg = testkit.PanicMessage(func() { c.in(ctx, tr) })
					return nil
				})
				self.Store(h)
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

// TestWaitsHoldTheirSlots: a task keeps its slots while it waits. On a
// target of one slot that is not serial (NewConcurrent(1), whose limit may
// change), a task of one child that waits for a sibling holds the slot the
// sibling needs: the wait lasts until its context ends, exactly, and the
// sibling's task runs after, on the slot the waiter gave back. Nothing is
// lent to the awaited task meanwhile. The same holds for two tasks of a
// concurrent queue of two slots that both wait for a third of the queue.
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
	t.Run("own concurrent queue", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := taskqueue.NewConcurrent(2)
			var ran atomic.Int64
			var awaited *taskqueue.Handle
			gate := make(chan struct{})
			var errs [2]error
			var waiters []*taskqueue.Handle
			for i := range 2 {
				waiters = append(waiters, q.RunAsync(context.Background(), func(ctx context.Context) error {
					<-gate
					ctx, cancel := context.WithTimeout(ctx, time.Duration(i+1)*time.Hour)
					defer cancel()
					errs[i] = awaited.Wait(ctx)
					return nil
				}))
			}
			awaited = q.RunAsync(context.Background(), func(context.Context) error { ran.Add(1); return nil })
			close(gate)
			for _, h := range waiters {
				h.Wait(context.Background())
			}
			if !errors.Is(errs[0], context.DeadlineExceeded) || errs[1] != nil {
				t.Errorf("the waits returned %v; want the first to end with its context, freeing its slot for the awaited task, and the second to see it done", errs)
			}
			q.Close()
		})
	})
}

// "A queue lends no slot of its own: tasks that wait for tasks of their own
// queue keep their slots, and when every slot of the queue waits so, the
// waits last until their contexts end."
//
// On a serial queue, and on a concurrent queue whose two slots both wait,
// the awaited task must not start while the waiters wait; the waits end with
// their deadline, exactly, and the awaited task runs after. A broken
// implementation lends the queue's own slot (the awaited task runs during the
// wait, and on a serial queue beside its waiting task).
func TestOutside4OwnQueueLendsNothing(t *testing.T) {
	for _, limit := range []int{1, 2} {
		synctest.Test(t, func(t *testing.T) {
			// Not NewSerial: on a serial queue such a wait panics (see
			// TestWaitsThatWouldWaitForThemselvesPanic).
			q := taskqueue.NewConcurrent(limit)
			gate := make(chan struct{})
			var target *taskqueue.Handle
			var waiters []*taskqueue.Handle
			t0 := time.Now()
			for i := 0; i < limit; i++ {
				// Waiter i gives up after i+1 seconds: the first gives up
				// at 1s, freeing its slot, and the awaited task runs then.
				waiters = append(waiters, q.RunAsync(context.Background(), func(ctx context.Context) error {
					<-gate
					c, cancel := context.WithTimeout(ctx, time.Duration(i+1)*time.Second)
					defer cancel()
					err := target.Wait(c)
					if i == 0 && (!errors.Is(err, context.DeadlineExceeded) || time.Since(t0) != time.Second) {
						t.Errorf("limit %d: first Wait for a task of the own queue: %v after %v, want DeadlineExceeded after 1s", limit, err, time.Since(t0))
					}
					if i > 0 && (err != nil || time.Since(t0) != time.Second) {
						t.Errorf("limit %d: Wait %d: %v after %v, want nil after 1s, once the first waiter freed its slot", limit, i, err, time.Since(t0))
					}
					return nil
				}))
			}
			var ranAt atomic.Int64
			target = q.RunAsync(context.Background(), func(context.Context) error {
				ranAt.Store(int64(time.Since(t0)))
				return nil
			})
			close(gate)
			for _, h := range append(waiters, target) {
				if err := h.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if at := time.Duration(ranAt.Load()); at != time.Second {
				t.Errorf("limit %d: the awaited task ran at %v, want 1s: when the first wait gave up, and not while every slot of its queue waited", limit, at)
			}
		})
	}
}

// With a free slot the wait for a task of the own queue completes: a
// concurrent queue of limit 2, one task waits for a later one, which runs on
// the other slot. A broken implementation that holds both slots hangs
// (synctest reports the deadlock).
func TestOutside4OwnQueueFreeSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(2)
		var later *taskqueue.Handle
		ready := make(chan struct{})
		h := q.RunAsync(context.Background(), func(ctx context.Context) error {
			<-ready
			return later.Wait(ctx)
		})
		later = q.RunAsync(context.Background(), func(context.Context) error { return nil })
		close(ready)
		if err := h.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// Waiting for a group from a task of its own serial queue panics; so does ranging
// over Completed there. From a task of a concurrent queue with a free slot it works.
func TestOutsideGroupWaitFromOwnSerialTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		ctx := context.Background()
		var gotWait, gotRange any
		err := q.RunAsync(ctx, func(tctx context.Context) error {
			g := taskqueue.NewGroup(tctx, q)
			g.Go(func(context.Context) error { return nil })
			func() {
				defer func() { gotWait = recover() }()
				wctx, cancel := context.WithTimeout(tctx, time.Hour)
				defer cancel()
				g.Wait(wctx)
			}()
			gof := taskqueue.NewGroupOf[int](tctx, q)
			gof.Go(func(context.Context) (int, error) { return 1, nil })
			func() {
				defer func() { gotRange = recover() }()
				for range gof.Completed() {
				}
			}()
			return nil
		}).Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if gotWait == nil {
			t.Errorf("Group.Wait from a task of its own serial queue did not panic")
		}
		if gotRange == nil {
			t.Errorf("ranging over GroupOf.Completed from a task of its own serial queue did not panic")
		}
		q.Close()
	})
}

// The same, when the group or the Wait uses a context that is not the task's:
// Wait panics when its context is the task's; with another one it cannot be
// told from an outsider's wait, and lasts until that context is done, as
// documented.
func TestOutsideGroupWaitFromOwnSerialTaskOtherContext(t *testing.T) {
	for _, v := range []struct {
		name                string
		groupTask, waitTask bool
	}{
		{"group background, wait background", false, false},
		{"group task ctx, wait background", true, false},
		{"group background, wait task ctx", false, true},
	} {
		t.Run(v.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := taskqueue.NewSerial()
				ctx := context.Background()
				var got any
				var werr error
				err := q.RunAsync(ctx, func(tctx context.Context) error {
					gctx, wbase := context.Background(), context.Background()
					if v.groupTask {
						gctx = tctx
					}
					if v.waitTask {
						wbase = tctx
					}
					g := taskqueue.NewGroup(gctx, q)
					g.Go(func(context.Context) error { return nil })
					func() {
						defer func() { got = recover() }()
						wctx, cancel := context.WithTimeout(wbase, time.Hour)
						defer cancel()
						werr = g.Wait(wctx)
					}()
					return nil
				}).Wait(ctx)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case v.waitTask && got == nil:
					t.Errorf("Group.Wait with the task's context from a task of its own serial queue did not panic; it returned %v after an hour", werr)
				case !v.waitTask && (got != nil || !errors.Is(werr, context.DeadlineExceeded)):
					t.Errorf("Group.Wait with another context: panic %v, returned %v; want it to wait out its deadline", got, werr)
				}
				q.Close()
			})
		})
	}
}

// TestGroupWaitFromAMemberPanics: a member that waits for its own group,
// with its context, on a concurrent queue, panics with a message instead of
// hanging (it used to hang forever).
func TestGroupWaitFromAMemberPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(4)
		g := taskqueue.NewGroup(t.Context(), q)
		var msg any
		g.Go(func(ctx context.Context) error {
			msg = testkit.PanicValue(func() { g.Wait(ctx) })
			return nil
		})
		if err := g.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if want := "taskqueue: Group.Wait from a member of the group, which would wait for itself"; fmt.Sprint(msg) != want {
			t.Errorf("Wait from a member panicked with %v; want %q", msg, want)
		}
		q.Close()
	})
}

// Shutdown panics when called from one of q's own tasks, whatever context it is
// given (the doc names no context), instead of waiting for itself forever.
func TestOutsideShutdownFromOwnTaskPanics(t *testing.T) {
	for _, name := range []string{"task context", "background with deadline"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := taskqueue.NewSerial()
				var got any
				var ret error
				err := s.RunAsync(context.Background(), func(tctx context.Context) error {
					ctx := tctx
					if name != "task context" {
						c, cancel := context.WithTimeout(context.Background(), time.Hour)
						defer cancel()
						ctx = c
					} else {
						c, cancel := context.WithTimeout(tctx, time.Hour)
						defer cancel()
						ctx = c
					}
					func() {
						defer func() { got = recover() }()
						ret = s.Shutdown(ctx)
					}()
					return nil
				}).Wait(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if name != "task context" {
					// Documented: a call with another context cannot be told
					// from an outsider's, and waits until that context is done.
					if got != nil || !errors.Is(ret, context.DeadlineExceeded) {
						t.Fatalf("Shutdown from the queue's own task with another context: panic %v, returned %v; want it to wait out its deadline", got, ret)
					}
					s.Close()
					return
				}
				if got == nil {
					t.Fatalf("Shutdown from the queue's own task did not panic; it returned %v (after waiting for its deadline)", ret)
				}
				if !strings.Contains(fmt.Sprint(got), "taskqueue") {
					t.Errorf("panic %q does not name the package", fmt.Sprint(got))
				}
				s.Close()
			})
		})
	}
}
