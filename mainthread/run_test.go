//go:build !js

package mainthread_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestRunWakesForTimersOfTheMainLoom: Run wakes for a timer of the main
// loom when it falls due, and runs it on the main thread, whether the timer
// was set on the main thread, in a frame, or by another goroutine while
// the loop slept.
func TestRunWakesForTimersOfTheMainLoom(t *testing.T) {
	onMain := make(chan bool, 1)
	taskqueue.RunAsyncOnMainThread(func() {
		mainthread.Loom().PostAfter(5*time.Millisecond, func() { onMain <- mainthread.IsMain() })
	})
	if !receive(t, onMain, "the run of a timer set on the main thread (Run does not wake for timers?)") {
		t.Error("a timer set on the main thread ran off it")
	}
	tm := mainthread.Loom().PostAfter(5*time.Millisecond, func() { onMain <- mainthread.IsMain() })
	if !receive(t, onMain, "the run of a timer set by another goroutine (Run does not wake for timers?)") {
		t.Error("a timer set by another goroutine ran off the main thread")
	}
	if err := loom.Await(bg, tm); err != nil {
		t.Errorf("Await(the timer) after it ran = %v", err)
	}
}

// TestOwnFrameLoopServesWithoutRun runs a program with a frame loop of its
// own on the main thread, which updates the main loom instead of calling
// Run and sleeps until the wake function it gave the loom is called: a
// Call and a RunAsyncOnMainThread from another goroutine wake it, and run
// on the main thread.
func TestOwnFrameLoopServesWithoutRun(t *testing.T) {
	checkScenario(t, "frameloop", "a call ran on the main thread: true (<nil>); a post: true (<nil>)")
}

// TestRunOptions runs a program that calls Run with WithFrameInterval(an
// hour) and WithSpin(0): posted work and a due timer run at once, and the
// loop runs no frame they do not bring, while a coroutine waits for every
// frame; no caller polls for its outcome.
func TestRunOptions(t *testing.T) {
	checkScenario(t, "options", "20 calls ran, 20 of their callers went to wait", "(at most 3: true)")
}

// TestOptionsPanicOnBadValues: WithFrameInterval and WithSpin refuse the
// values they cannot take with a panic that names the option and the
// value, and take the values at the edges.
func TestOptionsPanicOnBadValues(t *testing.T) {
	for want, f := range map[string]func(){
		"mainthread: WithFrameInterval(0s): interval must be positive":  func() { mainthread.WithFrameInterval(0) },
		"mainthread: WithFrameInterval(-1s): interval must be positive": func() { mainthread.WithFrameInterval(-time.Second) },
		"mainthread: WithSpin(-1ns): duration must not be negative":     func() { mainthread.WithSpin(-time.Nanosecond) },
	} {
		if v := testkit.PanicValue(f); fmt.Sprint(v) != want {
			t.Errorf("panicked with %v; want %q", v, want)
		}
	}
	for name, f := range map[string]func(){
		"WithFrameInterval(1ns)": func() { mainthread.WithFrameInterval(time.Nanosecond) },
		"WithSpin(0)":            func() { mainthread.WithSpin(0) },
	} {
		if v := testkit.PanicValue(f); v != nil {
			t.Errorf("%s panicked with %v; want it taken", name, v)
		}
	}
}

// TestShutdownWithCallersWaiting runs a program whose app returns while
// other goroutines keep calling into the main thread: every call either runs
// or gets ErrClosed, and the program exits.
func TestShutdownWithCallersWaiting(t *testing.T) {
	checkScenario(t, "shutdown", "callers done")
}

// TestRunOffTheMainGoroutinePanics: Run called off the main goroutine, here
// from a test while Run serves, panics saying so, and the loop serves on.
func TestRunOffTheMainGoroutinePanics(t *testing.T) {
	v := testkit.PanicValue(func() { mainthread.Run(func() {}) })
	if fmt.Sprint(v) != "mainthread: Run called off the main goroutine" {
		t.Errorf("Run off the main goroutine panicked with %v", v)
	}
	if err := taskqueue.RunSyncOnMainThread(bg, func() {}); err != nil {
		t.Fatalf("after Run panicked, the loop does not serve: %v", err)
	}
}

// TestRunWhileServingPanics: Run called on the main thread while Run serves
// it says so, rather than that the loop has stopped.
func TestRunWhileServingPanics(t *testing.T) {
	var v any
	taskqueue.RunSyncOnMainThread(bg, func() {
		v = testkit.PanicValue(func() { mainthread.Run(func() {}) })
	})
	if want := "mainthread: Run called while Run serves the main thread: it serves once per process"; fmt.Sprint(v) != want {
		t.Errorf("Run while serving panicked with %v; want %q", v, want)
	}
}

// A second Run panics with a message instead of serving nothing.
func TestRunTwicePanics(t *testing.T) {
	checkScenario(t, "runtwice", "second Run panicked: mainthread: Run called again")
}
