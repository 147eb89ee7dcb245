package taskqueue_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// Delayed tasks never start early and, on a serial queue, start in due order,
// in submission order when due together, mixed with d <= 0 tasks.
func TestOutsideRunAfterDueOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		ctx := context.Background()
		t0 := time.Now()
		delays := []time.Duration{5, 3, 3, 0, 7, 1, -2, 3, 5, 1, 0, 2}
		type rec struct {
			i  int
			at time.Duration
		}
		var mu sync.Mutex
		var got []rec
		var hs []*taskqueue.Handle
		for i, d := range delays {
			d := d * time.Second
			hs = append(hs, q.RunAfter(ctx, d, func(context.Context) error {
				mu.Lock()
				got = append(got, rec{i, time.Since(t0)})
				mu.Unlock()
				return nil
			}))
		}
		if st := q.Stats(); st.Delayed != 9 {
			t.Errorf("Stats.Delayed = %d, want 9", st.Delayed)
		}
		for _, h := range hs {
			if err := h.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
		// expected: stable sort by max(d,0)
		want := []int{3, 6, 10, 5, 9, 11, 1, 2, 7, 0, 8, 4}
		if len(got) != len(want) {
			t.Fatalf("ran %d", len(got))
		}
		for k, r := range got {
			d := delays[r.i] * time.Second
			if r.at < d {
				t.Errorf("task %d (delay %v) started early at %v", r.i, d, r.at)
			}
			if r.i != want[k] {
				t.Errorf("start %d was task %d, want %d (all: %v)", k, r.i, want[k], got)
			}
		}
		q.Close()
	})
}

// A delayed task whose context ends, or that is canceled, leaves the timer at
// once: its handle is done without waiting for the due time, and Stats shows it.
func TestOutsideRunAfterCancelWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(2, taskqueue.WithMaxQueued(2), taskqueue.WithFailWhenFull())
		ctx, cancel := context.WithCancel(context.Background())
		var ran atomic.Int32
		h1 := q.RunAfter(ctx, time.Hour, func(context.Context) error { ran.Add(1); return nil })
		h2 := q.RunAfter(context.Background(), time.Hour, func(context.Context) error { ran.Add(1); return nil })
		if err := q.Go(func() {}); !errors.Is(err, taskqueue.ErrQueueFull) {
			t.Fatalf("Go on a queue full of delayed tasks: %v, want ErrQueueFull", err)
		}
		cancel()
		synctest.Wait()
		if !h1.IsDone() || !errors.Is(h1.Err(), context.Canceled) {
			t.Fatalf("delayed task whose context ended: done %v err %v", h1.IsDone(), h1.Err())
		}
		if !h2.Cancel() {
			t.Fatal("Cancel of a waiting delayed task returned false")
		}
		if !errors.Is(h2.Err(), context.Canceled) {
			t.Fatalf("Err after Cancel: %v", h2.Err())
		}
		// Room is free at once.
		if err := q.Go(func() {}); err != nil {
			t.Fatalf("Go after the delayed tasks left: %v", err)
		}
		q.Close()
		st := q.Stats()
		if st.Delayed != 0 || st.Canceled != 2 || st.Completed != 1 {
			t.Errorf("stats %+v, want Delayed 0, Canceled 2, Completed 1", st)
		}
		if ran.Load() != 0 {
			t.Fatal("canceled delayed task ran")
		}
	})
}

// Shutdown waits for delayed tasks to come due and run; CloseNow cancels them and counts them.
func TestOutsideShutdownAndCloseNowWithDelayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		t0 := time.Now()
		var ranAt time.Duration
		h := q.RunAfter(context.Background(), 10*time.Second, func(context.Context) error { ranAt = time.Since(t0); return nil })
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		if !h.IsDone() || h.Err() != nil || ranAt != 10*time.Second {
			t.Fatalf("Close returned before the delayed task ran: done %v err %v ranAt %v", h.IsDone(), h.Err(), ranAt)
		}
		if err := q.Go(func() {}); !errors.Is(err, taskqueue.ErrClosed) {
			t.Fatalf("Go after Close: %v", err)
		}
		if h := q.RunAfter(context.Background(), time.Second, func(context.Context) error { return nil }); !errors.Is(h.Err(), taskqueue.ErrClosed) {
			t.Fatalf("RunAfter after Close: %v", h.Err())
		}

		q2 := taskqueue.NewConcurrent(3)
		block := make(chan struct{})
		q2.Go(func() { <-block })
		var hs []*taskqueue.Handle
		for i := range 5 {
			hs = append(hs, q2.RunAfter(context.Background(), time.Duration(i+1)*time.Second, func(context.Context) error { return nil }))
		}
		hs = append(hs, q2.RunAsync(context.Background(), func(context.Context) error { <-block; return nil }))
		synctest.Wait()
		n := q2.CloseNow()
		if n != 5 {
			t.Errorf("CloseNow returned %d, want 5 (the delayed tasks)", n)
		}
		for i, h := range hs[:5] {
			if !h.IsDone() || !errors.Is(h.Err(), taskqueue.ErrClosed) {
				t.Errorf("delayed handle %d: done %v err %v", i, h.IsDone(), h.Err())
			}
		}
		close(block)
		if err := q2.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if hs[5].Err() != nil {
			t.Fatalf("running task: %v", hs[5].Err())
		}
		if n2 := q2.CloseNow(); n2 != 0 {
			t.Errorf("second CloseNow returned %d", n2)
		}
	})
}

// A task submitting to its own full queue with WaitWhenFull gets ErrQueueFull
// instead of waiting for itself; RunAsync from outside waits for room until its
// context ends.
func TestOutsideMaxQueuedWaitWhenFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial(taskqueue.WithMaxQueued(1))
		ctx := context.Background()
		release := make(chan struct{})
		var inner error
		var innerSync error
		h := q.RunAsync(ctx, func(tctx context.Context) error {
			// fill the queue
			if err := q.Go(func() {}); err != nil {
				return err
			}
			inner = q.RunAsync(tctx, func(context.Context) error { return nil }).Err()
			// RunSync with the task's context runs in place: no room needed.
			innerSync = q.RunSync(tctx, func(context.Context) error { return nil })
			<-release
			return nil
		})
		synctest.Wait()
		if !errors.Is(inner, taskqueue.ErrQueueFull) {
			t.Errorf("RunAsync from a task into its own full queue: %v, want ErrQueueFull", inner)
		}
		if innerSync != nil {
			t.Errorf("RunSync in place on a full queue: %v", innerSync)
		}
		// From outside: waits for room.
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		h2c := make(chan *taskqueue.Handle, 1)
		go func() { h2c <- q.RunAsync(wctx, func(context.Context) error { return nil }) }()
		synctest.Wait()
		var h2 *taskqueue.Handle
		select {
		case h2 = <-h2c:
			t.Errorf("RunAsync on a full WaitWhenFull queue did not wait: %v", h2.Err())
		default:
		}
		if err := q.Go(func() {}); !errors.Is(err, taskqueue.ErrQueueFull) {
			t.Errorf("Go on full queue: %v", err)
		}
		close(release)
		if h2 == nil {
			h2 = <-h2c
		}
		if err := h2.Wait(ctx); err != nil {
			t.Fatalf("RunAsync that waited for room: %v", err)
		}
		if err := h.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		// Times out when nothing frees room.
		block := make(chan struct{})
		q.Go(func() { <-block })
		synctest.Wait()
		q.Go(func() {})
		tctx, cancel2 := context.WithTimeout(ctx, time.Second)
		defer cancel2()
		h3 := q.RunAsync(tctx, func(context.Context) error { return nil })
		if err := h3.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("RunAsync waiting for room past its deadline: %v", err)
		}
		if err := q.RunSync(tctx, func(context.Context) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("RunSync on a full queue with a done context: %v", err)
		}
		close(block)
		q.Close()
		st := q.Stats()
		if st.Rejected < 3 {
			t.Errorf("Rejected = %d, want at least 3 (%+v)", st.Rejected, st)
		}
	})
}

// TryGo never starts a task on a suspended queue, on a busy one, or ahead of a
// queued task; it reports false on a closed queue.
func TestOutsideTryGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(2)
		var ran atomic.Int32
		f := func() { ran.Add(1) }
		q.Suspend()
		if q.TryGo(f) {
			synctest.Wait()
			t.Errorf("TryGo started a task on a suspended queue (ran %d)", ran.Load())
		}
		q.Resume()
		block := make(chan struct{})
		q.Go(func() { <-block })
		q.Go(func() { <-block })
		synctest.Wait()
		if q.TryGo(f) {
			t.Errorf("TryGo on a queue with every slot busy reported true")
		}
		close(block)
		synctest.Wait()
		if !q.TryGo(f) {
			t.Errorf("TryGo on an idle queue reported false")
		}
		synctest.Wait()
		// A queued task waiting (suspended then resumed with room) comes first.
		q.Suspend()
		q.Go(func() {})
		if q.TryGo(f) {
			t.Errorf("TryGo reported true with a task waiting before it on a suspended queue")
		}
		q.Resume()
		q.Close()
		if q.TryGo(f) {
			t.Errorf("TryGo on a closed queue reported true")
		}
		if got := ran.Load(); got != 1 {
			t.Errorf("TryGo ran %d functions, want 1", got)
		}
	})
}

// Suspend stops starts, nests, and RunSync from outside waits on a suspended
// idle queue (it is not idle for RunSync's run-on-caller rule).
func TestOutsideSuspendHoldsRunSyncAndNests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		q.Suspend()
		var ran atomic.Int32
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := q.RunSync(ctx, func(context.Context) error { ran.Add(1); return nil })
		if ran.Load() != 0 || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("RunSync on a suspended idle queue: ran %d, err %v", ran.Load(), err)
		}
		q.Suspend()
		h := q.RunAsync(context.Background(), func(context.Context) error { ran.Add(1); return nil })
		q.Resume()
		synctest.Wait()
		if h.IsDone() {
			t.Fatal("task started after one Resume of two Suspends")
		}
		if st := q.Stats(); st.Queued != 1 {
			t.Errorf("suspended queue Stats.Queued = %d, want 1", st.Queued)
		}
		q.Resume()
		if err := h.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Apply on a suspended queue: the caller takes a free slot only if q may start tasks.
		q.Suspend()
		actx, cancel2 := context.WithTimeout(context.Background(), time.Second)
		defer cancel2()
		var calls atomic.Int32
		aerr := taskqueue.Apply(actx, q, 4, func(int) { calls.Add(1) })
		if calls.Load() != 0 {
			t.Errorf("Apply ran %d iterations on a suspended queue (err %v)", calls.Load(), aerr)
		}
		q.Resume()
		q.Close()
	})
}

// SetLimit: raising starts waiting tasks at once, lowering bounds the running
// count once running tasks finish.
func TestOutsideSetLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(1)
		var running, maxRunning atomic.Int32
		block := make(chan struct{})
		task := func() {
			r := running.Add(1)
			for {
				m := maxRunning.Load()
				if r <= m || maxRunning.CompareAndSwap(m, r) {
					break
				}
			}
			<-block
			running.Add(-1)
		}
		for range 6 {
			q.Go(task)
		}
		synctest.Wait()
		if running.Load() != 1 {
			t.Fatalf("running %d at limit 1", running.Load())
		}
		q.SetLimit(4)
		synctest.Wait()
		if running.Load() != 4 || q.Stats().Limit != 4 {
			t.Fatalf("after SetLimit(4): running %d, Limit %d", running.Load(), q.Stats().Limit)
		}
		q.SetLimit(1)
		maxRunning.Store(0)
		close(block)
		q.Close()
		if maxRunning.Load() > 4 {
			t.Fatalf("max running %d", maxRunning.Load())
		}
		// after lowering, no more than 1 at once for new tasks
		q2 := taskqueue.NewConcurrent(3)
		q2.SetLimit(1)
		var ex exclusive
		for range 50 {
			q2.Go(func() { ex.enter(); time.Sleep(time.Millisecond); ex.leave() })
		}
		q2.Close()
		if ex.overlap.Load() != 0 {
			t.Fatalf("%d overlaps after SetLimit(1)", ex.overlap.Load())
		}
	})
}

// A barrier starts after every earlier task finished and before any later one starts.
func TestOutsideBarrier(t *testing.T) {
	for round := range 50 {
		q := taskqueue.NewConcurrent(4)
		ctx := context.Background()
		var before, after atomic.Int32
		var bad atomic.Int32
		var inBarrier atomic.Bool
		for range 20 {
			q.Go(func() {
				if inBarrier.Load() {
					bad.Add(1)
				}
				before.Add(1)
			})
		}
		h := q.RunBarrier(ctx, func(context.Context) error {
			inBarrier.Store(true)
			if before.Load() != 20 || after.Load() != 0 {
				bad.Add(100)
			}
			for range 10 {
				runtime.Gosched()
			}
			inBarrier.Store(false)
			return nil
		})
		for range 20 {
			q.RunAsync(ctx, func(context.Context) error {
				if inBarrier.Load() || !h.IsDone() {
					bad.Add(1)
				}
				after.Add(1)
				return nil
			})
		}
		q.Close()
		if bad.Load() != 0 {
			t.Fatalf("round %d: barrier broken (%d)", round, bad.Load())
		}
	}
}

// A Future's Result is the zero value and nil while pending, then the value.
func TestOutsideFutureResultAndThen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		ctx := context.Background()
		release := make(chan struct{})
		f := taskqueue.RunAsync(ctx, q, func(context.Context) (int, error) { <-release; return 7, nil })
		if v, err := f.Result(); v != 0 || err != nil || f.IsDone() {
			t.Fatalf("pending Result = %v, %v, done %v", v, err, f.IsDone())
		}
		g := taskqueue.Then(ctx, f, q, func(_ context.Context, v int) (string, error) {
			if v != 7 {
				return "", errors.New("wrong value")
			}
			return "seven", nil
		})
		close(release)
		s, err := g.Wait(ctx)
		if s != "seven" || err != nil {
			t.Fatalf("Then: %q %v", s, err)
		}
		// A failing predecessor passes its error; the continuation does not run.
		boom := errors.New("boom")
		bad := taskqueue.RunAsync(ctx, q, func(context.Context) (int, error) { return 3, boom })
		var ran atomic.Bool
		c := taskqueue.Then(ctx, bad, q, func(context.Context, int) (int, error) { ran.Store(true); return 1, nil })
		if _, err := c.Wait(ctx); !errors.Is(err, boom) || ran.Load() {
			t.Fatalf("continuation of a failed task: err %v ran %v", err, ran.Load())
		}
		if v, err := bad.Result(); v != 3 || !errors.Is(err, boom) {
			t.Fatalf("Result of failed task = %v %v", v, err)
		}
		// A panicking predecessor.
		p := q.RunAsync(ctx, func(context.Context) error { panic("x") })
		pc := p.Then(ctx, q, func(context.Context) error { ran.Store(true); return nil })
		var pe *taskqueue.PanicError
		if err := pc.Wait(ctx); !errors.As(err, &pe) || ran.Load() {
			t.Fatalf("continuation of a panicked task: %v ran %v", err, ran.Load())
		}
		// The continuation's queue is closed when the predecessor returns.
		q2 := taskqueue.NewSerial()
		rel2 := make(chan struct{})
		h := q.RunAsync(ctx, func(context.Context) error { <-rel2; return nil })
		ch := h.Then(ctx, q2, func(context.Context) error { ran.Store(true); return nil })
		q2.Close()
		close(rel2)
		if err := ch.Wait(ctx); !errors.Is(err, taskqueue.ErrClosed) || ran.Load() {
			t.Fatalf("continuation on a queue closed meanwhile: %v ran %v", err, ran.Load())
		}
		// The continuation's ctx ends while it waits.
		rel3 := make(chan struct{})
		h3 := q.RunAsync(ctx, func(context.Context) error { <-rel3; return nil })
		cctx, cancel := context.WithCancel(ctx)
		c3 := h3.Then(cctx, q, func(context.Context) error { ran.Store(true); return nil })
		cancel()
		synctest.Wait()
		if !c3.IsDone() || !errors.Is(c3.Err(), context.Canceled) {
			t.Errorf("continuation whose context ended while waiting: done %v err %v", c3.IsDone(), c3.Err())
		}
		// Cancel of a waiting continuation.
		c4 := h3.Then(ctx, q, func(context.Context) error { ran.Store(true); return nil })
		if !c4.Cancel() {
			t.Errorf("Cancel of a waiting continuation returned false")
		}
		close(rel3)
		q.Close()
		if ran.Load() {
			t.Fatal("a continuation that should not run ran")
		}
		if !c4.IsDone() || !errors.Is(c4.Err(), context.Canceled) {
			t.Errorf("canceled continuation: %v", c4.Err())
		}
	})
}

// Stats counts outcomes: Succeeded, Failed (error and Goexit), Panicked,
// Canceled (ctx done before start, Cancel), Rejected (closed).
func TestOutsideStatsOutcomes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial(taskqueue.WithPanicHandler(func(*taskqueue.PanicError) {}))
		ctx := context.Background()
		q.RunAsync(ctx, func(context.Context) error { return nil })
		q.RunAsync(ctx, func(context.Context) error { return errors.New("e") })
		h := q.RunAsync(ctx, func(context.Context) error { runtime.Goexit(); return nil })
		q.RunAsync(ctx, func(context.Context) error { panic("p") })
		q.Go(func() { panic("p2") })
		q.Go(func() {})
		synctest.Wait()
		if !errors.Is(h.Err(), taskqueue.ErrGoexit) {
			t.Errorf("Goexit task Err %v", h.Err())
		}
		block := make(chan struct{})
		q.Go(func() { <-block })
		cctx, cancel := context.WithCancel(ctx)
		hc := q.RunAsync(cctx, func(context.Context) error { return nil })
		hx := q.RunAsync(ctx, func(context.Context) error { return nil })
		_ = hc.Done() // someone watches it, so that it is canceled at once
		cancel()
		hx.Cancel()
		synctest.Wait()
		if !hc.IsDone() {
			t.Errorf("task whose context ended before it started is not done at once")
		}
		close(block)
		q.Close()
		q.Go(func() {})
		q.RunAsync(ctx, func(context.Context) error { return nil })
		st := q.Stats()
		want := taskqueue.Stats{Limit: 1, Completed: 7, Succeeded: 3, Failed: 2, Panicked: 2, Canceled: 2, Rejected: 2}
		st.Wait = want.Wait
		if st != want {
			t.Errorf("Stats = %+v\nwant  %+v", st, want)
		}
	})
}

// A queued task whose context ends before it starts is canceled at once: its
// handle is done, without waiting for the queue to reach the task, whether or
// not anyone has asked for Done yet; Stats no longer counts it as Queued.
func TestOutsideQueuedTaskContextEndsCancelsAtOnce(t *testing.T) {
	for _, mode := range []string{"Done first", "IsDone only"} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := taskqueue.NewSerial()
				block := make(chan struct{})
				defer q.Close()
				defer close(block)
				q.Go(func() { <-block })
				ctx, cancel := context.WithCancel(context.Background())
				var ran atomic.Bool
				h := q.RunAsync(ctx, func(context.Context) error { ran.Store(true); return nil })
				var done <-chan struct{}
				if mode == "Done first" {
					done = h.Done()
				}
				cancel()
				synctest.Wait()
				if !h.IsDone() {
					t.Errorf("IsDone false after the context of a queued task ended (queue still busy)")
				}
				if done != nil {
					select {
					case <-done:
					default:
						t.Errorf("Done not closed after the context of a queued task ended")
					}
				}
				if st := q.Stats(); st.Queued != 0 || st.Canceled != 1 {
					t.Errorf("Stats after the context of the only queued task ended: Queued %d Canceled %d", st.Queued, st.Canceled)
				}
			})
		})
	}
}
