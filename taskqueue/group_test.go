package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

// TestGroupWaitsForAll: Wait returns once every member has run, on every
// kind of queue.
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

// TestGroupCancelOnErrorSerial: on a serial queue the order is fixed: with
// WithCancelOnError, wherever the failing member stands, the members after
// it never run, Wait returns its error alone, the members' context has it
// as its cause, and Stats counts the others as canceled.
func TestGroupCancelOnErrorSerial(t *testing.T) {
	const n = 20
	for k := range n {
		synctest.Test(t, func(t *testing.T) {
			q := taskqueue.NewSerial()
			g := taskqueue.NewGroup(t.Context(), q, taskqueue.WithCancelOnError())
			errBoom := errors.New("boom")
			var ran []int
			var ctxs []context.Context
			for i := range n {
				g.Go(func(ctx context.Context) error {
					ran = append(ran, i)
					ctxs = append(ctxs, ctx)
					if i == k {
						return errBoom
					}
					return nil
				})
			}
			if err := g.Wait(context.Background()); err != errBoom {
				t.Errorf("failing member %d: Wait() = %v; want boom alone", k, err)
			}
			want := make([]int, k+1)
			for i := range want {
				want[i] = i
			}
			if !slices.Equal(ran, want) {
				t.Errorf("failing member %d: members %v ran; want %v", k, ran, want)
			}
			if cause := context.Cause(ctxs[0]); cause != errBoom {
				t.Errorf("failing member %d: cause of the members' context = %v; want boom", k, cause)
			}
			q.Close()
			if s := q.Stats(); s.Canceled != uint64(n-1-k) || s.Completed != uint64(k+1) || s.Failed != 1 {
				t.Errorf("failing member %d: Stats() = %+v; want %d completed, 1 failed, %d canceled", k, s, k+1, n-1-k)
			}
		})
	}
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

// TestGroupPanic: a member that panics fails with a *PanicError and one that
// calls runtime.Goexit with ErrGoexit; Wait returns both, and the panic
// handler, whose panics Wait returned, sees nothing.
func TestGroupPanic(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		var p panics
		g := taskqueue.NewGroup(t.Context(), k.new(taskqueue.WithPanicHandler(p.Add)))
		errBoom := errors.New("boom")
		g.Go(func(context.Context) error { return nil })
		g.Go(func(context.Context) error { panic(errBoom) })
		g.Go(func(context.Context) error { runtime.Goexit(); return nil })
		err := g.Wait(context.Background())
		var pe *taskqueue.PanicError
		if !errors.As(err, &pe) || !errors.Is(err, errBoom) || !errors.Is(err, taskqueue.ErrGoexit) {
			t.Fatalf("Wait() = %v; want a *PanicError wrapping boom and ErrGoexit", err)
		}
		if got := p.Take(); len(got) != 0 {
			t.Errorf("handler got %v; want nothing: Wait returns the member's panic", got)
		}
	})
}

// A panic is a failure like any other for WithCancelOnError.
func TestGroupPanicCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p panics
		g := taskqueue.NewGroup(t.Context(), taskqueue.NewSerial(taskqueue.WithPanicHandler(p.Add)), taskqueue.WithCancelOnError())
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
		p.Take()
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

// TestGroupQueueRefuses: members of a closed queue fail with ErrClosed;
// members wait in the group, not in the queue, and fail with ErrQueueFull
// only when a full queue takes no task to run them.
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

// TestGroupCloseNow: CloseNow drops the group's tasks from the queue: the
// members waiting in the group fail with ErrClosed, CloseNow and Stats
// count them, and Wait does not hang; a group on a closed queue fails with
// ErrClosed.
func TestGroupCloseNow(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		release := block(t, q) // the group's tasks wait behind the blockers
		g := taskqueue.NewGroup(t.Context(), q)
		var ran atomic.Int32
		for range 10 {
			g.Go(func(context.Context) error { ran.Add(1); return nil })
		}
		synctest.Wait()
		if n := q.CloseNow(); n != 10 {
			t.Errorf("CloseNow() = %d; want the 10 members", n)
		}
		release()
		err := g.Wait(context.Background())
		if !errors.Is(err, taskqueue.ErrClosed) {
			t.Errorf("Wait() after CloseNow = %v; want ErrClosed", err)
		}
		if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 10 || ran.Load() != 0 {
			t.Errorf("%d members failed and %d ran; want 10 and 0", n, ran.Load())
		}
		if err := q.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := q.Stats(); s.Canceled != 10 {
			t.Errorf("Stats().Canceled = %d; want the 10 members", s.Canceled)
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
		q := k.new(taskqueue.WithPanicHandler(p.Add))
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
		p.Take()
	})
}

// TestGroupContextDoneWhileAMemberRuns: once a group's context is done, its
// members that have not started never run, and Wait returns the context's
// error once the running one has returned; Stats counts the others as
// canceled.
func TestGroupContextDoneWhileAMemberRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		ctx, cancel := context.WithCancel(context.Background())
		g := taskqueue.NewGroup(ctx, q)
		var ran atomic.Int32
		started := make(chan struct{})
		g.Go(func(mctx context.Context) error {
			close(started)
			<-mctx.Done()
			ran.Add(1)
			return nil
		})
		for range 10 {
			g.Go(func(context.Context) error { ran.Add(1); return nil })
		}
		<-started
		cancel()
		err := g.Wait(context.Background())
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Wait = %v, want context.Canceled", err)
		}
		if ran.Load() != 1 {
			t.Errorf("%d members ran, want 1", ran.Load())
		}
		q.Close()
		if st := q.Stats(); st.Canceled != 10 || st.Completed != 1 {
			t.Errorf("Stats %+v, want Canceled 10 Completed 1", st)
		}
	})
}

// TestCancelOnErrorGroupKeepsALateFailure: a group made WithCancelOnError
// whose context ends while its only member runs kept no member from running:
// Wait returns the member's failure, as it would without the option, not
// nil, however the context ends (Wait's own, done at the call or later, or
// the group's), and a panic is Wait's to return, not the handler's.
func TestCancelOnErrorGroupKeepsALateFailure(t *testing.T) {
	boom := errors.New("boom")
	for _, kind := range []string{"serial", "concurrent"} {
		for _, end := range []string{"Wait's context done at the call", "Wait's context ends", "the group's context ends"} {
			for _, panics := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/panics=%v", kind, end, panics), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						var handled []*taskqueue.PanicError
						opt := taskqueue.WithPanicHandler(func(p *taskqueue.PanicError) { handled = append(handled, p) })
						q := taskqueue.NewSerial(opt)
						if kind == "concurrent" {
							q = taskqueue.NewConcurrent(2, opt)
						}
						gctx, gcancel := context.WithCancel(t.Context())
						defer gcancel()
						g := taskqueue.NewGroup(gctx, q, taskqueue.WithCancelOnError())
						g.Go(func(context.Context) error {
							time.Sleep(time.Millisecond)
							if panics {
								panic(boom)
							}
							return boom
						})
						synctest.Wait() // the member runs
						wctx, wcancel := context.WithCancel(t.Context())
						switch end {
						case "Wait's context done at the call":
							wcancel()
						case "Wait's context ends":
							time.AfterFunc(time.Microsecond, wcancel)
						default:
							gcancel()
						}
						err := g.Wait(wctx)
						wcancel()
						if !errors.Is(err, boom) {
							t.Errorf("%s queue, %s, member panics %v: Wait = %v; want the member's boom", kind, end, panics, err)
						}
						if len(handled) != 0 {
							t.Errorf("%s queue, %s: the handler got %v; want nothing, Wait returned it", kind, end, handled)
						}
						q.Close()
					})
				})
			}
		}
	}
}

// TestGroupCloseNowRacesTheMembers: CloseNow races a group's members on
// real time: those left waiting in the group when CloseNow drops the group's
// tasks fail with ErrClosed, Wait returns, and every member ran or was
// canceled; members added to a closed queue fail with ErrClosed.
func TestGroupCloseNowRacesTheMembers(t *testing.T) {
	for round := range 50 {
		q := taskqueue.NewConcurrent(2)
		g := taskqueue.NewGroup(context.Background(), q)
		var ran atomic.Int32
		block := make(chan struct{})
		for i := range 40 {
			g.Go(func(context.Context) error {
				if i < 2 {
					<-block
				}
				ran.Add(1)
				return nil
			})
		}
		for range round {
			runtime.Gosched()
		}
		n := q.CloseNow()
		close(block)
		wctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := g.Wait(wctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("round %d: group Wait hung after CloseNow", round)
		}
		if int(ran.Load()) < 40 && !errors.Is(err, taskqueue.ErrClosed) {
			t.Fatalf("round %d: %d ran; Wait = %v, want ErrClosed", round, ran.Load(), err)
		}
		if err := q.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		st := q.Stats()
		if st.Completed != uint64(ran.Load()) || st.Completed+st.Canceled != 40 {
			t.Fatalf("round %d: CloseNow %d, ran %d, Stats %+v: members don't add up to 40", round, n, ran.Load(), st)
		}
		g2 := taskqueue.NewGroup(context.Background(), q)
		g2.Go(func(context.Context) error { ran.Add(1000); return nil })
		if err := g2.Wait(context.Background()); !errors.Is(err, taskqueue.ErrClosed) {
			t.Fatalf("member added to a closed queue: %v", err)
		}
	}
}

// TestGroupCloseNowWhileMembersRun: members waiting in a group, behind a
// member that runs, never run once CloseNow returns; they fail with
// ErrClosed, and CloseNow and Stats count them.
func TestGroupCloseNowWhileMembersRun(t *testing.T) {
	for _, limit := range []int{1, 2} {
		synctest.Test(t, func(t *testing.T) {
			q := taskqueue.NewConcurrent(limit)
			g := taskqueue.NewGroup(t.Context(), q)
			gate := make(chan struct{})
			var ran atomic.Int32
			for range limit {
				g.Go(func(context.Context) error { ran.Add(1); <-gate; return nil })
			}
			synctest.Wait()
			for range 10 {
				g.Go(func(context.Context) error { ran.Add(1); return nil })
			}
			if n := q.CloseNow(); n != 10 {
				t.Errorf("limit %d: CloseNow = %d; want the 10 members waiting", limit, n)
			}
			close(gate)
			err := g.Wait(context.Background())
			if ran.Load() != int32(limit) {
				t.Errorf("limit %d: %d members ran; want the %d running at CloseNow", limit, ran.Load(), limit)
			}
			if !errors.Is(err, taskqueue.ErrClosed) {
				t.Errorf("limit %d: Wait = %v; want ErrClosed among the errors", limit, err)
			}
			synctest.Wait() // Stats add up once q is idle: the runners end after their members
			if st := q.Stats(); st.Canceled != 10 || st.Completed != uint64(limit) {
				t.Errorf("limit %d: Stats = %+v; want 10 canceled, %d completed", limit, st, limit)
			}
		})
	}
}

// TestGroupCancelOnErrorHammer: with WithCancelOnError, every member ends
// up completed or canceled in the queue's Stats, whatever the schedule,
// those added after the group failed included (about one trial in 400 used
// to lose them). Each trial is a group of 1000 members.
func TestGroupCancelOnErrorHammer(t *testing.T) {
	trials := hammerSize(50_000, 300_000) / 1000
	errBoom := errors.New("boom")
	for trial := range trials {
		q := taskqueue.NewConcurrent(4)
		g := taskqueue.NewGroup(context.Background(), q, taskqueue.WithCancelOnError())
		for i := range 1000 {
			g.Go(func(context.Context) error {
				if i == 10 {
					return errBoom
				}
				return nil
			})
		}
		if err := g.Wait(context.Background()); err != errBoom {
			t.Fatalf("trial %d: Wait = %v", trial, err)
		}
		q.Close()
		if st := q.Stats(); st.Completed+st.Canceled != 1000 {
			t.Fatalf("trial %d: Completed %d + Canceled %d = %d; want 1000", trial, st.Completed, st.Canceled, st.Completed+st.Canceled)
		}
	}
}

// TestGroupHammer runs many groups at once, each on a queue of its own under
// one shared target, with first-error cancel: a member fails with an error or
// a panic, or cancels the group's context, at a random place. Each group's
// members are all added before any may start, so that the instant of the
// cancel splits them exactly: the checker proves that
//
//   - every member ran at most once, and the failing one ran;
//   - the members that ran are exactly those that had started when the group
//     was canceled: none started after it, however the queue reached the
//     others later;
//   - the queue's Stats count the others as canceled;
//   - Wait returned the failure, or the context's error exactly when a member
//     was kept from running;
//   - no member runs after Wait has returned, and no goroutine is left
//     (goleak, in TestMain).
func TestGroupHammer(t *testing.T) {
	const submitters = 8
	groups := hammerSize(2000*32, 10000*32) / 32 // a group has 32 members on average
	root := taskqueue.NewConcurrent(4)
	var wg sync.WaitGroup
	var canceledGroups, lostMembers atomic.Int64
	for s := range submitters {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(s), 14))
			for range groups / submitters {
				c, l := hammerGroup(t, root, rng)
				canceledGroups.Add(int64(c))
				lostMembers.Add(int64(l))
			}
		})
	}
	wg.Wait()
	root.Close()
	t.Logf("%d groups, %d canceled, %d members never ran", groups, canceledGroups.Load(), lostMembers.Load())
	if canceledGroups.Load() == 0 || lostMembers.Load() == 0 {
		t.Error("the hammer canceled no group or kept no member from running: it tested nothing")
	}
}

// hammerGroup runs and checks one group, returning 1 if it was canceled
// and the number of members that never ran.
func hammerGroup(t *testing.T, root *taskqueue.Queue, rng *rand.Rand) (canceled, lost int) {
	var panics atomic.Int32
	handler := taskqueue.WithPanicHandler(func(*taskqueue.PanicError) { panics.Add(1) })
	var q *taskqueue.Queue
	if rng.IntN(3) == 0 {
		q = taskqueue.NewSerial(taskqueue.WithTarget(root), handler)
	} else {
		q = taskqueue.NewConcurrent(1+rng.IntN(4), taskqueue.WithTarget(root), handler)
	}
	n := 1 + rng.IntN(64)
	at := rng.IntN(n + n/4) // no failure when at >= n
	how := rng.IntN(3)      // 0: an error, 1: a panic, 2: the parent context canceled
	opts := []taskqueue.GroupOption{taskqueue.WithCancelOnError()}
	limited := rng.IntN(4) == 0
	if limited {
		opts = append(opts, taskqueue.WithGroupLimit(1+rng.IntN(3)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errBoom := errors.New("boom")
	ran := make([]atomic.Int32, n)
	var total atomic.Int32
	q.Suspend() // nothing starts until every member is in
	g := taskqueue.NewGroup(ctx, q, opts...)
	for i := range n {
		g.Go(func(ctx context.Context) error {
			ran[i].Add(1)
			total.Add(1)
			if rng := i * 7919 % 5; rng == 0 {
				runtime.Gosched()
			}
			if i != at {
				return nil
			}
			switch how {
			case 0:
				return errBoom
			case 1:
				panic(errBoom)
			}
			cancel()
			return nil
		})
	}
	q.Resume()
	err := g.Wait(context.Background())
	atWait := total.Load()
	q.Close() // the queue reaches the members that never start, and skips them
	report := func(format string, args ...any) {
		t.Helper()
		t.Errorf("group of %d members, failing at %d by %d, limited %v: %s", n, at, how, limited, fmt.Sprintf(format, args...))
	}
	if got := total.Load(); got != atWait {
		report("%d members ran after Wait returned", got-atWait)
	}
	for i := range ran {
		if r := ran[i].Load(); r > 1 {
			report("member %d ran %d times", i, r)
		}
	}
	if at >= n {
		if err != nil || int(atWait) != n {
			report("Wait() = %v after %d members; want nil after all", err, atWait)
		}
		return 0, 0
	}
	queued := g.QueuedAtCancel()
	if ran[at].Load() != 1 {
		report("the failing member did not run")
	}
	if int(atWait) != n-queued {
		report("%d members ran; want the %d that had started when the group was canceled", atWait, n-queued)
	}
	s := q.Stats()
	if int(s.Canceled) != queued {
		report("Stats().Canceled = %d; want %d", s.Canceled, queued)
	}
	if int(s.Completed) != int(atWait) {
		report("Stats().Completed = %d; want %d", s.Completed, atWait)
	}
	var pe *taskqueue.PanicError
	switch {
	case how == 0 && err != errBoom:
		report("Wait() = %v; want boom", err)
	case how == 1 && (!errors.As(err, &pe) || panics.Load() != 0):
		report("Wait() = %v, %d panics reported; want the member's panic from Wait, and none reported", err, panics.Load())
	case how == 2 && (err == context.Canceled) != (queued > 0):
		report("Wait() = %v with %d members kept from running; want context.Canceled exactly when some were", err, queued)
	case how == 2 && err != nil && err != context.Canceled:
		report("Wait() = %v; want nil or context.Canceled", err)
	}
	return 1, queued
}

// TestGroupMisuse: a group without a queue, a limit out of range, nil
// members, members added after Wait and the zero Group panic with a message
// naming the call.
func TestGroupMisuse(t *testing.T) {
	ctx := context.Background()
	q := taskqueue.NewSerial()
	done := taskqueue.NewGroup(ctx, q)
	done.Wait(ctx)
	var zero taskqueue.Group
	const zeroGroup = "taskqueue: use of a zero Group; make one with NewGroup"
	checkMisuses(t, []misuse{
		{"NewGroup(nil)", func() { taskqueue.NewGroup(ctx, nil) }, "taskqueue: NewGroup with a nil queue"},
		{"WithGroupLimit(0)", func() { taskqueue.WithGroupLimit(0) }, "taskqueue: WithGroupLimit(0): the limit must be positive"},
		{"Go(nil)", func() { taskqueue.NewGroup(ctx, q).Go(nil) }, "taskqueue: Group.Go with a nil function"},
		{"TryGo(nil)", func() { taskqueue.NewGroup(ctx, q).TryGo(nil) }, "taskqueue: Group.TryGo with a nil function"},
		{"Go after Wait", func() { done.Go(nop) }, "taskqueue: Group.Go after Wait returned: a group is used once"},
		{"zero Group: Go", func() { zero.Go(nop) }, zeroGroup},
		{"zero Group: TryGo", func() { zero.TryGo(nop) }, zeroGroup},
		{"zero Group: Wait", func() { zero.Wait(ctx) }, zeroGroup},
	})
	q.Close()
}

// TestGroupPanicWaitDoesNotReturn: with WithCancelOnError, Wait returns the
// first failure alone; a member that panics after it fails with a
// *PanicError that Wait will not return, and that panic goes to the
// queue's panic handler, once.
func TestGroupPanicWaitDoesNotReturn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p panics
		q := taskqueue.NewConcurrent(2, taskqueue.WithPanicHandler(p.Add))
		g := taskqueue.NewGroup(t.Context(), q, taskqueue.WithCancelOnError())
		errBoom := errors.New("boom")
		started := make(chan struct{})
		g.Go(func(ctx context.Context) error {
			close(started)
			<-ctx.Done() // the group failed
			panic("after the failure")
		})
		g.Go(func(context.Context) error { <-started; return errBoom })
		if err := g.Wait(context.Background()); err != errBoom {
			t.Errorf("Wait() = %v; want boom alone", err)
		}
		if got := p.Take(); len(got) != 1 || got[0].Value != "after the failure" {
			t.Errorf("handler got %v; want the panic that Wait did not return, once", got)
		}
		q.Close()
	})
}

// TestGroupWaitWithAMembersContext: Wait's context may be a member's (the
// errgroup pattern), here one kept after the member failed and returned, so
// done: Wait returns the failure once the members still running have
// returned, never before.
func TestGroupWaitWithAMembersContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(4)
		g := taskqueue.NewGroup(t.Context(), q, taskqueue.WithCancelOnError())
		errBoom := errors.New("boom")
		var running atomic.Int32
		kept := make(chan context.Context, 1)
		for i := range 4 {
			g.Go(func(ctx context.Context) error {
				if i == 0 {
					kept <- ctx
					time.Sleep(time.Second)
					return errBoom
				}
				running.Add(1)
				defer running.Add(-1)
				<-ctx.Done()
				time.Sleep(time.Hour) // still running long after the failure
				return nil
			})
		}
		start := time.Now()
		ctx := <-kept
		time.Sleep(2 * time.Second) // the member has returned; its context is done
		if err := g.Wait(ctx); err != errBoom {
			t.Errorf("Wait(a member's context) = %v; want boom", err)
		}
		if n := running.Load(); n != 0 || time.Since(start) != time.Second+time.Hour {
			t.Errorf("Wait returned after %v with %d members running; want none running, after 1h1s", time.Since(start), n)
		}
		q.Close()
	})
}

// TestGroupWaitCancelsTheMembersContext: when Wait returns, the context the
// members received is canceled, for every group, not only those made
// WithCancelOnError: whether every member returned nil or one failed, a
// goroutine a member left watching that context ends.
func TestGroupWaitCancelsTheMembersContext(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("a member failed: %v", fail), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := taskqueue.NewConcurrent(2)
				parent, cancel := context.WithCancel(context.Background())
				g := taskqueue.NewGroup(parent, q)
				watched := make(chan struct{})
				var members context.Context
				g.Go(func(ctx context.Context) error {
					members = ctx
					go func() { <-ctx.Done(); close(watched) }()
					if fail {
						return errors.New("boom")
					}
					return nil
				})
				g.Wait(context.Background())
				synctest.Wait()
				if members.Err() == nil || !testkit.IsClosed(watched) {
					t.Errorf("Group.Wait returned; the members' context has error %v, and the goroutine watching it still waits", members.Err())
				}
				cancel() // so that a failing run ends the goroutine too
				q.Close()
			})
		})
	}
}

// TestGroupMembersKeepToBarriers: members are tasks of their queue under its
// rules, barriers included: a member added after RunBarrier starts once the
// barrier's function has returned, though a runner of the group, queued
// before the barrier, runs on; members added before the barrier end before
// it starts.
func TestGroupMembersKeepToBarriers(t *testing.T) {
	for _, limit := range []int{1, 2, 4} {
		t.Run(fmt.Sprint("limit=", limit), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := taskqueue.NewConcurrent(limit)
				var log testkit.Log
				g := taskqueue.NewGroup(t.Context(), q)
				g.Go(func(context.Context) error { log.Add("m1"); time.Sleep(10 * time.Millisecond); return nil })
				g.Go(func(context.Context) error { log.Add("m2"); return nil })
				synctest.Wait() // m1 runs, m2 waits in the group
				b := q.RunBarrier(t.Context(), func(context.Context) error {
					log.Add("barrier")
					time.Sleep(time.Millisecond)
					log.Add("barrier end")
					return nil
				})
				g.Go(func(context.Context) error { log.Add("m3"); return nil })
				g.Go(func(context.Context) error { log.Add("m4"); return nil })
				if err := g.Wait(t.Context()); err != nil {
					t.Fatal(err)
				}
				b.Wait(t.Context())
				if got, want := log.Take(), []string{"m1", "m2", "barrier", "barrier end", "m3", "m4"}; !slices.Equal(got, want) {
					t.Errorf("order %v; want %v", got, want)
				}
				q.Close()
			})
		})
	}
}
