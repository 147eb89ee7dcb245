package testkit

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// BeforeDeadline returns a context, derived from parent, that ends a little
// before t's deadline (go test's -timeout) if t has one: a tenth of the time
// left, at most 30 s, before it. Without a deadline, it ends only when
// parent does or when it is canceled.
//
// It is for tests that wait on what no testing/synctest bubble can hold,
// such as the real main thread, a child process or a browser: such a wait
// has no bound of its own (on a busy machine the work takes what it
// takes), but a hang ends a little before the deadline, while the test can
// still say what it waited for, rather than go test ending the whole
// binary. The caller must call the CancelFunc, as with
// context.WithDeadline.
func BeforeDeadline(t testing.TB, parent context.Context) (context.Context, context.CancelFunc) {
	d, ok := deadline(t)
	if !ok {
		return context.WithCancel(parent)
	}
	return context.WithDeadline(parent, d.Add(-min(30*time.Second, time.Until(d)/10)))
}

// deadline returns t's deadline, if t has one: *testing.T has Deadline,
// *testing.B and *testing.F do not.
func deadline(t testing.TB) (time.Time, bool) {
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		return dt.Deadline()
	}
	return time.Time{}, false
}

// NoDeadline holds a *testing.T for rapid.Check inside a testing/synctest
// bubble: given a *testing.T, rapid asks it for the test's deadline, a
// call a bubble forbids; given a NoDeadline, which is not one, it bounds
// its run by its own default.
type NoDeadline struct{ *testing.T }

// RunChild runs the test binary again, in a child process whose
// environment is the test's with env added ("NAME=value" entries), with
// args, or "-test.run=^$" (no tests) if there are none, and returns what
// the child printed, stdout and stderr together, and its error. It is for
// what a test cannot do in its own process: a program that needs the main
// goroutine, or one whose main loop the test watches stop. The child is
// killed a little before t's deadline (BeforeDeadline), so that the test
// fails with what it printed rather than the binary ending, and no child
// outlives it; it has no bound of its own.
func RunChild(t testing.TB, env []string, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := BeforeDeadline(t, context.Background())
	defer cancel()
	if len(args) == 0 {
		args = []string{"-test.run=^$"}
	}
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), env...)
	return cmd.CombinedOutput()
}
