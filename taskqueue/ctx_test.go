package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"os/exec"
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

// TestRunSyncAfterTheTaskReturned checks that a context kept past its task's
// end no longer runs in the task's place: the call waits its turn.
func TestRunSyncAfterTheTaskReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		kept := make(chan context.Context, 1)
		q.RunAsync(t.Context(), func(ctx context.Context) error { kept <- ctx; return nil }).Wait(t.Context())
		ctx := <-kept
		release := make(chan struct{})
		q.Go(func() { <-release })
		done := make(chan struct{})
		go func() {
			q.RunSync(ctx, func(context.Context) error { return nil })
			close(done)
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("RunSync with the context of a task that returned ran beside the queue's running task")
		default:
		}
		close(release)
		<-done
	})
}

// "Once the task has returned, its context is an outsider's and holds no
// slot." A serial queue's first task keeps its context; after it has
// returned, a second task runs and blocks. RunSync with the kept context must
// not run beside the second task: it waits behind it (or fails with the
// context's error). A broken implementation still treats the kept context as
// the first task's and runs f at once, in a place that no longer exists.
func TestOutside4ContextAfterTaskIsOutsiders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		var kept context.Context
		if err := q.RunSync(context.Background(), func(ctx context.Context) error { kept = ctx; return nil }); err != nil {
			t.Fatal(err)
		}
		var busy atomic.Bool
		release := make(chan struct{})
		h := q.RunAsync(context.Background(), func(context.Context) error {
			busy.Store(true)
			<-release
			busy.Store(false)
			return nil
		})
		synctest.Wait()
		var overlapped atomic.Bool
		var ran atomic.Bool
		done := make(chan error, 1)
		go func() {
			done <- q.RunSync(kept, func(context.Context) error {
				ran.Store(true)
				if busy.Load() {
					overlapped.Store(true)
				}
				return nil
			})
		}()
		synctest.Wait()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("RunSync with a returned task's context ran at once beside the queue's running task (overlap %v)", overlapped.Load())
			} else if ran.Load() {
				t.Errorf("RunSync returned %v but ran f", err)
			}
		default:
		}
		close(release)
		if err := h.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if overlapped.Load() {
			t.Errorf("f ran while the serial queue's other task ran")
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// RunSync with the context of a task that has already returned is not in that
// task's place: it must not run beside the queue's next task.
func TestOutsideRunSyncWithContextOfEndedTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		ctx := context.Background()
		ex := newGauge("serial queue", 1)
		signal := make(chan struct{})
		res := make(chan error, 1)
		h := q.RunAsync(ctx, func(tctx context.Context) error {
			ex.Enter("function")
			defer ex.Leave()
			go func() {
				<-signal
				res <- q.RunSync(tctx, func(context.Context) error {
					ex.Enter("function")
					ex.Leave()
					return nil
				})
			}()
			return nil
		})
		if err := h.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		hu := q.RunAsync(ctx, func(context.Context) error {
			ex.Enter("function")
			close(signal)
			<-release
			ex.Leave()
			return nil
		})
		synctest.Wait()
		close(release)
		if err := hu.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		err := <-res
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("late RunSync: %v", err)
		}
		if ex.Over() != "" {
			t.Errorf("RunSync with an ended task's context ran beside the next task")
		}
		q.Close()
	})
}

// "Once the task has returned, its context is an outsider's and holds no
// slot": waits with a returned task's context lend nothing. T has one slot.
// A's task keeps its context and returns; T's task R then holds the slot and
// blocks. A wait for B's task with the kept context must not lend R's slot:
// B's task must not run beside R. A broken implementation lends the slot
// the kept context once named, which now is another task's.
func TestOutside4ReturnedContextLendsNothing(t *testing.T) {
	for round := 0; round < 20; round++ {
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

// Waits for a turn in a task's place are durable for synctest and give up
// with their context, whatever the queue: a concurrent queue, a child calling
// in place on its target, and a Keyed lane calling on its own key. One
// helper holds the turn (blocked on a channel); a second helper's call waits
// for it: synctest.Wait returns (a wait that is not durable hangs the test
// until it times out), the second call has not run, and canceling its
// context makes it return context.Canceled without running. A broken
// implementation runs the second function beside the first, or ignores the
// cancel.
func TestOutside4TurnWaitKinds(t *testing.T) {
	type kind struct {
		name string
		// run runs task as a task, and call calls in its place.
		run func(task func(ctx context.Context, call func(context.Context, func()) error) error) error
	}
	kinds := []kind{
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

// "A call that waits for its turn gives up when its ctx is done", and waits
// for turns are durable for synctest. In a bubble, one helper of a serial
// queue's task runs an in-place function that blocks; a second helper's
// RunSync with a cancelable context derived from the task's waits for its
// turn. synctest.Wait must return (a wait that is not durable hangs it: the
// test then times out), the call must not have run, and after cancel it must
// return context.Canceled without running f. A broken implementation runs
// the second function beside the first, or keeps waiting after cancel.
func TestOutside4TurnWaitGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		release := make(chan struct{})
		var secondRan atomic.Bool
		var secondErr error
		secondDone := make(chan struct{})
		err := q.RunSync(context.Background(), func(ctx context.Context) error {
			entered := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = q.RunSync(ctx, func(context.Context) error {
					close(entered)
					<-release
					return nil
				})
			}()
			<-entered
			c2, cancel := context.WithCancel(ctx)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer close(secondDone)
				secondErr = q.RunSync(c2, func(context.Context) error { secondRan.Store(true); return nil })
			}()
			synctest.Wait()
			select {
			case <-secondDone:
				t.Errorf("second in-place call returned (%v, ran %v) while the first held the turn", secondErr, secondRan.Load())
			default:
			}
			cancel()
			synctest.Wait()
			select {
			case <-secondDone:
			default:
				t.Errorf("second in-place call still waits for its turn after its ctx was canceled")
			}
			close(release)
			wg.Wait()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if secondRan.Load() {
			t.Errorf("the canceled call ran its function")
		}
		if !errors.Is(secondErr, context.Canceled) {
			t.Errorf("the canceled call returned %v, want context.Canceled", secondErr)
		}
	})
}

// The same with a deadline and fake time: the waiting call gives up exactly
// when its deadline passes, not before, and Apply waiting for its turn gives
// up too, calling f for no iteration.
func TestOutside4TurnWaitDeadline(t *testing.T) {
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

// A helper of a task calls RunSync with a context derived from the task's
// while another helper's function holds the task's place; then its context is
// canceled. Docs: "If ctx is done before f starts, f does not run and RunSync
// returns ctx.Err()". A broken queue keeps the call waiting for its turn until
// the holder ends (the call returns only after release, or runs f anyway).
func TestOutside3InPlaceTurnWaitHonorsContext(t *testing.T) {
	for _, name := range []string{"serial", "concurrent(2)"} {
		t.Run(name, func(t *testing.T) {
			var q *taskqueue.Queue
			if name == "serial" {
				q = taskqueue.NewSerial()
			} else {
				q = taskqueue.NewConcurrent(2)
			}
			release := make(chan struct{})
			holding := make(chan struct{})
			var ran2 atomic.Bool
			res := make(chan error, 1)
			h := q.RunAsync(context.Background(), func(tctx context.Context) error {
				var wg sync.WaitGroup
				wg.Add(2)
				go func() {
					defer wg.Done()
					_ = q.RunSync(tctx, func(context.Context) error {
						close(holding)
						<-release
						return nil
					})
				}()
				go func() {
					defer wg.Done()
					<-holding
					cctx, cancel := context.WithCancel(tctx)
					go func() {
						for k := 0; k < 1000; k++ {
							runtime.Gosched() // let the call start waiting
						}
						cancel()
					}()
					res <- q.RunSync(cctx, func(context.Context) error {
						ran2.Store(true)
						return nil
					})
				}()
				wg.Wait()
				return nil
			})
			got := false
			select {
			case err := <-res:
				got = true
				if !errors.Is(err, context.Canceled) {
					t.Errorf("RunSync canceled while waiting its turn returned %v, want context.Canceled", err)
				}
				if ran2.Load() {
					t.Error("f ran although its context was done before it started")
				}
			case <-time.After(10 * time.Second):
				t.Error("RunSync waiting its turn in the task's place did not return 10s after its context was canceled: it waits for the holder")
			}
			close(release)
			if got {
				// the call returned already: its one result was read above
			} else {
				select {
				case err := <-res:
					if ran2.Load() || !errors.Is(err, context.Canceled) {
						t.Errorf("after the holder was released, the RunSync canceled before its f started returned %v; f ran: %v", err, ran2.Load())
					}
				case <-time.After(10 * time.Second):
					t.Error("the canceled RunSync did not return even after the holder was released (hang)")
				}
			}
			wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer wcancel()
			if err := h.Wait(wctx); err != nil {
				t.Errorf("task: %v", err)
			}
		})
	}
}

// Docs: "Queues use the time package directly, so code that uses them is
// tested with testing/synctest: create the queue inside the bubble". In a
// bubble, a task of a serial queue starts two helpers that call RunSync with
// its context: one function holds the task's place until released, so the
// other waits for its turn ("Functions run in one task's place take turns").
// synctest.Wait must then return, since every goroutine of the bubble waits
// for something only the bubble can do. A queue whose turn-taking waits in a
// way synctest does not see as durable (a sync.Mutex or sync.Cond) makes
// synctest.Wait hang forever. The scenario runs in a child process with a
// test timeout, so that a hang fails this test instead of the whole run.
func TestOutside3InPlaceTurnIsDurableForSynctest(t *testing.T) {
	// js/wasm starts no processes: there the scenario runs in this one, and
	// a hang is the test binary's timeout.
	if os.Getenv("O3_SYNCTEST_CHILD") == "1" || runtime.GOOS == "js" {
		synctest.Test(t, func(t *testing.T) {
			q := taskqueue.NewSerial()
			release := make(chan struct{})
			var ran sync.WaitGroup
			ran.Add(2)
			h := q.RunAsync(context.Background(), func(tctx context.Context) error {
				var wg sync.WaitGroup
				for k := 0; k < 2; k++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := q.RunSync(tctx, func(context.Context) error {
							ran.Done()
							<-release
							return nil
						}); err != nil {
							t.Errorf("RunSync: %v", err)
						}
					}()
				}
				wg.Wait()
				return nil
			})
			synctest.Wait() // hangs if the waiting helper is not durably blocked
			close(release)
			ran.Wait()
			if err := h.Wait(context.Background()); err != nil {
				t.Error(err)
			}
		})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOutside3InPlaceTurnIsDurableForSynctest$", "-test.timeout=20s", "-test.count=1")
	cmd.Env = append(os.Environ(), "O3_SYNCTEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		s := string(out)
		if i := strings.Index(s, "\ngoroutine "); i > 0 {
			s = s[:i]
		}
		if len(s) > 600 {
			s = s[:600]
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "takeTurn") || strings.Contains(line, "sync.(*") || strings.Contains(line, "sync.runtime_") {
				s += "\n  " + strings.TrimSpace(line)
			}
		}
		t.Errorf("synctest.Wait with one in-place RunSync waiting its turn behind another: %v\n%s", err, s)
	}
}

// A function run in a task's place by a helper panics, or calls
// runtime.Goexit. Docs: "If f panics, RunSync panics in the caller with the
// *PanicError ... if f calls runtime.Goexit, so does RunSync", and the place
// is then free for the other helpers' functions, which take turns. A broken
// queue keeps the turn held after a panic or Goexit (the others hang), lets
// them overlap afterwards, or loses the panic.
func TestOutside3InPlacePanicAndGoexitFreeTheTurn(t *testing.T) {
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

// o3Mixed starts, for a task with context tctx, helpers that each do one kind
// of work with that context on queue on (gauges gs count what executes there):
// RunSync in place, Apply, Map, and Handle.Wait on a task of on (which lends
// the task's slots while it waits). It returns once every helper is done.
func o3Mixed(t *testing.T, tctx context.Context, on *taskqueue.Queue, gs testkit.Gauges, kinds string) {
	var wg sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	for _, k := range kinds {
		switch k {
		case 's':
			run(func() {
				for r := 0; r < 5; r++ {
					if err := on.RunSync(tctx, func(context.Context) error {
						gs.Enter("RunSync in place")
						runtime.Gosched()
						gs.Leave()
						return nil
					}); err != nil {
						t.Errorf("RunSync: %v", err)
					}
				}
			})
		case 'a':
			run(func() {
				if err := taskqueue.Apply(tctx, on, 16, func(int) {
					gs.Enter("Apply iteration")
					runtime.Gosched()
					gs.Leave()
				}); err != nil {
					t.Errorf("Apply: %v", err)
				}
			})
		case 'm':
			run(func() {
				res, err := taskqueue.Map(tctx, on, []int{1, 2, 3, 4, 5, 6, 7, 8}, func(_ context.Context, x int) (int, error) {
					gs.Enter("Map call")
					runtime.Gosched()
					gs.Leave()
					return 2 * x, nil
				})
				if err != nil {
					t.Errorf("Map: %v", err)
					return
				}
				for i, r := range res {
					if r != 2*(i+1) {
						t.Errorf("Map result %d = %d", i, r)
					}
				}
			})
		case 'w':
			run(func() {
				h := on.RunAsync(tctx, func(context.Context) error {
					gs.Enter("awaited task")
					runtime.Gosched()
					gs.Leave()
					return nil
				})
				if err := h.Wait(tctx); err != nil {
					t.Errorf("Handle.Wait: %v", err)
				}
			})
		case 'g':
			run(func() {
				g := taskqueue.NewGroup(tctx, on)
				for m := 0; m < 4; m++ {
					g.Go(func(context.Context) error {
						gs.Enter("group member")
						runtime.Gosched()
						gs.Leave()
						return nil
					})
				}
				if err := g.Wait(tctx); err != nil {
					t.Errorf("Group.Wait: %v", err)
				}
			})
		}
	}
	wg.Wait()
}

// On a concurrent queue of limit 2, every task starts helpers that, with the
// task's context and at the same time, run RunSync in the task's place, Apply,
// Map, Group.Wait, and Handle.Wait on another task of the queue. Docs: "the
// queue's limit ... hold[s]" for in-place functions; Apply's caller works "in
// the place of its own task"; Wait lends the task's slots while it waits. A
// broken queue lets a slot that is lent to a waiting call be used at the same
// time by an in-place function of the same task, or lets Apply's caller and an
// in-place RunSync both run on the task's one slot: the count of functions
// executing at once goes over 2. A queue that does not lend deadlocks (the
// deadline reports it).
func TestOutside3ConcurrentMixedHelpersKeepLimit(t *testing.T) {
	for _, kinds := range []string{"ss", "sa", "sm", "am", "sam"} {
		t.Run(kinds, func(t *testing.T) {
			for iter := 0; iter < 15 && !t.Failed(); iter++ {
				q := taskqueue.NewConcurrent(2)
				g := newGauge("concurrent(2)", 2)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				var hs []*taskqueue.Handle
				for i := 0; i < 4; i++ {
					hs = append(hs, q.RunAsync(ctx, func(tctx context.Context) error {
						g.Enter("body")
						runtime.Gosched()
						g.Leave()
						o3Mixed(t, tctx, q, testkit.Gauges{g}, kinds)
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

// The same on a serial queue: every function in a task's place takes turns
// with the others and the queue never runs two functions at once. Apply and
// Map from a serial queue's task with its context run on the caller only.
func TestOutside3SerialMixedHelpersExclusive(t *testing.T) {
	for _, kinds := range []string{"sa", "sm", "am", "sam"} {
		t.Run(kinds, func(t *testing.T) {
			for iter := 0; iter < 15 && !t.Failed(); iter++ {
				q := taskqueue.NewSerial()
				g := newGauge("serial", 1)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				var hs []*taskqueue.Handle
				for i := 0; i < 3; i++ {
					hs = append(hs, q.RunAsync(ctx, func(tctx context.Context) error {
						g.Enter("body")
						runtime.Gosched()
						g.Leave()
						o3Mixed(t, tctx, q, testkit.Gauges{g}, kinds)
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
			}
		})
	}
}

// One task of a queue of limit 1 (serial, or concurrent with limit 1) starts
// two helpers and waits for them: one calls RunSync with the task's context,
// the other Apply (or Map) with it. Docs, RunSync: "Functions run in one
// task's place take turns: no two of them overlap, whichever goroutines
// call"; Apply: "The caller works on a slot of q: in the place of its own task
// if it runs one of q ... if q has none free, the caller only waits for the
// others". So with one slot, at most one function runs at any instant. A
// broken queue lets Apply's caller run iterations in the task's place while a
// RunSync function runs there too: two at once on a queue of limit 1.
func TestOutside3InPlaceApplyAndRunSyncTakeTurns(t *testing.T) {
	queues := map[string]func() *taskqueue.Queue{
		"serial":        func() *taskqueue.Queue { return taskqueue.NewSerial() },
		"concurrent(1)": func() *taskqueue.Queue { return taskqueue.NewConcurrent(1) },
	}
	for name, mk := range queues {
		for _, kinds := range []string{"sa", "sm", "aa", "mm", "am"} {
			t.Run(name+"/"+kinds, func(t *testing.T) {
				for iter := 0; iter < 30 && !t.Failed(); iter++ {
					q := mk()
					g := newGauge(name, 1)
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					h := q.RunAsync(ctx, func(tctx context.Context) error {
						o3Mixed(t, tctx, q, testkit.Gauges{g}, kinds)
						return nil
					})
					if err := h.Wait(ctx); err != nil {
						t.Errorf("task: %v", err)
					}
					cancel()
					checkGauges(t, g)
				}
			})
		}
	}
}

// A task of a serial queue starts helpers and waits for them; each helper
// calls RunSync with the task's context many times, some nested with the
// inner function's context. Docs: "This holds for every goroutine that works
// for the task with its context ... Functions run in one task's place take
// turns: no two of them overlap ... each gets a context of its own for its own
// nested calls." A broken queue runs two helpers' functions at once (the count
// goes to 2), runs a task's helper beside another task, or deadlocks a nested
// call.
func TestOutside3SerialManyHelpersWaitedFor(t *testing.T) {
	for iter := 0; iter < 40 && !t.Failed(); iter++ {
		q := taskqueue.NewSerial()
		g := newGauge("serial", 1)
		var runs atomic.Int64
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var handles []*taskqueue.Handle
		for i := 0; i < 6; i++ {
			handles = append(handles, q.RunAsync(ctx, func(tctx context.Context) error {
				g.Enter("body")
				runtime.Gosched()
				g.Leave()
				var wg sync.WaitGroup
				for k := 0; k < 4; k++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for r := 0; r < 10; r++ {
							err := q.RunSync(tctx, func(fctx context.Context) error {
								g.Enter("in-place")
								runs.Add(1)
								runtime.Gosched()
								g.Leave()
								if r%3 == 0 {
									// nested, with the inner context
									return q.RunSync(fctx, func(context.Context) error {
										g.Enter("nested in-place")
										runs.Add(1)
										g.Leave()
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
					}()
				}
				wg.Wait()
				return nil
			}))
		}
		for _, h := range handles {
			if err := h.Wait(ctx); err != nil {
				t.Errorf("task: %v", err)
			}
		}
		cancel()
		checkGauges(t, g)
		if want := int64(6 * 4 * (10 + 4)); runs.Load() != want {
			t.Errorf("ran %d in-place functions, want %d", runs.Load(), want)
		}
	}
}

// "Functions run in one task's place take turns (Apply's and Map's part on the
// caller included): no two of them overlap, whichever goroutines call."
//
// A serial queue's task starts helpers that it waits for: three call RunSync
// with the task's context in a loop, one runs Apply and one Map with it, while
// an outsider floods the queue with Go. Every function that runs on the queue
// enters one gauge of limit 1. An implementation that runs in-place functions
// from two goroutines at once (no turns), or lets Apply's caller part run
// beside a RunSync in the same place, or lets the outsider's tasks start in a
// slot lent by the waiting task, shows two at once.
func TestOutside4InPlaceTurnsSerial(t *testing.T) {
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

// The same on a concurrent queue of limit 2 whose two slots are both held by
// tasks that wait for their helpers: Apply and Map cannot get a free slot, so
// every iteration runs on its caller in the task's place, and so the
// functions of one task never overlap each other, while the queue runs at most
// two. Neither task returns before the helpers of both are done. A broken implementation overlaps two functions of one task (one gauge
// per task, limit 1), or runs Apply's queued helpers on a slot a waiting task
// does not lend (queue gauge, limit 2).
func TestOutside4InPlaceTurnsConcurrent(t *testing.T) {
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

// Functions run in one task's place from several helper goroutines take turns,
// also on a concurrent queue, and the queue's limit holds with them.
func TestOutsideInPlaceHelpersTakeTurnsConcurrent(t *testing.T) {
	q := taskqueue.NewConcurrent(2)
	ctx := context.Background()
	var running, maxRunning atomic.Int32
	var perTask [4]*testkit.Gauge
	for i := range perTask {
		perTask[i] = newGauge(fmt.Sprintf("functions in the place of task %d", i), 1)
	}
	note := func() func() {
		r := running.Add(1)
		for {
			m := maxRunning.Load()
			if r <= m || maxRunning.CompareAndSwap(m, r) {
				break
			}
		}
		return func() { running.Add(-1) }
	}
	var hs []*taskqueue.Handle
	for ti := range 4 {
		hs = append(hs, q.RunAsync(ctx, func(tctx context.Context) error {
			var wg sync.WaitGroup
			for range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 50 {
						if err := q.RunSync(tctx, func(ictx context.Context) error {
							perTask[ti].Enter("function")
							done := note()
							// nested call with the inner context also runs in place
							err := q.RunSync(ictx, func(context.Context) error { return nil })
							done()
							perTask[ti].Leave()
							return err
						}); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			return nil
		}))
	}
	for _, h := range hs {
		if err := h.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	q.Close()
	for i := range perTask {
		checkGauges(t, perTask[i])
	}
	if m := maxRunning.Load(); m > 2 {
		t.Errorf("%d in-place functions ran at once on a queue of limit 2", m)
	}
}

// Helpers of a serial queue's task that the task does not wait for call
// RunSync with its context while the task returns and the next task starts.
// Docs: "once the task returns its context is an outsider's", "functions run
// in one task's place take turns", "a serial queue runs one task at a time".
// A broken queue lets a call that found the task running (or just ended) run
// beside the next task, or lets two helpers' functions overlap; it runs a call
// twice, or loses one (a nil error with no run), or hangs.
func TestOutside3SerialHelpersRaceTaskReturn(t *testing.T) {
	for iter := 0; iter < 150 && !t.Failed(); iter++ {
		q := taskqueue.NewSerial()
		own := newOwners()
		var helpers sync.WaitGroup
		var lost, twice atomic.Int64
		ctx := context.Background()
		var handles []*taskqueue.Handle
		for i := 1; i <= 12; i++ {
			id := i
			handles = append(handles, q.RunAsync(ctx, func(tctx context.Context) error {
				own.enter(false, id)
				for k := 0; k < 3; k++ {
					helpers.Add(1)
					go func() {
						defer helpers.Done()
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
					}()
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
		waitOrFail(t, &helpers, 20*time.Second, "helpers")
		own.check(t)
		if lost.Load() != 0 || twice.Load() != 0 {
			t.Errorf("RunSync returned nil without running f %d times; ran f twice %d times", lost.Load(), twice.Load())
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		s := q.Stats()
		if s.Completed != s.Succeeded+s.Failed+s.Panicked || s.Running != 0 || s.Queued != 0 {
			t.Errorf("stats do not add up on an idle queue: %+v", s)
		}
	}
}

// TestNestedCallsRaceTheTaskEnd races RunSync calls made with a task's
// context, from goroutines the task starts and does not wait for, against
// the task's return and the start of the next task of the serial queue. A
// call that comes while the task runs runs in its place (beside the task's
// own code, which does not wait for it: the task's business); one that comes
// after is an outsider and waits its turn. Either way the nested calls never
// overlap one another nor the queue's other tasks, and every call runs
// exactly once.
func TestNestedCallsRaceTheTaskEnd(t *testing.T) {
	q := taskqueue.NewSerial()
	ctx := context.Background()
	ex := newGauge("serial queue", 1)
	var calls, ran atomic.Int64
	var wg sync.WaitGroup
	body := func(context.Context) error {
		ex.Enter("function")
		ran.Add(1)
		for range 3 {
			runtime.Gosched() // stay a while, so that other work could come in
		}
		ex.Leave()
		return nil
	}
	const tasks, helpers = 400, 3
	wg.Add(tasks * helpers) // before any task starts, so that Wait waits for all
	for range tasks {
		q.Go(func() { body(ctx) }) // a task of its own between the nesting ones
		q.RunAsync(ctx, func(tctx context.Context) error {
			for range helpers {
				calls.Add(1)
				go func() {
					defer wg.Done()
					runtime.Gosched() // land anywhere around the task's end
					if err := q.RunSync(tctx, body); err != nil {
						t.Errorf("RunSync: %v", err)
					}
				}()
			}
			return nil
		})
	}
	wg.Wait()
	q.Close()
	checkGauges(t, ex)
	if got, want := ran.Load(), calls.Load()+tasks; got != want {
		t.Errorf("%d functions ran; want %d", got, want)
	}
}
