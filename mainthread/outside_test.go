//go:build !js

package mainthread_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// Call runs fn on the main thread; a Call from there runs inline; IsMain tells
// them apart; a coroutine of the main loom runs on the main thread.
func TestOutsideCallInlineAndIsMain(t *testing.T) {
	ctx := context.Background()
	if mainthread.IsMain() {
		t.Fatal("IsMain true on a test goroutine")
	}
	var outer, inner, nestedInline bool
	err := taskqueue.RunSyncOnMainThread(ctx, func() {
		outer = mainthread.IsMain()
		ran := false
		if err := taskqueue.RunSyncOnMainThread(ctx, func() { ran = true; inner = mainthread.IsMain() }); err != nil {
			t.Error(err)
		}
		nestedInline = ran
	})
	if err != nil {
		t.Fatal(err)
	}
	if !outer || !inner || !nestedInline {
		t.Errorf("outer IsMain %v, inner IsMain %v, nested ran inline %v", outer, inner, nestedInline)
	}
	res := make(chan bool, 1)
	c := mainthread.Loom().StartCoroutine(func(yield func(loom.Instruction) bool) {
		a := mainthread.IsMain()
		yield(loom.NextFrame())
		res <- a && mainthread.IsMain()
	})
	if err := loom.Await(ctx, c); err != nil {
		t.Fatal(err)
	}
	if !<-res {
		t.Errorf("a coroutine of the main loom did not run on the main thread")
	}
	// A goroutine locked to another thread is not main.
	done := make(chan bool)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		done <- mainthread.IsMain()
	}()
	if <-done {
		t.Errorf("IsMain true on a locked non-main thread")
	}
}

// A panic in Call reaches the caller as a *PanicError and the loop goes on; a
// done context runs nothing, even from the main thread.
func TestOutsideCallPanicAndDoneContext(t *testing.T) {
	ctx := context.Background()
	for range 20 {
		func() {
			defer func() {
				r := recover()
				pe, ok := r.(*taskqueue.PanicError)
				if !ok || fmt.Sprint(pe.Value) != "main boom" || len(pe.Stack) == 0 {
					t.Errorf("Call panic: %T %v", r, r)
				}
			}()
			taskqueue.RunSyncOnMainThread(ctx, func() { panic("main boom") })
			t.Error("Call returned after fn panicked")
		}()
	}
	if err := taskqueue.RunSyncOnMainThread(ctx, func() {}); err != nil {
		t.Fatalf("loop did not go on: %v", err)
	}
	dctx, cancel := context.WithCancel(ctx)
	cancel()
	var ran atomic.Bool
	if err := taskqueue.RunSyncOnMainThread(dctx, func() { ran.Store(true) }); !errors.Is(err, context.Canceled) || ran.Load() {
		t.Errorf("Call with a done context: %v ran %v", err, ran.Load())
	}
	var ranInline atomic.Bool
	var inlineErr error
	taskqueue.RunSyncOnMainThread(ctx, func() {
		inlineErr = taskqueue.RunSyncOnMainThread(dctx, func() { ranInline.Store(true) })
	})
	if !errors.Is(inlineErr, context.Canceled) || ranInline.Load() {
		t.Errorf("Call from the main thread with a done context: %v ran %v", inlineErr, ranInline.Load())
	}
	// A nested call's panic reaches the nested caller, on the main thread.
	var nested any
	taskqueue.RunSyncOnMainThread(ctx, func() {
		defer func() { nested = recover() }()
		taskqueue.RunSyncOnMainThread(ctx, func() { panic("nested") })
	})
	if _, ok := nested.(*taskqueue.PanicError); !ok {
		t.Errorf("nested inline Call panic: %T %v", nested, nested)
	}
}

// Call whose context ends while fn runs returns ctx.Err() at once; fn runs on.
func TestOutsideCallContextEndsWhileRunning(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	release := make(chan struct{})
	var finished atomic.Bool
	res := make(chan error, 1)
	go func() {
		res <- taskqueue.RunSyncOnMainThread(ctx, func() {
			close(started)
			<-release
			finished.Store(true)
		})
	}()
	<-started
	cancel()
	err := <-res // must return while fn is still blocked on release
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Call whose context ended while fn ran: %v", err)
	}
	if finished.Load() {
		t.Errorf("fn finished before release")
	}
	close(release)
	if err := taskqueue.RunSyncOnMainThread(context.Background(), func() {}); err != nil {
		t.Fatal(err)
	}
	if !finished.Load() {
		t.Errorf("fn did not run on")
	}
}

// Go never blocks however busy the main thread is, and its functions run in the
// order they were posted, on the main thread.
func TestOutsideGoNeverBlocksAndKeepsOrder(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	busy := make(chan struct{})
	go taskqueue.RunSyncOnMainThread(ctx, func() { close(busy); <-release })
	<-busy
	const posters, per = 4, 5000
	var mu sync.Mutex
	got := make([][]int, posters)
	var notMain atomic.Int32
	var wg sync.WaitGroup
	for p := range posters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				if err := taskqueue.RunAsyncOnMainThread(func() {
					if !mainthread.IsMain() {
						notMain.Add(1)
					}
					mu.Lock()
					got[p] = append(got[p], i)
					mu.Unlock()
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait() // returns only if Go never blocked behind the busy main thread
	close(release)
	if err := taskqueue.RunSyncOnMainThread(ctx, func() {}); err != nil {
		t.Fatal(err)
	}
	// The Call was posted after every Go, so they have all run.
	mu.Lock()
	defer mu.Unlock()
	for p := range posters {
		if len(got[p]) != per {
			t.Fatalf("poster %d: %d of %d ran", p, len(got[p]), per)
		}
		for i, v := range got[p] {
			if v != i {
				t.Fatalf("poster %d: out of order at %d: %d", p, i, v)
			}
		}
	}
	if notMain.Load() != 0 {
		t.Errorf("%d Go functions ran off the main thread", notMain.Load())
	}
}

// Run a second time, or off the main goroutine, panics with a clear message.
func TestOutsideRunTwicePanics(t *testing.T) {
	var r any
	func() {
		defer func() { r = recover() }()
		mainthread.Run(func() {})
	}()
	if r == nil {
		t.Fatal("Run from a test goroutine while Run serves did not panic")
	}
	if !strings.Contains(fmt.Sprint(r), "mainthread") {
		t.Errorf("panic %q does not name the package", fmt.Sprint(r))
	}
	if err := taskqueue.RunSyncOnMainThread(context.Background(), func() {}); err != nil {
		t.Fatal(err)
	}
}

// Options refuse the values they cannot take with a panic that names the
// option and the value.
func TestOutsideOptionPanics(t *testing.T) {
	for want, f := range map[string]func(){
		"mainthread: WithFrameInterval(0s): interval must be positive":  func() { mainthread.WithFrameInterval(0) },
		"mainthread: WithFrameInterval(-1s): interval must be positive": func() { mainthread.WithFrameInterval(-time.Second) },
		"mainthread: WithSpin(-1ns): duration must not be negative":     func() { mainthread.WithSpin(-time.Nanosecond) },
	} {
		v := func() (v any) {
			defer func() { v = recover() }()
			f()
			return nil
		}()
		if fmt.Sprint(v) != want {
			t.Errorf("panicked with %v; want %q", v, want)
		}
	}
	// The values at the edges are taken.
	mainthread.WithFrameInterval(time.Nanosecond)
	mainthread.WithSpin(0)
}

// Timers of the main loom run on the main thread once due. The wait has
// no bound of its own (see beforeDeadline).
func TestOutsideMainLoomTimer(t *testing.T) {
	onMain := make(chan bool, 1)
	tm := mainthread.Loom().PostAfter(5*time.Millisecond, func() { onMain <- mainthread.IsMain() })
	ctx, cancel := beforeDeadline(t)
	defer cancel()
	if err := loom.Await(ctx, tm); err != nil {
		t.Fatalf("waiting for a timer of the main loom: %v", err)
	}
	if !<-onMain {
		t.Errorf("main loom timer ran off the main thread")
	}
}
