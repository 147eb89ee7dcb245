package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// exclusive records entries into a critical section and fails when two overlap.
type exclusive struct {
	in      atomic.Int32
	overlap atomic.Int32
}

func (e *exclusive) enter() {
	if e.in.Add(1) != 1 {
		e.overlap.Add(1)
	}
}
func (e *exclusive) leave() { e.in.Add(-1) }

// A serial queue runs one function at a time whatever the mix of submissions:
// Go, RunAsync, RunSync from outside, RunSync in place from the task and from
// goroutines the task starts with its context, RunBarrier and TryGo.
func TestOutsideSerialExclusiveUnderMixedSubmissions(t *testing.T) {
	q := taskqueue.NewSerial()
	var ex exclusive
	var ran atomic.Int64
	body := func() {
		ex.enter()
		ran.Add(1)
		runtime.Gosched()
		ex.leave()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const subs, per = 8, 200
	var wg sync.WaitGroup
	var handles sync.Map
	var expect atomic.Int64
	for s := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				switch (s + i) % 6 {
				case 0:
					if err := q.Go(body); err != nil {
						t.Errorf("Go: %v", err)
						return
					}
					expect.Add(1)
				case 1:
					h := q.RunAsync(ctx, func(context.Context) error { body(); return nil })
					handles.Store(h, true)
					expect.Add(1)
				case 2:
					if err := q.RunSync(ctx, func(context.Context) error { body(); return nil }); err != nil {
						t.Errorf("RunSync: %v", err)
						return
					}
					expect.Add(1)
				case 3:
					// A task that calls RunSync in place, from itself and from helpers.
					h := q.RunAsync(ctx, func(tctx context.Context) error {
						body()
						var inner sync.WaitGroup
						for range 3 {
							inner.Add(1)
							go func() {
								defer inner.Done()
								if err := q.RunSync(tctx, func(context.Context) error { body(); return nil }); err != nil {
									t.Errorf("RunSync in place from helper: %v", err)
								}
							}()
						}
						if err := q.RunSync(tctx, func(context.Context) error { body(); return nil }); err != nil {
							t.Errorf("RunSync in place: %v", err)
						}
						inner.Wait()
						return nil
					})
					handles.Store(h, true)
					expect.Add(5)
				case 4:
					h := q.RunBarrier(ctx, func(context.Context) error { body(); return nil })
					handles.Store(h, true)
					expect.Add(1)
				case 5:
					if q.TryGo(body) {
						expect.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	handles.Range(func(k, _ any) bool {
		if err := k.(*taskqueue.Handle).Wait(ctx); err != nil {
			t.Errorf("handle: %v", err)
		}
		return true
	})
	if err := q.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if n := ex.overlap.Load(); n != 0 {
		t.Errorf("%d functions overlapped on a serial queue", n)
	}
	if ran.Load() != expect.Load() {
		t.Errorf("ran %d functions, want %d", ran.Load(), expect.Load())
	}
}

// A concurrent queue starts its tasks in submission order, at most n at once.
func TestOutsideConcurrentStartOrderGated(t *testing.T) {
	const n, total = 3, 40
	q := taskqueue.NewConcurrent(n)
	started := make(chan int, total)
	gates := make([]chan struct{}, total)
	for i := range gates {
		gates[i] = make(chan struct{})
	}
	var running, maxRunning atomic.Int32
	for i := range total {
		if err := q.Go(func() {
			r := running.Add(1)
			for {
				m := maxRunning.Load()
				if r <= m || maxRunning.CompareAndSwap(m, r) {
					break
				}
			}
			started <- i
			<-gates[i]
			running.Add(-1)
		}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[int]bool{}
	for range n {
		seen[<-started] = true
	}
	for i := range n {
		if !seen[i] {
			t.Fatalf("first %d starts were %v, want 0..%d", n, seen, n-1)
		}
	}
	// Release them one at a time in reverse-ish order; each release lets exactly
	// the next task in submission order start.
	next := n
	runningSet := []int{}
	for i := range n {
		runningSet = append(runningSet, i)
	}
	for len(runningSet) > 0 {
		// release the last running
		r := runningSet[len(runningSet)-1]
		runningSet = runningSet[:len(runningSet)-1]
		close(gates[r])
		if next < total {
			got := <-started
			if got != next {
				t.Fatalf("after releasing task %d, task %d started, want %d", r, got, next)
			}
			runningSet = append([]int{got}, runningSet...)
			next++
		}
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if m := maxRunning.Load(); m > n {
		t.Fatalf("%d tasks ran at once on a queue of limit %d", m, n)
	}
}

// Every accepted task runs exactly once or its handle completes with ErrClosed,
// CloseNow's count matches what it dropped, and Stats adds up once idle, while
// CloseNow races with submitters.
func TestOutsideCloseNowRaceAccounting(t *testing.T) {
	for round := range 40 {
		var q *taskqueue.Queue
		if round%2 == 0 {
			q = taskqueue.NewSerial()
		} else {
			q = taskqueue.NewConcurrent(2)
		}
		ctx := context.Background()
		var goAccepted, goRan, asyncRan, submissions atomic.Int64
		const subs = 4
		var handles [subs][]*taskqueue.Handle
		var ranFlags [subs][]*atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for s := range subs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := range 300 {
					submissions.Add(1)
					if i%2 == 0 {
						if q.Go(func() { goRan.Add(1) }) == nil {
							goAccepted.Add(1)
						}
					} else {
						flag := new(atomic.Int32)
						h := q.RunAsync(ctx, func(context.Context) error {
							flag.Add(1)
							asyncRan.Add(1)
							return nil
						})
						handles[s] = append(handles[s], h)
						ranFlags[s] = append(ranFlags[s], flag)
					}
				}
			}()
		}
		close(start)
		for range round * 10 {
			runtime.Gosched()
		}
		canceled := q.CloseNow()
		wg.Wait()
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if err := q.Shutdown(sctx); err != nil {
			t.Fatalf("round %d: Shutdown after CloseNow: %v", round, err)
		}
		cancel()
		var closedHandles int64
		for s := range subs {
			for i, h := range handles[s] {
				if !h.IsDone() {
					t.Fatalf("round %d: handle pending after CloseNow and Shutdown", round)
				}
				ran := ranFlags[s][i].Load()
				switch err := h.Err(); {
				case err == nil:
					if ran != 1 {
						t.Fatalf("round %d: handle nil but task ran %d times", round, ran)
					}
				case errors.Is(err, taskqueue.ErrClosed):
					closedHandles++
					if ran != 0 {
						t.Fatalf("round %d: handle ErrClosed but task ran %d times", round, ran)
					}
				default:
					t.Fatalf("round %d: unexpected handle error %v", round, err)
				}
			}
		}
		st := q.Stats()
		if st.Completed != uint64(goRan.Load()+asyncRan.Load()) {
			t.Fatalf("round %d: Stats.Completed = %d, ran %d", round, st.Completed, goRan.Load()+asyncRan.Load())
		}
		if st.Succeeded != st.Completed || st.Failed != 0 || st.Panicked != 0 {
			t.Fatalf("round %d: stats %+v", round, st)
		}
		if st.Canceled != uint64(canceled) {
			t.Fatalf("round %d: CloseNow returned %d, Stats.Canceled = %d", round, canceled, st.Canceled)
		}
		if int64(canceled) != goAccepted.Load()-goRan.Load()+(closedHandles-int64(st.Rejected)+(submissions.Load()/2-goAccepted.Load())) {
			// canceled = go dropped + handles canceled; handles canceled = closedHandles - rejected handles
			// rejected = rejected Go + rejected handles, rejected Go = submissions/2 - goAccepted
			t.Fatalf("round %d: CloseNow returned %d; Go accepted %d ran %d; ErrClosed handles %d; Rejected %d",
				round, canceled, goAccepted.Load(), goRan.Load(), closedHandles, st.Rejected)
		}
		if total := st.Completed + st.Canceled + st.Rejected; total != uint64(submissions.Load()) {
			t.Fatalf("round %d: Completed+Canceled+Rejected = %d, submissions %d (%+v)", round, total, submissions.Load(), st)
		}
		if st.Queued != 0 || st.Running != 0 || st.Delayed != 0 {
			t.Fatalf("round %d: idle closed queue has stats %+v", round, st)
		}
	}
}

// Cancel reports true exactly when the task never runs.
func TestOutsideCancelRaceWithStart(t *testing.T) {
	q := taskqueue.NewConcurrent(2)
	ctx := context.Background()
	for range 3000 {
		var ran atomic.Int32
		h := q.RunAsync(ctx, func(context.Context) error { ran.Add(1); return nil })
		ok := h.Cancel()
		if err := h.Wait(ctx); ok {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Cancel true, Err %v", err)
			}
		} else if err != nil {
			t.Fatalf("Cancel false, Err %v", err)
		}
		if err := q.RunSync(ctx, func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
		// Wait for the queue to settle: a barrier after it.
		if err := q.RunBarrier(ctx, func(context.Context) error { return nil }).Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if ok && ran.Load() != 0 {
			t.Fatalf("Cancel returned true but the task ran")
		}
		if !ok && ran.Load() != 1 {
			t.Fatalf("Cancel returned false but the task ran %d times", ran.Load())
		}
		if h.Cancel() {
			t.Fatalf("second Cancel returned true")
		}
	}
	q.Close()
}

// RunSync whose context ends while f runs on a worker returns ctx.Err() at once.
func TestOutsideRunSyncContextEndsWhileRunningOnWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var panics atomic.Int32
		q := taskqueue.NewSerial(taskqueue.WithPanicHandler(func(*taskqueue.PanicError) { panics.Add(1) }))
		block := make(chan struct{})
		q.Go(func() { <-block }) // makes q busy so that RunSync queues
		ctx, cancel := context.WithCancel(context.Background())
		inF := make(chan struct{})
		release := make(chan struct{})
		res := make(chan error, 1)
		go func() {
			res <- q.RunSync(ctx, func(context.Context) error {
				close(inF)
				<-release
				panic("late")
			})
		}()
		synctest.Wait()
		close(block)
		<-inF
		cancel()
		synctest.Wait()
		select {
		case err := <-res:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("RunSync returned %v, want context.Canceled", err)
			}
		default:
			t.Fatalf("RunSync did not return at once when its context ended while f ran on a worker")
		}
		close(release)
		q.Close()
		if panics.Load() != 1 {
			t.Fatalf("panic of abandoned RunSync reached the handler %d times, want 1", panics.Load())
		}
	})
}

// outcome runs call on a goroutine of its own and reports how it ended.
type outcome struct {
	returned bool
	panicked any
	goexit   bool
}

func runOn(call func()) <-chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		var o outcome
		normal := false
		defer func() {
			if !normal {
				o.panicked = recover()
				o.goexit = o.panicked == nil
			}
			ch <- o
		}()
		call()
		o.returned = true
		normal = true
	}()
	return ch
}

// syncPaths runs RunSync(f) on q on its three paths: idle (on the caller), busy
// (on a worker) and in place of a running task, and gives each outcome.
func syncPaths(t *testing.T, q *taskqueue.Queue, f func(context.Context) error) map[string]outcome {
	ctx := context.Background()
	res := map[string]outcome{}
	res["idle"] = <-runOn(func() { q.RunSync(ctx, f) })
	block := make(chan struct{})
	q.Go(func() { <-block })
	ch := runOn(func() { q.RunSync(ctx, f) })
	synctest.Wait()
	close(block)
	res["worker"] = <-ch
	err := q.RunAsync(ctx, func(tctx context.Context) error {
		res["inplace"] = <-runOn(func() { q.RunSync(tctx, f) })
		return nil
	}).Wait(ctx)
	if err != nil {
		t.Fatalf("outer task: %v", err)
	}
	return res
}

// RunSync re-panics f's panic with a *PanicError in all three places f can run,
// and the handler does not see it.
func TestOutsideRunSyncPanicEveryPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var handled atomic.Int32
		q := taskqueue.NewSerial(taskqueue.WithName("pp"), taskqueue.WithPanicHandler(func(*taskqueue.PanicError) { handled.Add(1) }))
		res := syncPaths(t, q, func(context.Context) error { panic("boom") })
		for name, o := range res {
			pe, ok := o.panicked.(*taskqueue.PanicError)
			if !ok {
				t.Errorf("%s: RunSync ended with %+v, want a *PanicError panic", name, o)
				continue
			}
			if fmt.Sprint(pe.Value) != "boom" || len(pe.Stack) == 0 {
				t.Errorf("%s: PanicError value %v, stack %d bytes", name, pe.Value, len(pe.Stack))
			}
		}
		q.Close()
		if handled.Load() != 0 {
			t.Fatalf("handler saw %d panics that RunSync re-panicked", handled.Load())
		}
	})
}

// RunSync's f calling runtime.Goexit makes RunSync call Goexit too, on every path,
// and the queue keeps working.
func TestOutsideRunSyncGoexitEveryPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		res := syncPaths(t, q, func(context.Context) error { runtime.Goexit(); return nil })
		for name, o := range res {
			if !o.goexit {
				t.Errorf("%s: RunSync ended with %+v after f called runtime.Goexit, want Goexit", name, o)
			}
		}
		if err := q.RunSync(context.Background(), func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
		q.Close()
	})
}

func mustPanic(t *testing.T, name, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("%s did not panic", name)
			return
		}
		if want != "" && !strings.Contains(fmt.Sprint(r), want) {
			t.Errorf("%s panicked with %q, want it to mention %q", name, fmt.Sprint(r), want)
		}
	}()
	f()
}

func TestOutsideDocumentedPanics(t *testing.T) {
	mustPanic(t, "NewConcurrent(0)", "taskqueue", func() { taskqueue.NewConcurrent(0) })
	mustPanic(t, "NewConcurrent(-1)", "taskqueue", func() { taskqueue.NewConcurrent(-1) })
	mustPanic(t, "WithMaxQueued(0)", "taskqueue", func() { taskqueue.WithMaxQueued(0) })
	mustPanic(t, "WithQuantum(0)", "taskqueue", func() { taskqueue.WithQuantum(0) })
	mustPanic(t, "WithGroupLimit(0)", "taskqueue", func() { taskqueue.WithGroupLimit(0) })
	mustPanic(t, "DefaultSerial().CloseNow", "taskqueue", func() { taskqueue.DefaultSerial().CloseNow() })
	mustPanic(t, "DefaultConcurrent().CloseNow", "taskqueue", func() { taskqueue.DefaultConcurrent().CloseNow() })
	mustPanic(t, "DefaultSerial().Shutdown", "taskqueue", func() { taskqueue.DefaultSerial().Shutdown(context.Background()) })
	mustPanic(t, "DefaultConcurrent().Close", "taskqueue", func() { taskqueue.DefaultConcurrent().Close() })
	// The defaults still work after the refused calls.
	if taskqueue.DefaultSerial().Go(func() {}) != nil || taskqueue.DefaultConcurrent().Go(func() {}) != nil {
		t.Fatal("a default queue refuses work after a refused close")
	}
	if err := taskqueue.DefaultSerial().RunSync(context.Background(), func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	s := taskqueue.NewSerial()
	mustPanic(t, "serial SetLimit(2)", "taskqueue", func() { s.SetLimit(2) })
	c := taskqueue.NewConcurrent(2)
	mustPanic(t, "SetLimit(0)", "taskqueue", func() { c.SetLimit(0) })
	mustPanic(t, "Resume without Suspend", "taskqueue", func() { c.Resume() })
	c.Suspend()
	c.Suspend()
	c.Resume()
	c.Resume()
	mustPanic(t, "Resume after nested pairs", "taskqueue", func() { c.Resume() })
	mustPanic(t, "WithTarget(nil)", "", func() { taskqueue.NewSerial(taskqueue.WithTarget(nil)) })
	mustPanic(t, "NewKeyed(nil)", "taskqueue", func() { taskqueue.NewKeyed[int](nil) })
	mustPanic(t, "NewKeyed WithTarget", "taskqueue", func() { taskqueue.NewKeyed[int](c, taskqueue.WithTarget(c)) })
	var zk taskqueue.Keyed[int]
	mustPanic(t, "zero Keyed Go", "taskqueue", func() { zk.Go(1, func() {}) })
	mustPanic(t, "zero Keyed Lanes", "taskqueue", func() { zk.Lanes() })
	mustPanic(t, "NewGroup(nil)", "taskqueue", func() { taskqueue.NewGroup(context.Background(), nil) })
	mustPanic(t, "NewGroupOf(nil)", "taskqueue", func() { taskqueue.NewGroupOf[int](context.Background(), nil) })
	g := taskqueue.NewGroup(context.Background(), c)
	mustPanic(t, "Group.Go(nil)", "taskqueue", func() { g.Go(nil) })
	g.Go(func(context.Context) error { return nil })
	if err := g.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	mustPanic(t, "Group.Go after Wait", "taskqueue", func() { g.Go(func(context.Context) error { return nil }) })
	mustPanic(t, "Apply(n<0)", "taskqueue", func() { taskqueue.Apply(context.Background(), c, -1, func(int) {}) })
	mustPanic(t, "Apply(nil f)", "taskqueue", func() { taskqueue.Apply(context.Background(), c, 1, nil) })
	mustPanic(t, "Map(nil f)", "taskqueue", func() { taskqueue.Map[int, int](context.Background(), c, []int{1}, nil) })
	h := c.RunAsync(context.Background(), func(context.Context) error { return nil })
	mustPanic(t, "Then(nil q)", "taskqueue", func() { h.Then(context.Background(), nil, func(context.Context) error { return nil }) })
	mustPanic(t, "Then(nil f)", "taskqueue", func() { h.Then(context.Background(), c, nil) })
	f := taskqueue.RunAsync(context.Background(), c, func(context.Context) (int, error) { return 1, nil })
	mustPanic(t, "generic Then(nil prev)", "taskqueue", func() {
		taskqueue.Then[int, int](context.Background(), nil, c, func(context.Context, int) (int, error) { return 0, nil })
	})
	mustPanic(t, "generic Then(nil fn)", "taskqueue", func() { taskqueue.Then[int, int](context.Background(), f, c, nil) })
	h.Wait(context.Background())
	f.Wait(context.Background())
	s.Close()
	c.Close()
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
