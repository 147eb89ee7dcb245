package mainthread_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

const scenarioEnv = "MAINTHREAD_TEST_SCENARIO"

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
	}
	fmt.Fprintln(os.Stderr, "unknown scenario", name)
	return 2
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

// callClosedScenario: once Run has returned, Call and CallValue from another
// goroutine return an error matching taskqueue.ErrClosed (and CallValue the
// zero value), at once.
func callClosedScenario() int {
	mainthread.Run(func() {})
	res := make(chan string)
	go func() {
		err := mainthread.Call(bg, func() error { return nil })
		v, verr := mainthread.CallValue(bg, func() (int, error) { return 1, nil })
		res <- fmt.Sprintf("closed: Call %v, CallValue %v %d (%v)", errors.Is(err, taskqueue.ErrClosed), errors.Is(verr, taskqueue.ErrClosed), v, err)
	}()
	fmt.Println(<-res)
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
