package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestRunSyncWithTheTasksContext checks the re-entry rule: RunSync with the
// context a task received runs in the task's place, from the task itself, from
// an iter.Pull body it drives, and from goroutines it starts and waits for,
// the nested functions never overlapping.
func TestRunSyncWithTheTasksContext(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		var in, most atomic.Int32
		nested := func(context.Context) (int, error) {
			n := in.Add(1)
			defer in.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			return 1, nil
		}
		v, err := taskqueue.RunAsync(context.Background(), q, func(ctx context.Context) (int, error) {
			sum := 0
			v, _ := taskqueue.RunSync(ctx, q, nested) // from the task
			sum += v
			next, stop := iter.Pull(func(yield func(int) bool) { // from a body it drives
				v, _ := taskqueue.RunSync(ctx, q, nested)
				yield(v)
			})
			v, _ = next()
			stop()
			sum += v
			var wg sync.WaitGroup
			var total atomic.Int32
			for range 8 { // from goroutines it waits for
				wg.Go(func() {
					v, _ := taskqueue.RunSync(ctx, q, nested)
					total.Add(int32(v))
				})
			}
			wg.Wait()
			return sum + int(total.Load()), nil
		}).Wait(context.Background())
		if v != 10 || err != nil {
			t.Errorf("RunSync with the task's context, 10 times = %d, %v; want 10, nil", v, err)
		}
		if most.Load() != 1 {
			t.Errorf("%d functions run in one task's place overlapped; want none", most.Load())
		}
	})
}

// TestReturnedTaskContextIsAnOutsiders: once a task has returned, its
// context is an outsider's and holds no slot. A serial queue's task keeps
// its context (a task run on a worker, or a RunSync run on the caller), and
// a second task runs and blocks: RunSync with the kept context waits behind
// it (it may fail with its context's error, without running f), never
// beside it. On a tree whose target has one slot, a wait with a child's kept
// context lends nothing: a sibling's task does not start while a task of
// the target holds the slot. A broken implementation still treats the kept
// context as the first task's, and runs f, or the sibling's task, in a place
// that no longer exists.
func TestReturnedTaskContextIsAnOutsiders(t *testing.T) {
	keep := map[string]func(q *taskqueue.Queue) context.Context{
		"task on a worker": func(q *taskqueue.Queue) context.Context {
			kept := make(chan context.Context, 1)
			q.RunAsync(context.Background(), func(ctx context.Context) error { kept <- ctx; return nil }).Wait(context.Background())
			return <-kept
		},
		"RunSync on the caller": func(q *taskqueue.Queue) context.Context {
			var kept context.Context
			q.RunSync(context.Background(), func(ctx context.Context) error { kept = ctx; return nil })
			return kept
		},
	}
	for name, keep := range keep {
		t.Run("RunSync/"+name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := taskqueue.NewSerial()
				g := newGauge("serial queue", 1)
				kept := keep(q)
				release := make(chan struct{})
				h := q.RunAsync(context.Background(), func(context.Context) error {
					g.Enter("the queue's next task")
					<-release
					g.Leave()
					return nil
				})
				synctest.Wait()
				var ran atomic.Bool
				done := make(chan error, 1)
				go func() {
					done <- q.RunSync(kept, func(context.Context) error {
						g.Enter("RunSync with the kept context")
						ran.Store(true)
						g.Leave()
						return nil
					})
				}()
				synctest.Wait()
				select {
				case err := <-done:
					if err == nil || ran.Load() {
						t.Errorf("RunSync with a returned task's context = %v, ran %v, beside the queue's running task; want it to wait", err, ran.Load())
					}
				default:
				}
				close(release)
				if err := h.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				if err := q.Close(); err != nil {
					t.Fatal(err)
				}
				checkGauges(t, g)
			})
		})
	}
	t.Run("Handle.Wait on a tree", func(t *testing.T) {
		for round := range 20 {
			synctest.Test(t, func(t *testing.T) {
				T := taskqueue.NewSerial()
				A := taskqueue.NewSerial(taskqueue.WithTarget(T))
				B := taskqueue.NewSerial(taskqueue.WithTarget(T))
				g := newGauge("target of one slot", 1)
				var kept context.Context
				if err := A.RunSync(context.Background(), func(ctx context.Context) error { kept = ctx; return nil }); err != nil {
					t.Fatal(err)
				}
				release := make(chan struct{})
				hr := T.RunAsync(context.Background(), func(context.Context) error {
					g.Enter("T's task R")
					<-release
					g.Leave()
					return nil
				})
				synctest.Wait()
				hb := B.RunAsync(context.Background(), func(context.Context) error { g.Enter("B's task"); g.Leave(); return nil })
				waitDone := make(chan error, 1)
				go func() { waitDone <- hb.Wait(kept) }()
				synctest.Wait()
				if hb.IsDone() {
					t.Errorf("B's task ran while R held T's one slot: a returned task's context lent it")
				}
				close(release)
				if err := hr.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
				if err := <-waitDone; err != nil && err != context.Canceled {
					t.Errorf("wait with the kept context: %v", err)
				}
				if err := T.Close(); err != nil {
					t.Fatal(err)
				}
				checkGauges(t, g)
			})
			if t.Failed() {
				t.Fatalf("round %d", round)
			}
		}
	})
}

// TestWorkOfADerivedContextRunsInPlace: the work of a task is told by a
// context that is, or derives from, the task's. A task of a serial queue
// that submits, with its context, a task of another queue and waits for it:
// that task's RunSync on the first queue runs in the waiting task's place,
// as the waiting task's own call would (it used to wait behind the task
// until its context ended).
func TestWorkOfADerivedContextRunsInPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		serial := taskqueue.NewSerial()
		other := taskqueue.NewConcurrent(2)
		var inPlace bool
		err := serial.RunSync(t.Context(), func(ctx context.Context) error {
			return other.RunAsync(ctx, func(ctx context.Context) error {
				return serial.RunSync(ctx, func(context.Context) error {
					inPlace = true
					return nil
				})
			}).Wait(ctx)
		})
		if err != nil || !inPlace {
			t.Errorf("RunSync from a task that the serial queue's task waits for: %v, ran %v; want nil, true", err, inPlace)
		}
		if st := serial.Stats(); st.Completed != 2 {
			t.Errorf("Completed = %d; want 2: the task and the function run in its place", st.Completed)
		}
		serial.Close()
		other.Close()
	})
}

// TestRunSyncInPlaceTakesNoSecondSlot checks, while the tasks run, that a
// RunSync from a task runs on the task's own slot: the queue never counts
// more tasks running than its limit, nor more slots than tasks.
func TestRunSyncInPlaceTakesNoSecondSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q := taskqueue.NewConcurrent(3)
		release := make(chan struct{})
		inner := make(chan taskqueue.Stats, 2)
		for range 2 {
			q.RunAsync(ctx, func(ctx context.Context) error {
				return q.RunSync(ctx, func(context.Context) error {
					inner <- q.Stats()
					<-release
					return nil
				})
			})
		}
		synctest.Wait()
		for range 2 {
			if st := <-inner; st.Running > 4 {
				t.Errorf("Running = %d inside two RunSync in place; want at most 4 (two tasks, each with its inner call)", st.Running)
			}
		}
		// Two slots are held, so the third is free: a third task starts.
		third := make(chan struct{})
		q.Go(func() { close(third) })
		synctest.Wait()
		select {
		case <-third:
		default:
			t.Error("a third task did not start beside two tasks running RunSync in place on a queue of three slots")
		}
		close(release)
		q.Close()
	})
}

// TestInPlaceTurnWaitGivesUp: a call that waits for its turn in a task's
// place gives up when its context is done, and the wait is durable for
// testing/synctest, whatever the queue: a serial one, a concurrent one, a
// child calling in place on its target, and a Keyed lane calling on its own
// key. One helper holds the turn (blocked on a channel); a second helper's
// call waits for it: synctest.Wait returns, the second call has not run, and
// canceling its context makes it return context.Canceled without running. A
// broken implementation runs the second function beside the first, or
// ignores the cancel; one whose turn-taking waits on a sync.Mutex or a
// sync.Cond, which synctest does not see as durable, hangs synctest.Wait
// here, and the test binary's timeout names this test.
func TestInPlaceTurnWaitGivesUp(t *testing.T) {
	type kind struct {
		name string
		// run runs task as a task, and call calls in its place.
		run func(task func(ctx context.Context, call func(context.Context, func()) error) error) error
	}
	kinds := []kind{
		{"serial", func(task func(context.Context, func(context.Context, func()) error) error) error {
			q := taskqueue.NewSerial()
			return q.RunSync(context.Background(), func(ctx context.Context) error {
				return task(ctx, func(c context.Context, f func()) error {
					return q.RunSync(c, func(context.Context) error { f(); return nil })
				})
			})
		}},
		{"concurrent", func(task func(context.Context, func(context.Context, func()) error) error) error {
			q := taskqueue.NewConcurrent(3)
			return q.RunSync(context.Background(), func(ctx context.Context) error {
				return task(ctx, func(c context.Context, f func()) error {
					return q.RunSync(c, func(context.Context) error { f(); return nil })
				})
			})
		}},
		{"child on its target", func(task func(context.Context, func(context.Context, func()) error) error) error {
			T := taskqueue.NewConcurrent(3)
			A := taskqueue.NewSerial(taskqueue.WithTarget(T))
			return A.RunSync(context.Background(), func(ctx context.Context) error {
				return task(ctx, func(c context.Context, f func()) error {
					return T.RunSync(c, func(context.Context) error { f(); return nil })
				})
			})
		}},
		{"keyed lane", func(task func(context.Context, func(context.Context, func()) error) error) error {
			k := taskqueue.NewKeyed[int](taskqueue.NewConcurrent(3))
			return k.RunSync(context.Background(), 1, func(ctx context.Context) error {
				return task(ctx, func(c context.Context, f func()) error {
					return k.RunSync(c, 1, func(context.Context) error { f(); return nil })
				})
			})
		}},
	}
	for _, kd := range kinds {
		t.Run(kd.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				var secondRan bool
				var secondErr error
				err := kd.run(func(ctx context.Context, call func(context.Context, func()) error) error {
					entered := make(chan struct{})
					firstDone := make(chan error, 1)
					go func() { firstDone <- call(ctx, func() { close(entered); <-release }) }()
					<-entered
					c2, cancel := context.WithCancel(ctx)
					secondDone := make(chan struct{})
					go func() {
						defer close(secondDone)
						secondErr = call(c2, func() { secondRan = true })
					}()
					synctest.Wait()
					select {
					case <-secondDone:
						t.Errorf("second call returned (%v, ran %v) while the first held the task's turn", secondErr, secondRan)
					default:
					}
					cancel()
					synctest.Wait()
					select {
					case <-secondDone:
					default:
						t.Errorf("second call still waits after its context was canceled")
					}
					close(release)
					<-secondDone
					return <-firstDone
				})
				if err != nil {
					t.Fatal(err)
				}
				if secondRan || secondErr != context.Canceled {
					t.Errorf("canceled call: ran %v, returned %v; want not run, context.Canceled", secondRan, secondErr)
				}
			})
		})
	}
}

// TestInPlaceTurnWaitDeadline: the same on a serial queue with deadlines on
// fake time: the waiting call gives up exactly when its deadline passes, not
// before, and Apply waiting for its turn gives up too, calling f for no
// iteration.
func TestInPlaceTurnWaitDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		release := make(chan struct{})
		var applied atomic.Int64
		err := q.RunSync(context.Background(), func(ctx context.Context) error {
			entered := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = q.RunSync(ctx, func(context.Context) error { close(entered); <-release; return nil })
			}()
			<-entered
			start := time.Now()
			c2, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			err := q.RunSync(c2, func(context.Context) error { t.Errorf("ran past its deadline"); return nil })
			if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
				t.Errorf("RunSync waiting for its turn: %v after %v, want DeadlineExceeded after 1s", err, time.Since(start))
			}
			c3, cancel3 := context.WithTimeout(ctx, 2*time.Second)
			defer cancel3()
			start = time.Now()
			err = taskqueue.Apply(c3, q, 10, func(int) { applied.Add(1) })
			if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 2*time.Second {
				t.Errorf("Apply waiting for its turn: %v after %v, want DeadlineExceeded after 2s", err, time.Since(start))
			}
			close(release)
			wg.Wait()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := applied.Load(); n != 0 {
			t.Errorf("Apply that gave up called f %d times", n)
		}
	})
}

// TestInPlacePanicAndGoexitFreeTheTurn: a function run in a task's place by
// a helper panics, or calls runtime.Goexit. Docs: "If f panics, RunSync panics in the caller with the
// *PanicError ... if f calls runtime.Goexit, so does RunSync", and the place
// is then free for the other helpers' functions, which take turns. A broken
// queue keeps the turn held after a panic or Goexit (the others hang), lets
// them overlap afterwards, or loses the panic.
func TestInPlacePanicAndGoexitFreeTheTurn(t *testing.T) {
	for iter := 0; iter < 30 && !t.Failed(); iter++ {
		q := taskqueue.NewSerial()
		g := newGauge("serial", 1)
		var panics, goexits, oks atomic.Int64
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		h := q.RunAsync(ctx, func(tctx context.Context) error {
			var wg sync.WaitGroup
			for k := 0; k < 6; k++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 0; r < 6; r++ {
						mode := (k + r) % 3
						var finished, panicked bool
						done := make(chan struct{})
						go func() {
							defer close(done)
							defer func() {
								if v := recover(); v != nil {
									panicked = true
									var pe *taskqueue.PanicError
									if e, ok := v.(error); !ok || !errors.As(e, &pe) {
										t.Errorf("RunSync panicked with %T %v, want *PanicError", v, v)
									}
								}
							}()
							err := q.RunSync(tctx, func(context.Context) error {
								g.Enter("in place")
								runtime.Gosched()
								g.Leave()
								switch mode {
								case 1:
									panic("boom")
								case 2:
									runtime.Goexit()
								}
								return nil
							})
							finished = true
							if err != nil {
								t.Errorf("RunSync: %v", err)
							}
						}()
						<-done
						switch {
						case finished && mode == 0:
							oks.Add(1)
						case panicked && mode == 1:
							panics.Add(1)
						case !finished && !panicked && mode == 2:
							goexits.Add(1)
						default:
							t.Errorf("mode %d: finished %v panicked %v", mode, finished, panicked)
						}
					}
				}()
			}
			wg.Wait()
			return nil
		})
		if err := h.Wait(ctx); err != nil {
			t.Errorf("task: %v", err)
		}
		cancel()
		checkGauges(t, g)
		if oks.Load() != 12 || panics.Load() != 12 || goexits.Load() != 12 {
			t.Errorf("ok calls %d, panics %d, Goexits %d: want 12 of each", oks.Load(), panics.Load(), goexits.Load())
		}
	}
}

// TestInPlaceFunctionsTakeTurns: tasks start helpers that, with the task's
// context and at the same time, run RunSync in the task's place, Apply and
// Map (letters s, a and m of each case's mixes), and wait for them. Docs,
// RunSync: "Functions run in one task's place take turns: no two of them
// overlap, whichever goroutines call", and the queue's limit holds; Apply:
// "The caller works on a slot of q: in the place of its own task if it runs
// one of q ... if q has none free, the caller only waits for the others";
// Apply and Map from a serial queue's task run on the caller only. So a
// queue of limit 1 (serial, or concurrent with limit 1) never runs two
// functions at once, and one of limit 2 never three. A broken queue lets
// Apply's caller run iterations in the task's place while a RunSync
// function runs there too, or lets a helper's function run beside another
// task; one that loses a call or deadlocks fails the deadline.
func TestInPlaceFunctionsTakeTurns(t *testing.T) {
	cases := []struct {
		name   string
		new    func() *taskqueue.Queue
		limit  int
		tasks  int
		mixes  []string
		rounds int
	}{
		{"serial/one task", func() *taskqueue.Queue { return taskqueue.NewSerial() }, 1, 1, []string{"sa", "sm", "aa", "mm", "am"}, 30},
		{"serial/three tasks", func() *taskqueue.Queue { return taskqueue.NewSerial() }, 1, 3, []string{"sa", "sm", "am", "sam"}, 15},
		{"concurrent=1/one task", func() *taskqueue.Queue { return taskqueue.NewConcurrent(1) }, 1, 1, []string{"sa", "sm", "aa", "mm", "am"}, 30},
		{"concurrent=2/four tasks", func() *taskqueue.Queue { return taskqueue.NewConcurrent(2) }, 2, 4, []string{"ss", "sa", "sm", "am", "sam"}, 15},
	}
	for _, c := range cases {
		for _, mix := range c.mixes {
			t.Run(c.name+"/"+mix, func(t *testing.T) {
				for round := 0; round < c.rounds && !t.Failed(); round++ {
					q := c.new()
					g := newGauge(c.name, c.limit)
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					var hs []*taskqueue.Handle
					for range c.tasks {
						hs = append(hs, q.RunAsync(ctx, func(tctx context.Context) error {
							g.Enter("body")
							runtime.Gosched()
							g.Leave()
							runHelpers(t, tctx, q, testkit.Gauges{g}, mix)
							return nil
						}))
					}
					for _, h := range hs {
						if err := h.Wait(ctx); err != nil {
							t.Errorf("task: %v", err)
						}
					}
					cancel()
					checkGauges(t, g)
					if err := q.Close(); err != nil {
						t.Fatal(err)
					}
					s := q.Stats()
					if s.Running != 0 || s.Queued != 0 || s.Completed != s.Succeeded+s.Failed+s.Panicked || s.Failed+s.Panicked != 0 {
						t.Errorf("stats: %+v", s)
					}
				}
			})
		}
	}
}

// TestInPlaceNestedCallsTakeTurns: tasks start helpers and wait for them;
// each helper calls RunSync with the task's context many times, some calls
// nested in the inner function with its own context. Docs: work done with
// the task's context, or one derived from it, is the task's own, whatever
// goroutine does it; "Functions run in one task's place take turns: no two
// of them overlap ... each gets a context of its own for its own nested
// calls", and the queue's limit holds. A broken queue runs two functions of
// one task at once, runs a task's helper beside another task of a serial
// queue, runs more than the limit at once, or deadlocks a nested call.
func TestInPlaceNestedCallsTakeTurns(t *testing.T) {
	cases := []struct {
		name                             string
		new                              func() *taskqueue.Queue
		limit                            int
		tasks, helpers, calls, nestEvery int
		rounds                           int
	}{
		{"serial", func() *taskqueue.Queue { return taskqueue.NewSerial() }, 1, 6, 4, 10, 3, 40},
		{"concurrent=2", func() *taskqueue.Queue { return taskqueue.NewConcurrent(2) }, 2, 4, 6, 50, 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nested := (c.calls + c.nestEvery - 1) / c.nestEvery // calls r with r%nestEvery == 0
			want := int64(c.tasks * c.helpers * (c.calls + nested))
			for round := 0; round < c.rounds && !t.Failed(); round++ {
				q := c.new()
				qg := newGauge(c.name, c.limit)
				var runs atomic.Int64
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				var handles []*taskqueue.Handle
				for i := range c.tasks {
					tg := newGauge(fmt.Sprintf("functions in the place of task %d", i), 1)
					gs := testkit.Gauges{qg, tg}
					handles = append(handles, q.RunAsync(ctx, func(tctx context.Context) error {
						gs.Enter("body")
						runtime.Gosched()
						gs.Leave()
						var wg sync.WaitGroup
						for range c.helpers {
							wg.Go(func() {
								for r := range c.calls {
									err := q.RunSync(tctx, func(fctx context.Context) error {
										gs.Enter("in place")
										runs.Add(1)
										runtime.Gosched()
										gs.Leave()
										if r%c.nestEvery == 0 {
											// nested, with the inner context
											return q.RunSync(fctx, func(context.Context) error {
												gs.Enter("nested in place")
												runs.Add(1)
												gs.Leave()
												return nil
											})
										}
										return nil
									})
									if err != nil {
										t.Errorf("helper RunSync: %v", err)
										return
									}
								}
							})
						}
						wg.Wait()
						checkGauges(t, tg)
						return nil
					}))
				}
				for _, h := range handles {
					if err := h.Wait(ctx); err != nil {
						t.Errorf("task: %v", err)
					}
				}
				cancel()
				checkGauges(t, qg)
				if runs.Load() != want {
					t.Errorf("ran %d in-place functions, want %d", runs.Load(), want)
				}
				q.Close()
			}
		})
	}
}

// TestInPlaceTurnsBesideOutsiders: "Functions run in one task's place take
// turns (Apply's and Map's part on the caller included): no two of them
// overlap, whichever goroutines call", and a task keeps its slot while it
// waits. A serial queue's task starts helpers that it waits for: three call
// RunSync with the task's context in a loop, one runs Apply and one Map with
// it, while an outsider floods the queue with Go and RunSync. Every function
// that runs on the queue enters one gauge of limit 1. An implementation that
// runs in-place functions from two goroutines at once (no turns), or lets
// Apply's caller part run beside a RunSync in the same place, or lets the
// outsider's tasks start on the slot of the waiting task, shows two at once.
func TestInPlaceTurnsBesideOutsiders(t *testing.T) {
	for round := 0; round < 20; round++ {
		q := taskqueue.NewSerial()
		g := newGauge("serial queue", 1)
		var ran atomic.Int64
		body := func(what string) {
			g.Enter(what)
			ran.Add(1)
			for i := 0; i < 20; i++ {
				_ = i * i
			}
			g.Leave()
		}
		stop := make(chan struct{})
		var outside sync.WaitGroup
		outside.Add(1)
		var outsiderRan atomic.Int64
		go func() {
			defer outside.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := q.Go(func() { body("outsider Go"); outsiderRan.Add(1) }); err != nil {
					t.Errorf("Go: %v", err)
					return
				}
				_ = q.RunSync(context.Background(), func(context.Context) error { body("outsider RunSync"); return nil })
			}
		}()
		const loops = 100
		err := q.RunSync(context.Background(), func(ctx context.Context) error {
			g.Enter("task")
			g.Leave()
			var wg sync.WaitGroup
			for h := 0; h < 3; h++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < loops; i++ {
						if err := q.RunSync(ctx, func(context.Context) error { body("in-place RunSync"); return nil }); err != nil {
							t.Errorf("in-place RunSync: %v", err)
							return
						}
					}
				}()
			}
			wg.Add(2)
			go func() {
				defer wg.Done()
				if err := taskqueue.Apply(ctx, q, loops, func(int) { body("Apply iteration") }); err != nil {
					t.Errorf("Apply: %v", err)
				}
			}()
			go func() {
				defer wg.Done()
				items := make([]int, loops)
				out, err := taskqueue.Map(ctx, q, items, func(_ context.Context, v int) (int, error) { body("Map call"); return v + 1, nil })
				if err != nil || len(out) != loops {
					t.Errorf("Map: %d results, %v", len(out), err)
				}
			}()
			wg.Wait()
			return nil
		})
		close(stop)
		outside.Wait()
		if err != nil {
			t.Fatalf("outer RunSync: %v", err)
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		checkGauges(t, g)
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
		if ran.Load() < 5*loops {
			t.Fatalf("only %d functions ran, want at least %d", ran.Load(), 5*loops)
		}
	}
}

// TestInPlaceTurnsOnHeldSlots: the same on a concurrent queue of limit 2
// whose two slots are both held by tasks that wait for their helpers: Apply
// and Map cannot get a free slot, so every iteration runs on its caller in
// the task's place, and so the functions of one task never overlap each
// other, while the queue runs at most two. Neither task returns before the
// helpers of both are done. A broken implementation overlaps two functions
// of one task (one gauge per task, limit 1), or runs Apply's queued helpers
// on the slot of a waiting task (queue gauge, limit 2).
func TestInPlaceTurnsOnHeldSlots(t *testing.T) {
	for round := 0; round < 20; round++ {
		q := taskqueue.NewConcurrent(2)
		qg := newGauge("queue of limit 2", 2)
		both := make(chan struct{})
		var started atomic.Int32
		// Neither task returns before the helpers of both are done: a slot
		// freed early would let the other task's Apply and Map run queued
		// helpers there, legitimately beside its in-place functions.
		var helpersOfBoth sync.WaitGroup
		helpersOfBoth.Add(2)
		hs := make([]*taskqueue.Handle, 2)
		for k := range hs {
			tg := newGauge("functions in the place of one task", 1)
			hs[k] = q.RunAsync(context.Background(), func(ctx context.Context) error {
				if started.Add(1) == 2 {
					close(both)
				}
				<-both
				fn := func(what string) {
					qg.Enter(what)
					tg.Enter(what)
					for i := 0; i < 30; i++ {
						_ = i * i
					}
					tg.Leave()
					qg.Leave()
				}
				var wg sync.WaitGroup
				wg.Add(3)
				go func() {
					defer wg.Done()
					for i := 0; i < 100; i++ {
						if err := q.RunSync(ctx, func(context.Context) error { fn("RunSync"); return nil }); err != nil {
							t.Errorf("RunSync: %v", err)
							return
						}
					}
				}()
				go func() {
					defer wg.Done()
					if err := taskqueue.Apply(ctx, q, 100, func(int) { fn("Apply") }); err != nil {
						t.Errorf("Apply: %v", err)
					}
				}()
				go func() {
					defer wg.Done()
					if _, err := taskqueue.Map(ctx, q, make([]int, 100), func(context.Context, int) (int, error) { fn("Map"); return 0, nil }); err != nil {
						t.Errorf("Map: %v", err)
					}
				}()
				wg.Wait()
				helpersOfBoth.Done()
				helpersOfBoth.Wait()
				checkGauges(t, tg)
				return nil
			})
		}
		for _, h := range hs {
			if err := h.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		checkGauges(t, qg)
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
}

// TestInPlaceCallsRaceTheTaskEnd: helpers of a serial queue's tasks that
// the tasks do not wait for call RunSync with the task's context while the
// task returns and the next task starts, a task of Go between each two. A
// call that comes while its task runs runs in the task's place, beside the
// task's own code, which does not wait for it (the task's business); one
// that comes after is an outsider's and waits its turn. Docs: "once the task
// has returned its context is an outsider's", "functions run in one task's
// place take turns", "a serial queue runs one task at a time". So nothing of
// one task (its body, its helpers' functions) overlaps anything of another,
// no two helpers' functions overlap, and every call runs exactly once. A
// broken queue lets a call that found the task running (or just ended) run
// beside the next task, lets two helpers' functions overlap, runs a call
// twice, loses one (a nil error with no run), or hangs.
func TestInPlaceCallsRaceTheTaskEnd(t *testing.T) {
	const tasks, helpers = 12, 3
	for round := 0; round < 150 && !t.Failed(); round++ {
		q := taskqueue.NewSerial()
		own := newOwners()
		var wg sync.WaitGroup
		var lost, twice, goRan atomic.Int64
		ctx := context.Background()
		var handles []*taskqueue.Handle
		for i := 1; i <= tasks; i++ {
			id := i
			q.Go(func() { // a task of its own between the nesting ones
				own.enter(false, -id)
				goRan.Add(1)
				runtime.Gosched()
				own.leave(false, -id)
			})
			handles = append(handles, q.RunAsync(ctx, func(tctx context.Context) error {
				own.enter(false, id)
				for range helpers {
					wg.Go(func() {
						runtime.Gosched() // land anywhere around the task's end
						dctx, cancel := context.WithTimeout(tctx, 20*time.Second)
						defer cancel()
						var ran atomic.Int64
						err := q.RunSync(dctx, func(context.Context) error {
							ran.Add(1)
							own.enter(true, id)
							runtime.Gosched()
							own.leave(true, id)
							return nil
						})
						if errors.Is(err, context.DeadlineExceeded) {
							t.Errorf("task %d: helper RunSync hung: %v", id, err)
						}
						if err == nil && ran.Load() != 1 {
							lost.Add(1)
						}
						if ran.Load() > 1 {
							twice.Add(1)
						}
					})
				}
				runtime.Gosched()
				own.leave(false, id)
				return nil
			}))
		}
		for _, h := range handles {
			wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			if err := h.Wait(wctx); err != nil {
				t.Errorf("task: %v", err)
			}
			cancel()
		}
		waitOrFail(t, &wg, 20*time.Second, "helpers")
		own.check(t)
		if lost.Load() != 0 || twice.Load() != 0 {
			t.Errorf("RunSync returned nil without running f %d times; ran f twice %d times", lost.Load(), twice.Load())
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		if goRan.Load() != tasks {
			t.Errorf("%d tasks of Go ran; want %d", goRan.Load(), tasks)
		}
		s := q.Stats()
		if s.Completed != s.Succeeded+s.Failed+s.Panicked || s.Running != 0 || s.Queued != 0 {
			t.Errorf("stats do not add up on an idle queue: %+v", s)
		}
	}
}

// TestAwaitedPanicsGoToTheHandleAlone: a task submitted with Awaited that
// panics before anyone waits is not reported to the panic handler: its
// handle alone holds the panic, for the Wait that comes. Without the mark,
// such a panic went to both, in a race with the Wait. What an awaited task
// submits with its own context is not marked: its unawaited panic is
// reported.
func TestAwaitedPanicsGoToTheHandleAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reported testkit.Panics[*taskqueue.PanicError]
		q := taskqueue.NewConcurrent(2, taskqueue.WithPanicHandler(reported.Add))
		ctx := taskqueue.Awaited(t.Context())
		var inner *taskqueue.Handle
		h := q.RunAsync(ctx, func(tctx context.Context) error {
			inner = q.RunAsync(tctx, func(context.Context) error { panic("inner") })
			panic("boom")
		})
		f := taskqueue.RunAsync(ctx, q, func(context.Context) (int, error) { panic("typed") })
		synctest.Wait() // every task has panicked; nobody waited yet
		var pe *taskqueue.PanicError
		if err := h.Wait(t.Context()); !errors.As(err, &pe) || pe.Value != "boom" {
			t.Errorf("Wait = %v; want the task's *PanicError", err)
		}
		if _, err := f.Wait(t.Context()); !errors.As(err, &pe) || pe.Value != "typed" {
			t.Errorf("Future.Wait = %v; want the task's *PanicError", err)
		}
		got := reported.Take()
		if len(got) != 1 || got[0].Value != "inner" {
			t.Errorf("the panic handler saw %v; want only the panic of the unmarked inner task", got)
		}
		if inner.Err() == nil {
			t.Error("the inner task's handle has no error")
		}
		q.Close()
	})
	var none context.Context
	if msg := testkit.PanicMessage(func() { taskqueue.Awaited(none) }); msg != "taskqueue: Awaited(nil)" {
		t.Errorf("Awaited(nil) panicked with %q", msg)
	}
}

// TestInPlaceCallWithTheTasksContextWaitsAndWarns: a function run in a
// task's place (Apply's f, RunSync's f on the task's own queue) that calls
// something running in the task's place with the task's context, not its
// own, waits for the turn it holds itself: the call lasts until that
// context ends, exactly, without running its function, and after five
// seconds it says so through log/slog.
func TestInPlaceCallWithTheTasksContextWaitsAndWarns(t *testing.T) {
	calls := map[string]func(task context.Context, q *taskqueue.Queue, ran *atomic.Int64) error{
		"RunSync in Apply's f": func(task context.Context, q *taskqueue.Queue, ran *atomic.Int64) (err error) {
			taskqueue.Apply(task, q, 1, func(int) {
				err = q.RunSync(task, func(context.Context) error { ran.Add(1); return nil })
			})
			return err
		},
		"Apply in Apply's f": func(task context.Context, q *taskqueue.Queue, ran *atomic.Int64) (err error) {
			taskqueue.Apply(task, q, 1, func(int) {
				err = taskqueue.Apply(task, q, 1, func(int) { ran.Add(1) })
			})
			return err
		},
		"RunSync in RunSync's f, with the outer context": func(task context.Context, q *taskqueue.Queue, ran *atomic.Int64) (err error) {
			q.RunSync(task, func(context.Context) error {
				err = q.RunSync(task, func(context.Context) error { ran.Add(1); return nil })
				return nil
			})
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logged strings.Builder
				old := slog.Default()
				slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
				defer slog.SetDefault(old)
				q := taskqueue.NewSerial(taskqueue.WithName("turns"))
				var ran atomic.Int64
				var err error
				start := time.Now()
				var waited time.Duration
				q.RunAsync(t.Context(), func(ctx context.Context) error {
					ctx, cancel := context.WithTimeout(ctx, time.Hour)
					defer cancel()
					err = call(ctx, q, &ran)
					waited = time.Since(start)
					return nil
				}).Wait(t.Context())
				if !errors.Is(err, context.DeadlineExceeded) || waited != time.Hour || ran.Load() != 0 {
					t.Errorf("the nested call returned %v after %v, its function run %d times; want DeadlineExceeded after 1h, not run", err, waited, ran.Load())
				}
				if out := logged.String(); !strings.Contains(out, "has waited five seconds for its turn") || !strings.Contains(out, "queue=turns") {
					t.Errorf("logged %q; want the warning that the call waits for its own turn, naming the queue", out)
				}
				q.Close()
			})
		})
	}
}
