package mainthread_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

const scenarioEnv = "MAINTHREAD_TEST_SCENARIO"

// notServedScenario makes the test binary run tests, those that -test.run
// names, without serving the main thread (see TestMain): a program that
// imports this package and serves nothing.
const notServedScenario = "notserved"

// runScenario runs a program in this process and returns its exit code.
func runScenario(name string) int {
	switch name {
	case "shutdown":
		return shutdownScenario()
	case "runtwice":
		return runTwiceScenario()
	case "callclosed":
		return callClosedScenario()
	case "panicreport":
		return panicReportScenario()
	case "frameloop":
		return frameLoopScenario()
	case "options":
		return optionsScenario()
	}
	fmt.Fprintln(os.Stderr, "unknown scenario", name)
	return 2
}

// runScenarioProcess runs this test binary again on the scenario name (see
// TestMain) and returns what it printed (testkit.RunChild). The child runs
// the scenario's program, given no args; with args, for notServedScenario,
// the tests they name.
func runScenarioProcess(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	out, err := testkit.RunChild(t, []string{scenarioEnv + "=" + name}, args...)
	return string(out), err
}

// checkScenario runs the program of scenario name in a child process and
// fails the test unless it succeeds and prints each of want.
func checkScenario(t *testing.T, name string, want ...string) {
	t.Helper()
	out, err := runScenarioProcess(t, name)
	if err != nil {
		t.Fatalf("scenario %s failed: %v\n%s", name, err, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("scenario %s's output lacks %q:\n%s", name, w, out)
		}
	}
}

// shutdownScenario: callers keep calling while app returns. Each call must
// either run or report ErrClosed; none may hang (the parent test's deadline
// catches a hang).
func shutdownScenario() int {
	var wg sync.WaitGroup
	var ran, closed, other atomic.Int64
	started := make(chan struct{})
	var once sync.Once
	mainthread.Run(func() {
		for range 8 {
			wg.Go(func() {
				for {
					err := taskqueue.RunSyncOnMainThread(bg, func() { ran.Add(1) })
					if err == nil {
						once.Do(func() { close(started) })
					}
					switch {
					case err == nil:
					case errors.Is(err, taskqueue.ErrClosed):
						closed.Add(1)
						if !errors.Is(taskqueue.RunAsyncOnMainThread(func() {}), taskqueue.ErrClosed) {
							other.Add(1)
						}
						return
					default:
						other.Add(1)
						return
					}
				}
			})
		}
		<-started // app returns while the callers call
	})
	wg.Wait()
	fmt.Printf("ran %d, closed %d, other %d\n", ran.Load(), closed.Load(), other.Load())
	if closed.Load() != 8 || other.Load() != 0 {
		return 1
	}
	fmt.Println("callers done")
	return 0
}

// runTwiceScenario: Run returns, and a second Run must panic with a message.
func runTwiceScenario() int {
	mainthread.Run(func() {})
	defer func() {
		fmt.Printf("second Run panicked: %v\n", recover())
	}()
	mainthread.Run(func() {})
	fmt.Println("second Run returned")
	return 1
}

// callClosedScenario: when app returns, Run closes the main loom: a
// function posted as app returned runs, and a timer still waiting ends with
// loom.ErrClosed; once Run has returned, Call and CallValue from another
// goroutine return an error matching taskqueue.ErrClosed (and CallValue the
// zero value), at once.
func callClosedScenario() int {
	var posted atomic.Bool
	var tm *loom.Timer
	mainthread.Run(func() {
		tm = mainthread.Loom().PostAfter(time.Hour, func() {})
		// The main thread runs a function until app is about to return, and
		// app posts one more then: it runs in the next frame, or, once Run
		// has seen app return, when Run closes the loom.
		started, gate := make(chan struct{}), make(chan struct{})
		taskqueue.RunAsyncOnMainThread(func() { close(started); <-gate })
		<-started
		taskqueue.RunAsyncOnMainThread(func() { posted.Store(true) })
		close(gate)
	})
	fmt.Printf("after Run: the last post ran %v, the timer ended with ErrClosed %v\n", posted.Load(), tm.IsDone() && errors.Is(tm.Err(), loom.ErrClosed))
	res := make(chan string)
	go func() {
		err := mainthread.Call(bg, func() error { return nil })
		v, verr := mainthread.CallValue(bg, func() (int, error) { return 1, nil })
		res <- fmt.Sprintf("closed: Call %v, CallValue %v %d (%v)", errors.Is(err, taskqueue.ErrClosed), errors.Is(verr, taskqueue.ErrClosed), v, err)
	}()
	fmt.Println(<-res)
	return 0
}

// frameLoopScenario: a program with a frame loop of its own on the main
// thread, as a GLFW renderer has, does not call Run. Its loop sleeps, as in
// glfw.WaitEvents, until the wake function it gave the main loom is called,
// then updates the main loom. Call and RunAsyncOnMainThread from another
// goroutine wake it, and their functions run on the main thread.
func frameLoopScenario() int {
	wake := make(chan struct{}, 1)
	l := mainthread.Loom()
	l.Configure(loom.WithWakeFunc(func() { // glfw.PostEmptyEvent
		select {
		case wake <- struct{}{}:
		default:
		}
	}))
	res := make(chan string)
	go func() {
		called, err := mainthread.CallValue(bg, func() (bool, error) { return mainthread.IsMain(), nil })
		posted := make(chan bool, 1)
		perr := taskqueue.RunAsyncOnMainThread(func() { posted <- mainthread.IsMain() })
		res <- fmt.Sprintf("a call ran on the main thread: %v (%v); a post: %v (%v)", called, err, <-posted, perr)
	}()
	for {
		select {
		case r := <-res:
			fmt.Println(r)
			return 0
		case <-wake: // glfw.WaitEvents
			l.Update()
		}
	}
}

// optionsScenario: Run with WithFrameInterval(time.Hour) and WithSpin(0).
// A coroutine of the main loom waits for every frame, so Run paces frames
// at the interval; posted work and a due timer run at once all the same.
// Over a tenth of a second in which the only work is a timer, the
// coroutine sees the frame that arms the timer, perhaps one that the new
// earliest timer wakes, and the frame that runs it: not the six a 60 Hz
// pace would add, nor the thousands of a loop that spins. With WithSpin(0),
// no caller polls for its outcome: each goes to wait.
func optionsScenario() int {
	var frames atomic.Int64 // the frames the coroutine has seen
	var report string
	mainthread.Run(func() {
		taskqueue.RunAsyncOnMainThread(func() {
			mainthread.Loom().StartCoroutine(func(yield func(loom.Instruction) bool) {
				for yield(loom.NextFrame()) {
					frames.Add(1)
				}
			})
		})
		waits0, _ := mainthread.Counters()
		const calls = 20
		for range calls {
			if err := mainthread.Call(bg, func() error { return nil }); err != nil {
				report = fmt.Sprint("a call failed: ", err)
				return
			}
		}
		waits, _ := mainthread.Counters()
		quiet := make(chan int64)
		mainthread.Call(bg, func() error {
			before := frames.Load()
			mainthread.Loom().PostAfter(100*time.Millisecond, func() { quiet <- frames.Load() - before })
			return nil
		})
		seen := <-quiet
		report = fmt.Sprintf("%d calls ran, %d of their callers went to wait; frames seen in 100ms with only a timer due: %d (at most 3: %v)",
			calls, waits-waits0, seen, seen <= 3)
	}, mainthread.WithFrameInterval(time.Hour), mainthread.WithSpin(0))
	fmt.Println(report)
	return 0
}

// panicReportScenario: a panic of a function posted to the main loom, which
// no caller sees, is reported by the default handler through log/slog with
// the loom's name, "main".
func panicReportScenario() int {
	dropStack := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "stack" || a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: dropStack})))
	mainthread.Run(func() {
		done := make(chan struct{})
		taskqueue.RunAsyncOnMainThread(func() { panic("boom") })
		taskqueue.RunAsyncOnMainThread(func() { close(done) })
		<-done
	})
	return 0
}
