package taskqueue_test

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// Docs: "Queues use the time package directly, so code that uses them is
// tested with testing/synctest: create the queue inside the bubble". In a
// bubble, a task of a serial queue starts two helpers that call RunSync with
// its context: one function holds the task's place until released, so the
// other waits for its turn ("Functions run in one task's place take turns").
// synctest.Wait must then return, since every goroutine of the bubble waits
// for something only the bubble can do. A queue whose turn-taking waits in a
// way synctest does not see as durable (a sync.Mutex or sync.Cond) makes
// synctest.Wait hang forever. The scenario runs in a child process with a
// test timeout, so that a hang fails this test instead of the whole run.
func TestOutside3InPlaceTurnIsDurableForSynctest(t *testing.T) {
	// js/wasm starts no processes: there the scenario runs in this one, and
	// a hang is the test binary's timeout.
	if os.Getenv("O3_SYNCTEST_CHILD") == "1" || runtime.GOOS == "js" {
		synctest.Test(t, func(t *testing.T) {
			q := taskqueue.NewSerial()
			release := make(chan struct{})
			var ran sync.WaitGroup
			ran.Add(2)
			h := q.RunAsync(context.Background(), func(tctx context.Context) error {
				var wg sync.WaitGroup
				for k := 0; k < 2; k++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := q.RunSync(tctx, func(context.Context) error {
							ran.Done()
							<-release
							return nil
						}); err != nil {
							t.Errorf("RunSync: %v", err)
						}
					}()
				}
				wg.Wait()
				return nil
			})
			synctest.Wait() // hangs if the waiting helper is not durably blocked
			close(release)
			ran.Wait()
			if err := h.Wait(context.Background()); err != nil {
				t.Error(err)
			}
		})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOutside3InPlaceTurnIsDurableForSynctest$", "-test.timeout=20s", "-test.count=1")
	cmd.Env = append(os.Environ(), "O3_SYNCTEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		s := string(out)
		if i := strings.Index(s, "\ngoroutine "); i > 0 {
			s = s[:i]
		}
		if len(s) > 600 {
			s = s[:600]
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "takeTurn") || strings.Contains(line, "sync.(*") || strings.Contains(line, "sync.runtime_") {
				s += "\n  " + strings.TrimSpace(line)
			}
		}
		t.Errorf("synctest.Wait with one in-place RunSync waiting its turn behind another: %v\n%s", err, s)
	}
}
