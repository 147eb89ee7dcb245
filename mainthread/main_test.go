package mainthread_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/internal/testkit"

	"github.com/taskqueue-go/taskqueue/mainthread"
)

// TestMain runs the tests under Run, so that the main thread serves them;
// the tests run on other goroutines. A test that needs a fresh process (to
// watch the main loop stop) runs this binary again with a scenario in the
// environment.
func TestMain(m *testing.M) {
	if s := os.Getenv(scenarioEnv); s != "" {
		os.Exit(runScenario(s))
	}
	mainthread.Run(func() {
		// IgnoreCurrent: the main goroutine serving Run is not a leak.
		goleak.VerifyTestMain(m, testkit.LeakOptions(goleak.IgnoreCurrent())...)
	})
}
