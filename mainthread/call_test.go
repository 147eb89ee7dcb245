//go:build !js

package mainthread_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
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

// TestCallReturnsWhatFnReturns: Call and CallValue run fn on the main thread
// and return its error, and its value, as fn returned them.
func TestCallReturnsWhatFnReturns(t *testing.T) {
	errFn := errors.New("fn's own error")
	var onMain bool
	if err := mainthread.Call(bg, func() error { onMain = mainthread.IsMain() && onMainThread(t); return nil }); err != nil || !onMain {
		t.Fatalf("Call = %v, on the main thread %v; want nil, true", err, onMain)
	}
	if err := mainthread.Call(bg, func() error { return errFn }); err != errFn {
		t.Errorf("Call = %v; want fn's error", err)
	}
	v, err := mainthread.CallValue(bg, func() (string, error) {
		if !mainthread.IsMain() {
			return "", errors.New("off the main thread")
		}
		return "from the main thread", nil
	})
	if v != "from the main thread" || err != nil {
		t.Errorf("CallValue = %q, %v; want \"from the main thread\", nil", v, err)
	}
	// A value and an error together come back as fn returned them.
	n, err := mainthread.CallValue(bg, func() (int, error) { return 7, errFn })
	if n != 7 || err != errFn {
		t.Errorf("CallValue = %d, %v; want 7 and fn's error", n, err)
	}
}

// TestCallOnTheMainThreadRunsInline: Call, CallValue and
// RunSyncOnMainThread made from a function running on the main thread (or
// a coroutine of the main loom) run fn at once, on the caller, at any
// depth, where a queue of calls would wait for itself: the deadlock of
// other main-thread packages.
func TestCallOnTheMainThreadRunsInline(t *testing.T) {
	var order []string
	err := mainthread.Call(bg, func() error {
		order = append(order, "outer")
		if err := mainthread.Call(bg, func() error { order = append(order, "inner Call"); return nil }); err != nil {
			return err
		}
		v, err := mainthread.CallValue(bg, func() (string, error) { return "inner CallValue", nil })
		order = append(order, v)
		if err != nil {
			return err
		}
		return taskqueue.RunSyncOnMainThread(bg, func() {
			order = append(order, "inner RunSyncOnMainThread")
			if err := mainthread.Call(bg, func() error { order = append(order, "a Call in it"); return nil }); err != nil {
				t.Errorf("a Call three deep = %v", err)
			}
		})
	})
	const want = "outer, inner Call, inner CallValue, inner RunSyncOnMainThread, a Call in it"
	if got := strings.Join(order, ", "); err != nil || got != want {
		t.Fatalf("Call = %v, ran %q; want nil, %q", err, got, want)
	}
	res := make(chan string, 1)
	c := mainthread.Loom().StartCoroutine(func(yield func(loom.Instruction) bool) {
		if !yield(loom.NextFrame()) {
			return
		}
		v, err := mainthread.CallValue(bg, func() (string, error) { return "in a coroutine", nil })
		res <- fmt.Sprintf("%s %v", v, err)
	})
	if err := loom.Await(bg, c); err != nil {
		t.Fatal(err)
	}
	if got := <-res; got != "in a coroutine <nil>" {
		t.Errorf("CallValue from a coroutine of the main loom = %q; want \"in a coroutine <nil>\"", got)
	}
}

// TestCallContextDoneBefore: a context done before the call runs nothing,
// off the main thread and on it, and Call and RunSyncOnMainThread return
// its error; CallValue returns the zero value with it.
func TestCallContextDoneBefore(t *testing.T) {
	ctx, cancel := context.WithCancelCause(bg)
	cancel(errors.New("the cause"))
	var ran atomic.Bool
	if err := mainthread.Call(ctx, func() error { ran.Store(true); return nil }); err != context.Canceled || ran.Load() {
		t.Errorf("Call with a done context = %v, ran %v; want context.Canceled, not run", err, ran.Load())
	}
	if err := taskqueue.RunSyncOnMainThread(ctx, func() { ran.Store(true) }); err != context.Canceled || ran.Load() {
		t.Errorf("RunSyncOnMainThread with a done context = %v, ran %v; want context.Canceled, not run", err, ran.Load())
	}
	v, err := mainthread.CallValue(ctx, func() (int, error) { ran.Store(true); return 1, nil })
	if v != 0 || err != context.Canceled || ran.Load() {
		t.Errorf("CallValue with a done context = %d, %v, ran %v; want 0, context.Canceled, not run", v, err, ran.Load())
	}
	mainthread.Call(bg, func() error {
		err = mainthread.Call(ctx, func() error { ran.Store(true); return nil })
		return nil
	})
	if err != context.Canceled || ran.Load() {
		t.Errorf("Call on the main thread with a done context = %v, ran %v; want context.Canceled, not run", err, ran.Load())
	}
	taskqueue.RunSyncOnMainThread(bg, func() {
		err = taskqueue.RunSyncOnMainThread(ctx, func() { ran.Store(true) })
	})
	if err != context.Canceled || ran.Load() {
		t.Errorf("RunSyncOnMainThread on the main thread with a done context = %v, ran %v; want context.Canceled, not run", err, ran.Load())
	}
}

// TestCallContextEndsWhileRunning: a context that ends while fn runs makes
// Call return its error at once; fn runs on, and what it returns is dropped.
// CallValue returns the zero value, not what fn leaves behind later.
func TestCallContextEndsWhileRunning(t *testing.T) {
	ctx, cancel := context.WithCancel(bg)
	started, release := make(chan struct{}), make(chan struct{})
	var finished atomic.Bool
	res := make(chan string, 1)
	go func() {
		v, err := mainthread.CallValue(ctx, func() (string, error) {
			close(started)
			<-release
			finished.Store(true)
			return "too late", errors.New("too late")
		})
		res <- fmt.Sprintf("%q %v", v, err)
	}()
	<-started
	cancel()
	if got := <-res; got != `"" context canceled` {
		t.Errorf("CallValue whose context ended while fn ran = %s; want \"\" context canceled", got)
	}
	if finished.Load() {
		t.Error("fn finished before it was released: CallValue waited for it")
	}
	close(release)
	if err := mainthread.Call(bg, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if !finished.Load() {
		t.Error("fn did not run on after its caller left")
	}
}

// TestCallPanicReachesTheCaller: a panic in fn re-panics in the caller of
// Call, CallValue or RunSyncOnMainThread as a *taskqueue.PanicError with
// fn's stack, recovered in the main loom (its Source is "main"), call after
// call, and the loop serves on; a panic in a nested call on the main
// thread reaches the nested caller.
func TestCallPanicReachesTheCaller(t *testing.T) {
	errBoom := errors.New("boom")
	for name, call := range map[string]func(){
		"Call":                func() { mainthread.Call(bg, func() error { panic(errBoom) }) },
		"CallValue":           func() { mainthread.CallValue(bg, func() (int, error) { panic(errBoom) }) },
		"RunSyncOnMainThread": func() { taskqueue.RunSyncOnMainThread(bg, func() { panic(errBoom) }) },
	} {
		for i := range 10 {
			v := testkit.PanicValue(call)
			p, ok := v.(*taskqueue.PanicError)
			if !ok || !errors.Is(p, errBoom) || p.Source != "main" {
				t.Fatalf("%s, panic %d: panicked with %#v; want a *PanicError of boom from main", name, i, v)
			}
			if p.Error() != "panic in main: boom" {
				t.Errorf("%s's panic reads %q; want \"panic in main: boom\"", name, p.Error())
			}
			if !strings.Contains(string(p.Stack), "TestCallPanicReachesTheCaller") {
				t.Fatalf("%s's panic stack does not show fn:\n%s", name, p.Stack)
			}
		}
	}
	if v, err := mainthread.CallValue(bg, func() (string, error) { return "still serving", nil }); v != "still serving" || err != nil {
		t.Errorf("after a panic, CallValue = %q, %v", v, err)
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

// TestCallAfterTheLoopStopped runs a program whose main loop stops: when app
// returns, Run closes the main loom, running a function posted as app
// returned and ending a waiting timer with loom.ErrClosed; after that, Call
// and CallValue return an error matching taskqueue.ErrClosed, rather than
// wait forever.
func TestCallAfterTheLoopStopped(t *testing.T) {
	checkScenario(t, "callclosed",
		"after Run: the last post ran true, the timer ended with ErrClosed true",
		"closed: Call true, CallValue true 0")
}

// TestCallNilPanics: a nil function or context is a panic that names the
// call, not a hang or a nil dereference on the main thread.
func TestCallNilPanics(t *testing.T) {
	for want, f := range map[string]func(){
		"mainthread: Call with a nil function":      func() { mainthread.Call(bg, nil) },
		"mainthread: Call with a nil context":       func() { mainthread.Call(nil, func() error { return nil }) }, //lint:ignore SA1012 the nil context is the test
		"mainthread: CallValue with a nil function": func() { mainthread.CallValue[int](bg, nil) },
		"mainthread: CallValue with a nil context":  func() { mainthread.CallValue(nil, func() (int, error) { return 0, nil }) }, //lint:ignore SA1012 the nil context is the test
	} {
		if v := testkit.PanicValue(f); fmt.Sprint(v) != want {
			t.Errorf("panicked with %v; want %q", v, want)
		}
	}
}

// TestCallAllocs: a call from another goroutine allocates nothing, Call's
// and RunSyncOnMainThread's, and CallValue one record for the value.
func TestCallAllocs(t *testing.T) {
	if testkit.RaceEnabled {
		t.Skip("the race detector drops pooled call records on purpose")
	}
	nop := func() error { return nil }
	cancelable, cancel := context.WithCancel(bg)
	defer cancel()
	for _, tt := range []struct {
		name string
		want float64
		f    func()
	}{
		{"RunSyncOnMainThread", 0, func() { taskqueue.RunSyncOnMainThread(bg, func() {}) }},
		{"Call", 0, func() { mainthread.Call(bg, nop) }},
		{"CallValue", 1, func() { mainthread.CallValue(bg, func() (int, error) { return 1, nil }) }},
		// A context that can end: the caller's wait watches it, through a
		// channel that the pooled call keeps.
		{"RunSyncOnMainThread, cancelable context", 0, func() { taskqueue.RunSyncOnMainThread(cancelable, func() {}) }},
		{"Call, cancelable context", 0, func() { mainthread.Call(cancelable, nop) }},
		{"CallValue, cancelable context", 1, func() { mainthread.CallValue(cancelable, func() (int, error) { return 1, nil }) }},
	} {
		if got := testing.AllocsPerRun(100, tt.f); got != tt.want {
			t.Errorf("%s: %v allocations a call; want %v", tt.name, got, tt.want)
		}
	}
	// On the main thread, where a call runs at once, Call allocates
	// nothing either.
	var inline float64
	mainthread.Call(bg, func() error {
		inline = testing.AllocsPerRun(100, func() { mainthread.Call(bg, nop) })
		return nil
	})
	if inline != 0 {
		t.Errorf("Call on the main thread: %v allocations a call; want 0", inline)
	}
}

// TestCallStress races many callers on the real main thread, each call
// drawn at random: one that returns, one that returns an error, one that
// panics, one whose context is done before, one whose context ends at a
// random point (and whose function panics, half the time); some callers at
// once, some after a pause that lets the loop go to sleep, so that calls
// take every path (polled for, parked, made to a sleeping loop). Each call
// must end in exactly one way: fn ran once and its caller saw what it
// returned or its panic; or its caller gave it up before it started, and it
// never ran; or while it ran, and a panic of it went to the main loom's
// handler, once. Under -race it also checks that what fn wrote is seen by
// its caller.
func TestCallStress(t *testing.T) {
	callers, per := 8, 400
	if testing.Short() || testkit.RaceEnabled {
		per = 100
	}
	var handled atomic.Int64
	mainthread.Loom().Configure(loom.WithPanicHandler(func(*loom.PanicError) { handled.Add(1) }))
	defer restoreHandler()
	type outcome struct {
		ran       atomic.Int32
		panicked  atomic.Bool // fn panicked
		seen      bool        // its caller saw fn's return or panic
		abandoned bool        // its caller gave it up
	}
	var (
		wg                               sync.WaitGroup
		returned, failed, caught, gaveUp atomic.Int64
		outcomes                         = make([]*outcome, callers*per)
		errFn                            = errors.New("fn failed")
	)
	for w := range callers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range per {
				o := &outcome{}
				outcomes[w*per+i] = o
				ctx, cancel := context.WithCancel(bg)
				kind, panics := rng.IntN(5), rng.IntN(2) == 0
				if kind == 3 {
					cancel()
				}
				if kind == 4 {
					go func(n int) {
						for range n {
							runtime.Gosched()
						}
						cancel()
					}(rng.IntN(4))
				}
				if rng.IntN(8) == 0 {
					time.Sleep(time.Duration(rng.IntN(200)) * time.Microsecond) // let the loop go to sleep
				}
				want := w*per + i + 1
				var out int
				err := func() (err error) {
					defer func() {
						if v := recover(); v != nil {
							if p, ok := v.(*taskqueue.PanicError); !ok || p.Value != "stress" {
								t.Errorf("call panicked with %v", v)
							}
							caught.Add(1)
							o.seen = true
						}
					}()
					out, err = mainthread.CallValue(ctx, func() (int, error) {
						o.ran.Add(1)
						switch {
						case kind == 1:
							return 0, errFn
						case kind == 2 || kind == 4 && panics:
							o.panicked.Store(true)
							panic("stress") // for kind 4, perhaps after its caller left
						}
						return want, nil
					})
					return err
				}()
				switch {
				case o.seen:
				case err == context.Canceled:
					gaveUp.Add(1)
					o.abandoned = true
				case err == errFn:
					failed.Add(1)
					o.seen = true
				case err == nil && out == want:
					returned.Add(1)
					o.seen = true
				default:
					t.Errorf("call %d of caller %d (kind %d) = %d, %v", i, w, kind, out, err)
				}
				if o.seen && o.ran.Load() != 1 {
					t.Errorf("call %d of caller %d ran %d times, and its caller saw it", i, w, o.ran.Load())
				}
				cancel()
			}
		})
	}
	wg.Wait()
	// The main thread runs its work in turn: once a call made now has run,
	// every call given up has run or been skipped, and the panics of those
	// that ran have been posted to the handler; once a second one has, the
	// handler has seen them.
	for range 2 {
		if err := mainthread.Call(bg, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	var ranAbandoned, panicsAbandoned int64
	for _, o := range outcomes {
		switch n := o.ran.Load(); {
		case n > 1:
			t.Fatalf("a call ran %d times", n)
		case n == 1 && o.abandoned:
			ranAbandoned++
			if o.panicked.Load() {
				panicsAbandoned++
			}
		}
	}
	if total := returned.Load() + failed.Load() + caught.Load() + gaveUp.Load(); total != int64(callers*per) {
		t.Errorf("%d outcomes for %d calls", total, callers*per)
	}
	if handled.Load() != panicsAbandoned {
		t.Errorf("the handler saw %d panics; %d calls given up while they ran panicked", handled.Load(), panicsAbandoned)
	}
	t.Logf("%d calls: %d returned, %d failed, %d panicked, %d given up (%d of them while they ran, %d panicking)",
		callers*per, returned.Load(), failed.Load(), caught.Load(), gaveUp.Load(), ranAbandoned, panicsAbandoned)
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
