package testkit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
)

// TestBeforeDeadline: with a deadline from go test (its -timeout, 10
// minutes unless set), the context ends before it; without one, the
// context has none; either way it ends when its CancelFunc is called, and
// when its parent ends.
func TestBeforeDeadline(t *testing.T) {
	ctx, cancel := testkit.BeforeDeadline(t, context.Background())
	d, ok := t.Deadline()
	cd, cok := ctx.Deadline()
	switch {
	case ok && (!cok || !cd.Before(d)):
		t.Errorf("the test's deadline is %v; the context's is %v (set: %v), want one before it", d, cd, cok)
	case !ok && cok:
		t.Errorf("the test has no deadline; the context has %v, want none", cd)
	}
	if ctx.Err() != nil {
		t.Errorf("the context is done at once: %v", ctx.Err())
	}
	cancel()
	if ctx.Err() != context.Canceled {
		t.Errorf("after cancel, Err() = %v; want context.Canceled", ctx.Err())
	}

	parent, cancelParent := context.WithCancel(context.Background())
	child, cancel := testkit.BeforeDeadline(t, parent)
	defer cancel()
	cancelParent()
	if child.Err() != context.Canceled {
		t.Errorf("after its parent ended, Err() = %v; want context.Canceled", child.Err())
	}

	// A benchmark has no deadline: the context has none either.
	b := &testing.B{}
	bctx, cancel := testkit.BeforeDeadline(b, context.Background())
	defer cancel()
	if d, ok := bctx.Deadline(); ok {
		t.Errorf("for a benchmark, the context has deadline %v; want none", d)
	}
}

// TestNoDeadline: a NoDeadline runs as the test it holds, but is not a
// *testing.T, the type rapid asks for a deadline.
func TestNoDeadline(t *testing.T) {
	var tb testing.TB = testkit.NoDeadline{T: t}
	if _, ok := tb.(*testing.T); ok {
		t.Error("a NoDeadline is a *testing.T")
	}
	if tb.Name() != t.Name() {
		t.Errorf("Name() = %q; want the test's, %q", tb.Name(), t.Name())
	}
}

// childEnv makes TestChildProcess, run by TestRunChild in a child
// process, print the variable's value and exit with status 3.
const childEnv = "TESTKIT_TEST_CHILD"

// TestChildProcess is the child's side of TestRunChild; run as a test of
// its own, with no childEnv, it does nothing.
func TestChildProcess(t *testing.T) {
	if v := os.Getenv(childEnv); v != "" {
		fmt.Printf("the child got %q", v)
		os.Exit(3)
	}
}

// TestRunChild: the child is this test binary, with the environment given
// added, running the tests that args name (none if no args); what it
// prints and how it exits come back.
func TestRunChild(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("js/wasm runs no child processes")
	}
	out, err := testkit.RunChild(t, []string{childEnv + "=hello"}, "-test.run=^TestChildProcess$")
	var exit *exec.ExitError
	if string(out) != `the child got "hello"` || !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("RunChild = %q, %v; want the child's words and exit status 3", out, err)
	}
	out, err = testkit.RunChild(t, []string{childEnv + "=hello"})
	if err != nil || strings.Contains(string(out), "the child got") {
		t.Errorf("RunChild with no args ran a test, or failed: %v:\n%s", err, out)
	}
}
