// Package testctx gives the examples' tests a context for work they wait
// for outside their own goroutines: a child process, a browser.
package testctx

import (
	"context"
	"testing"
	"time"
)

// BeforeDeadline returns a context, derived from parent, that ends a
// little before t's deadline (go test's -timeout) if t has one: a tenth of
// the time left, at most 30 s, before it. A child process or a browser
// that hangs is then stopped while the test can still report what it
// printed, rather than the test binary being killed. It sets no bound of
// its own: on a busy machine the work takes what it takes. The caller must
// call the CancelFunc, as with context.WithDeadline.
func BeforeDeadline(t *testing.T, parent context.Context) (context.Context, context.CancelFunc) {
	d, ok := t.Deadline()
	if !ok {
		return context.WithCancel(parent)
	}
	return context.WithDeadline(parent, d.Add(-min(30*time.Second, time.Until(d)/10)))
}
