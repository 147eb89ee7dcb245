//go:build !js

package mainthread_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestCallRunsOnTheMainThread: the package's init keeps the main goroutine
// on the main OS thread, where Run serves calls: a call, from one goroutine
// or from many at once, runs there, and IsMain says so; IsMain is false on
// any other goroutine, one locked to another thread included.
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

// TestMainLoomPanicsSayMain: the main loom is named "main", so that the
// panics it reports say where they come from: the Source of a posted
// function's panic, and the default report through log/slog.
func TestMainLoomPanicsSayMain(t *testing.T) {
	got := make(chan *loom.PanicError, 1)
	mainthread.Loom().Configure(loom.WithPanicHandler(func(p *loom.PanicError) { got <- p }))
	defer restoreHandler()
	if err := taskqueue.RunAsyncOnMainThread(func() { panic("boom") }); err != nil {
		t.Fatal(err)
	}
	if p := <-got; p.Source != "main" || p.Error() != "panic in main: boom" {
		t.Errorf("the main loom reported %q from %q; want \"panic in main: boom\" from \"main\"", p.Error(), p.Source)
	}

	// The default report, through log/slog, names loom=main.
	checkScenario(t, "panicreport", `msg="loom: a callback panicked" loom=main panic=boom`)
}
