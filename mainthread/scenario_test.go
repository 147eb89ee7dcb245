package mainthread_test

import (
	"errors"
	"fmt"
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
