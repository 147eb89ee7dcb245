package mainthread_test

import (
	"context"
	"log"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestMain runs the tests under Run, so that the main thread serves them;
// the tests run on other goroutines. A test that needs a fresh process (to
// watch the main loop stop) runs this binary again with a scenario in the
// environment: a program of scenario_test.go, or, for notServedScenario,
// the tests that -test.run names, with nothing serving the main thread.
func TestMain(m *testing.M) {
	switch s := os.Getenv(scenarioEnv); s {
	case "":
	case notServedScenario:
		goleak.VerifyTestMain(m, testkit.LeakOptions()...) // nothing serves the main thread
	default:
		os.Exit(runScenario(s))
	}
	mainthread.Run(func() {
		// IgnoreCurrent: the main goroutine serving Run is not a leak.
		goleak.VerifyTestMain(m, testkit.LeakOptions(goleak.IgnoreCurrent())...)
	})
}

// The real main thread is never in a testing/synctest bubble, so the tests
// that wait for it, or for a child process, cannot have a hang reported as
// a deadlock of a bubble. They wait without a bound of their own, on a
// busy machine as long as it takes, but not past testkit.BeforeDeadline: a
// hang then fails the test that hangs, saying what it waited for (and, for
// a child, what the child printed), where go test would end the whole
// binary at its -timeout.

// receive returns the next value from ch, or fails the test, saying that
// what never came, if none comes before testkit.BeforeDeadline's context
// ends.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	ctx, cancel := testkit.BeforeDeadline(t, context.Background())
	defer cancel()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("%s never came, by a little before the test binary's deadline", what)
		var zero T
		return zero
	}
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

// restoreHandler gives the main loom back a handler like the default one.
func restoreHandler() {
	mainthread.Loom().Configure(loom.WithPanicHandler(func(p *loom.PanicError) { log.Printf("loom: action %v", p) }))
}
