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

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// Wait joins the members' errors in the order the members were added, not the
// order they failed in.
func TestOutsideGroupErrorsInAddOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(8)
		g := taskqueue.NewGroup(context.Background(), q)
		errs := make([]error, 6)
		for i := range errs {
			errs[i] = fmt.Errorf("member %d", i)
			g.Go(func(context.Context) error {
				time.Sleep(time.Duration(10-i) * time.Second) // later members fail first
				if i == 2 {
					return nil
				}
				return errs[i]
			})
		}
		err := g.Wait(context.Background())
		u, ok := err.(interface{ Unwrap() []error })
		if !ok {
			t.Fatalf("Wait returned %v, want joined errors", err)
		}
		got := u.Unwrap()
		want := []error{errs[0], errs[1], errs[3], errs[4], errs[5]}
		if !slices.Equal(got, want) {
			t.Fatalf("Wait errors %v, want %v", got, want)
		}
		q.Close()
	})
}

// With WithCancelOnError on a queue that runs members one at a time, no member
// after the failing one runs, Wait returns that error alone, and the members'
// context has it as its cause.
func TestOutsideGroupCancelOnErrorSerial(t *testing.T) {
	for round := range 200 {
		q := taskqueue.NewSerial()
		g := taskqueue.NewGroup(context.Background(), q, taskqueue.WithCancelOnError())
		boom := errors.New("boom")
		k := round % 20
		var ranAfter atomic.Int32
		causeCh := make(chan error, 1)
		for i := range 20 {
			g.Go(func(ctx context.Context) error {
				if i > k {
					ranAfter.Add(1)
				}
				if i == k {
					context.AfterFunc(ctx, func() { causeCh <- context.Cause(ctx) })
					return boom
				}
				return nil
			})
		}
		err := g.Wait(context.Background())
		if err != boom {
			t.Fatalf("round %d: Wait = %v, want boom alone", round, err)
		}
		if n := ranAfter.Load(); n != 0 {
			t.Fatalf("round %d: %d members after the failing one ran", round, n)
		}
		q.Close()
		if cause := <-causeCh; cause != boom {
			t.Fatalf("round %d: context cause %v", round, cause)
		}
		st := q.Stats()
		if st.Completed != uint64(k+1) || st.Failed != 1 || st.Canceled != uint64(19-k) {
			t.Fatalf("round %d: Stats %+v, want Completed %d Failed 1 Canceled %d", round, st, k+1, 19-k)
		}
	}
}

// A member's panic that Wait returns is not also given to the panic handler
// ("none is reported twice"); a Goexit member fails with ErrGoexit.
func TestOutsideGroupPanicReportedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var handled atomic.Int32
		q := taskqueue.NewConcurrent(2, taskqueue.WithPanicHandler(func(*taskqueue.PanicError) { handled.Add(1) }))
		g := taskqueue.NewGroup(context.Background(), q)
		g.Go(func(context.Context) error { time.Sleep(time.Second); panic("member") })
		g.Go(func(context.Context) error { time.Sleep(time.Second); runtime.Goexit(); return nil })
		err := g.Wait(context.Background())
		var pe *taskqueue.PanicError
		if !errors.As(err, &pe) || fmt.Sprint(pe.Value) != "member" {
			t.Errorf("Wait = %v, want the member's *PanicError", err)
		}
		if !errors.Is(err, taskqueue.ErrGoexit) {
			t.Errorf("Wait = %v, want ErrGoexit among the errors", err)
		}
		q.Close()
		if n := handled.Load(); n != 0 {
			t.Errorf("the panic handler saw %d panics that the waiting Wait returned (reported twice)", n)
		}
		st := q.Stats()
		if st.Panicked != 1 || st.Failed != 1 || st.Completed != 2 {
			t.Errorf("Stats %+v", st)
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

// Members may add members; Wait waits for all of them, and GroupOf keeps the
// order of addition for values.
func TestOutsideGroupOfNestedAndOrder(t *testing.T) {
	q := taskqueue.NewConcurrent(3)
	g := taskqueue.NewGroupOf[int](context.Background(), q)
	var total atomic.Int32
	for i := range 50 {
		g.Go(func(context.Context) (int, error) {
			total.Add(1)
			if i%10 == 0 {
				g.Go(func(context.Context) (int, error) { total.Add(1); return 1000 + i, nil })
			}
			return i, nil
		})
	}
	vals, err := g.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if total.Load() != 55 || len(vals) != 55 {
		t.Fatalf("ran %d members, %d values, want 55", total.Load(), len(vals))
	}
	// Values of the 50 top-level members appear in order.
	var top []int
	for _, v := range vals {
		if v < 1000 {
			top = append(top, v)
		}
	}
	for i, v := range top {
		if v != i {
			t.Fatalf("values out of order of addition: %v", vals)
		}
	}
	q.Close()
}

// Completed yields every result to each of several concurrent iterations, and
// Wait afterwards returns at once with the values.
func TestOutsideGroupOfCompletedConcurrentIterations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(4)
		g := taskqueue.NewGroupOf[int](context.Background(), q)
		for i := range 20 {
			g.Go(func(context.Context) (int, error) {
				time.Sleep(time.Duration(20-i) * time.Millisecond)
				if i == 7 {
					return -7, errors.New("seven")
				}
				return i, nil
			})
		}
		var wg sync.WaitGroup
		sums := make([]int, 3)
		counts := make([]int, 3)
		for r := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for v, err := range g.Completed() {
					counts[r]++
					if err == nil {
						sums[r] += v
					}
				}
			}()
		}
		wg.Wait()
		for r := range 3 {
			if counts[r] != 20 || sums[r] != 190-7 {
				t.Errorf("iteration %d: %d results, sum %d", r, counts[r], sums[r])
			}
		}
		vals, err := g.Wait(context.Background())
		if err == nil || err.Error() != "seven" || len(vals) != 20 || vals[7] != -7 || vals[19] != 19 {
			t.Errorf("Wait after Completed: %v %v", vals, err)
		}
		q.Close()
	})
}

// A group whose context ends: members not started never run, Wait returns the
// context's error once the running ones return.
func TestOutsideGroupContextEnds(t *testing.T) {
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

// Members left waiting in the group when CloseNow drops the group's tasks fail
// with ErrClosed, and Wait returns; members added to a closed queue fail with
// ErrClosed.
func TestOutsideGroupCloseNow(t *testing.T) {
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

// WithGroupLimit bounds the members running at once below the queue's limit.
func TestOutsideGroupLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(6)
		g := taskqueue.NewGroup(context.Background(), q, taskqueue.WithGroupLimit(2))
		var running, maxRunning atomic.Int32
		for range 30 {
			g.Go(func(context.Context) error {
				r := running.Add(1)
				for {
					m := maxRunning.Load()
					if r <= m || maxRunning.CompareAndSwap(m, r) {
						break
					}
				}
				time.Sleep(time.Millisecond)
				running.Add(-1)
				return nil
			})
		}
		if err := g.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if maxRunning.Load() != 2 {
			t.Errorf("max running members %d, want 2", maxRunning.Load())
		}
		// Members waiting in the group do not count as Queued.
		g2 := taskqueue.NewGroup(context.Background(), q, taskqueue.WithGroupLimit(1))
		block := make(chan struct{})
		for range 5 {
			g2.Go(func(context.Context) error { <-block; return nil })
		}
		synctest.Wait()
		if st := q.Stats(); st.Queued != 0 || st.Running != 1 {
			t.Errorf("Stats with one running member and 4 waiting in the group: %+v", st)
		}
		close(block)
		g2.Wait(context.Background())
		q.Close()
	})
}
