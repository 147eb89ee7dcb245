//go:build !js

package mainthread_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

func TestCallRunsOnTheMainThread(t *testing.T) {
	if onMainThread(t) {
		t.Fatal("the test goroutine runs on the main thread")
	}
	if mainthread.IsMain() {
		t.Error("IsMain() = true on a test goroutine")
	}
	var onMain, isMain bool
	taskqueue.RunSyncOnMainThread(bg, func() {
		onMain = onMainThread(t)
		isMain = mainthread.IsMain()
	})
	if !onMain || !isMain {
		t.Errorf("in Call: on the main thread %v, IsMain %v; want true, true", onMain, isMain)
	}
	// From many goroutines at once, every call lands on the main thread.
	var wg sync.WaitGroup
	var off atomic.Int32
	for range 16 {
		wg.Go(func() {
			for range 100 {
				taskqueue.RunSyncOnMainThread(bg, func() {
					if !onMainThread(t) {
						off.Add(1)
					}
				})
			}
		})
	}
	wg.Wait()
	if n := off.Load(); n > 0 {
		t.Errorf("%d calls ran off the main thread", n)
	}
	// A goroutine locked to another thread is not main.
	locked := make(chan bool)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		locked <- mainthread.IsMain()
	}()
	if <-locked {
		t.Error("IsMain() = true on a goroutine locked to another thread")
	}
}

// TestCallFromTheMainThreadRunsInline is the deadlock of other main-thread
// packages: a call made from the main thread itself.
func TestCallFromTheMainThreadRunsInline(t *testing.T) {
	depth := 0
	taskqueue.RunSyncOnMainThread(bg, func() {
		depth++
		taskqueue.RunSyncOnMainThread(bg, func() {
			depth++
			v := 0
			taskqueue.RunSyncOnMainThread(bg, func() { v = depth })
			if v != 2 {
				t.Errorf("a nested Call read depth %d; want 2", v)
			}
			if err := taskqueue.RunSyncOnMainThread(context.Background(), func() { depth++ }); err != nil {
				t.Errorf("CallContext = %v", err)
			}
		})
	})
	if depth != 3 {
		t.Errorf("depth = %d; want 3", depth)
	}
}

// TestCallPanicReachesTheCaller: a panic in fn reaches the caller of
// RunSyncOnMainThread as a *taskqueue.PanicError with fn's stack, call after
// call, and the loop serves on; a panic in a nested call on the main thread
// reaches the nested caller.
func TestCallPanicReachesTheCaller(t *testing.T) {
	errBoom := errors.New("boom")
	for i := range 20 {
		v := testkit.PanicValue(func() {
			taskqueue.RunSyncOnMainThread(bg, func() { panic(errBoom) })
		})
		p, ok := v.(*taskqueue.PanicError)
		if !ok || !errors.Is(p, errBoom) {
			t.Fatalf("panic %d: Call panicked with %v; want a *PanicError wrapping boom", i, v)
		}
		if !strings.Contains(string(p.Stack), "TestCallPanicReachesTheCaller") {
			t.Fatalf("panic %d: stack does not show the panicking function:\n%s", i, p.Stack)
		}
	}
	// The loop serves on.
	got := ""
	taskqueue.RunSyncOnMainThread(bg, func() { got = "still serving" })
	if got != "still serving" {
		t.Errorf("after a panic, Call ran %q", got)
	}
	// A panic on the main thread's own nested call is wrapped the same way.
	taskqueue.RunSyncOnMainThread(bg, func() {
		v := testkit.PanicValue(func() {
			taskqueue.RunSyncOnMainThread(bg, func() { panic("inner") })
		})
		if p, ok := v.(*taskqueue.PanicError); !ok || p.Value != "inner" {
			t.Errorf("inline Call panicked with %v; want a *PanicError of \"inner\"", v)
		}
	})
}

// busyMain keeps the main thread busy until the returned function is called.
func busyMain(t *testing.T) (release func()) {
	t.Helper()
	started, gate := make(chan struct{}), make(chan struct{})
	if err := taskqueue.RunAsyncOnMainThread(func() { close(started); <-gate }); err != nil {
		t.Fatal(err)
	}
	<-started
	return func() { close(gate) }
}

// TestCallContextBoundsTheWait: a caller bounds its wait with a context:
// one that ends while the call waits for a busy main thread makes the call
// return ctx.Err(), and the call never runs; a context done already runs
// nothing.
func TestCallContextBoundsTheWait(t *testing.T) {
	release := busyMain(t)
	ran := false
	ctx := endsOnWatch()
	if err := taskqueue.RunSyncOnMainThread(ctx, func() { ran = true }); err != context.Canceled {
		t.Errorf("RunSyncOnMainThread whose context ended while it waited = %v; want context.Canceled", err)
	}
	release()
	taskqueue.RunSyncOnMainThread(bg, func() {}) // the canceled call was skipped by now
	if ran {
		t.Error("a canceled call ran")
	}
	if err := taskqueue.RunSyncOnMainThread(ctx, func() {}); err != context.Canceled {
		t.Errorf("RunSyncOnMainThread with a done context = %v; want context.Canceled", err)
	}
}

// endsOnWatch returns a context that is canceled the first time its Done
// channel is asked for. A caller asks for it once, as it readies the wait
// for its call, after it has checked the context (a done context runs
// nothing) and before it waits: the context ends then, as a deadline that
// passes while the call waits would, exactly and with no clock.
func endsOnWatch() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	return &watchedContext{Context: ctx, cancel: cancel}
}

type watchedContext struct {
	context.Context
	cancel context.CancelFunc
}

func (c *watchedContext) Done() <-chan struct{} {
	c.cancel()
	return c.Context.Done()
}

// TestAbandonedCallPanicGoesToTheHandler: a caller that stops waiting while
// its function runs leaves the panic to the main loom's handler.
func TestAbandonedCallPanicGoesToTheHandler(t *testing.T) {
	got := make(chan *loom.PanicError, 1)
	mainthread.Loom().Configure(loom.WithPanicHandler(func(p *loom.PanicError) { got <- p }))
	defer restoreHandler()
	started, proceed := make(chan struct{}), make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	result := make(chan error)
	go func() {
		result <- taskqueue.RunSyncOnMainThread(ctx, func() {
			close(started)
			<-proceed
			panic("after the caller left")
		})
	}()
	<-started
	cancel()
	if err := <-result; err != context.Canceled {
		t.Errorf("CallContext = %v; want Canceled", err)
	}
	close(proceed)
	if p := <-got; p.Value != "after the caller left" {
		t.Errorf("handler got %v", p.Value)
	}
}

// TestGoNeverBlocksAndKeepsOrder: RunAsyncOnMainThread never blocks,
// however busy the main thread is: posters return while it is held; the
// functions then run on the main thread, each poster's in the order it
// posted them; and a panic in one goes to the main loom's panic handler.
func TestGoNeverBlocksAndKeepsOrder(t *testing.T) {
	got := make(chan *loom.PanicError, 1)
	mainthread.Loom().Configure(loom.WithPanicHandler(func(p *loom.PanicError) { got <- p }))
	defer restoreHandler()

	release := busyMain(t)
	const posters, per = 4, 2500
	ran := make([][]int, posters) // ran[p]: poster p's functions, as they ran
	var offMain atomic.Int32
	var wg sync.WaitGroup
	for p := range posters {
		wg.Go(func() {
			for i := range per {
				if err := taskqueue.RunAsyncOnMainThread(func() {
					if !onMainThread(t) {
						offMain.Add(1)
					}
					ran[p] = append(ran[p], i) // only the main thread writes
				}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait() // returns only if no post blocked behind the busy main thread
	taskqueue.RunAsyncOnMainThread(func() { panic("async") })
	release()
	taskqueue.RunSyncOnMainThread(bg, func() {}) // posted after every function: they have run
	for p := range posters {
		if len(ran[p]) != per {
			t.Fatalf("poster %d: %d of %d functions ran", p, len(ran[p]), per)
		}
		for i, v := range ran[p] {
			if v != i {
				t.Fatalf("poster %d: function %d ran in place %d", p, v, i)
			}
		}
	}
	if n := offMain.Load(); n != 0 {
		t.Errorf("%d functions ran off the main thread", n)
	}
	if p := <-got; p.Value != "async" {
		t.Errorf("handler got %v; want the panic of the posted function", p.Value)
	}
}

// TestMainLoomScope: a scope of the main loom runs its posts and its timers
// on the main thread, as the loom does.
func TestMainLoomScope(t *testing.T) {
	s := mainthread.Loom().NewScope()
	defer s.Close()
	got := make(chan string, 2)
	if err := s.Post(func() { got <- fmt.Sprint("post on the main thread: ", mainthread.IsMain()) }); err != nil {
		t.Fatal(err)
	}
	s.PostAfter(time.Millisecond, func() { got <- fmt.Sprint("timer on the main thread: ", mainthread.IsMain()) })
	for _, want := range []string{"post on the main thread: true", "timer on the main thread: true"} {
		if g := receive(t, got, "the run of a function of a scope of the main loom"); g != want {
			t.Errorf("a scope of the main loom: %q; want %q", g, want)
		}
	}
}

func TestNilFunctionsPanic(t *testing.T) {
	for name, f := range map[string]func(){
		"Go":       func() { taskqueue.RunAsyncOnMainThread(nil) },
		"Call":     func() { taskqueue.RunSyncOnMainThread(bg, nil) },
		"Call ctx": func() { taskqueue.RunSyncOnMainThread(nil, func() {}) }, //lint:ignore SA1012 the nil context is the test

	} {
		v := func() (v any) {
			defer func() { v = recover() }()
			f()
			return nil
		}()
		if !strings.HasPrefix(fmt.Sprint(v), "taskqueue: ") {
			t.Errorf("%s(nil) panicked with %v", name, v)
		}
	}
}

// TestMainLoomCoroutines: a coroutine of the main loom runs on the main
// thread and counts as the main goroutine there, so that Call from inside it
// runs inline instead of deadlocking; and Run paces frames for it.
func TestMainLoomCoroutines(t *testing.T) {
	type report struct {
		isMain, onMain bool
		frames         int64
	}
	done := make(chan report, 1)
	taskqueue.RunAsyncOnMainThread(func() {
		l := mainthread.Loom()
		l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			start := l.Frame()
			if !yield(loom.WaitForFrames(3)) {
				return
			}
			var r report
			taskqueue.RunSyncOnMainThread(bg, func() { r.isMain = mainthread.IsMain() })
			r.onMain = onMainThread(t)
			r.frames = l.Frame() - start
			done <- r
		})
	})
	r := receive(t, done, "the resume of a coroutine of the main loom (Run does not run frames for coroutines?)")
	if !r.isMain || !r.onMain || r.frames != 3 {
		t.Errorf("in a main-loom coroutine: IsMain %v, on the main thread %v, after %d frames; want true, true, 3", r.isMain, r.onMain, r.frames)
	}
}

// CallContext with a context that is done already runs nothing and returns
// its error, on the main thread as elsewhere, as Queue.RunSync does.
func TestCallContextDoneRunsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	if err := taskqueue.RunSyncOnMainThread(ctx, func() { ran = true }); !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("off the main thread: err %v, ran %v; want context.Canceled and not run", err, ran)
	}
	var err error
	taskqueue.RunSyncOnMainThread(bg, func() { err = taskqueue.RunSyncOnMainThread(ctx, func() { ran = true }) })
	if !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("on the main thread: err %v, ran %v; want context.Canceled and not run", err, ran)
	}
}

// TestNotServedWarnsOnceAndWaits: in a program that imports this package
// but serves no main thread, work for it waits; once it has waited five
// seconds with no frame run, a warning that says how to serve the main
// thread goes to log/slog's default logger, once per process; a frame,
// when one comes, runs the work. The test runs in a child process whose
// main thread nothing serves, and there in a synctest bubble, where the
// seconds pass at once; a goroutine of the bubble runs the frame at last.
func TestNotServedWarnsOnceAndWaits(t *testing.T) {
	if os.Getenv(scenarioEnv) != notServedScenario {
		out, err := runScenarioProcess(t, notServedScenario, "-test.run=^TestNotServedWarnsOnceAndWaits$", "-test.v")
		if err != nil || !strings.Contains(out, "--- PASS: TestNotServedWarnsOnceAndWaits") {
			t.Fatalf("in a program whose main thread nothing serves: %v\n%s", err, out)
		}
		return
	}
	synctest.Test(t, func(t *testing.T) {
		var log testkit.Buffer // written by the timer's goroutine
		slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
		warnings := func() int { return strings.Count(log.String(), "nothing serves") }
		var ran atomic.Int32
		taskqueue.RunAsyncOnMainThread(func() { ran.Add(1) })
		called := make(chan error)
		go func() { called <- mainthread.Call(bg, func() error { ran.Add(1); return nil }) }()

		time.Sleep(5*time.Second - time.Nanosecond)
		synctest.Wait()
		if n := warnings(); n != 0 {
			t.Fatalf("%d warnings before the work had waited five seconds:\n%s", n, log.String())
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if n := warnings(); n != 1 || !strings.Contains(log.String(), "mainthread.Run") {
			t.Fatalf("%d warnings once the work had waited five seconds; want one that names mainthread.Run:\n%s", n, log.String())
		}

		// More work, and more waiting, warn no more; the work waits on.
		taskqueue.RunAsyncOnMainThread(func() { ran.Add(1) })
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := warnings(); n != 1 {
			t.Errorf("%d warnings after more work and a minute; want the one", n)
		}
		if n := ran.Load(); n != 0 {
			t.Fatalf("%d functions ran with no frame run", n)
		}

		mainthread.Loom().Update()
		if err := <-called; err != nil {
			t.Errorf("Call = %v once a frame ran", err)
		}
		if n := ran.Load(); n != 3 {
			t.Errorf("%d functions ran in the frame; want 3", n)
		}
	})
}
