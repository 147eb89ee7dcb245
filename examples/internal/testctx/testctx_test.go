package testctx_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/examples/internal/testctx"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestBeforeDeadline: with a deadline from go test (its -timeout, 10
// minutes unless set), the context ends before it; without one, the
// context has none; either way it ends when its CancelFunc is called.
func TestBeforeDeadline(t *testing.T) {
	ctx, cancel := testctx.BeforeDeadline(t, context.Background())
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
}
