package testkit_test

import (
	"context"
	"runtime/pprof"
	"testing"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
)

// TestLabels: Labels reads the calling goroutine's labels, not another's.
func TestLabels(t *testing.T) {
	other := make(chan struct{})
	defer close(other)
	pprof.Do(context.Background(), pprof.Labels("other", "1"), func(context.Context) {
		go func() { <-other }() // a goroutine with labels of its own, and a stack of its own
	})
	if got := testkit.Labels(); got != "{}" {
		t.Errorf("Labels() without labels = %s; want {}", got)
	}
	pprof.Do(context.Background(), pprof.Labels("queue", "q", "user", "u"), func(context.Context) {
		if got, want := testkit.Labels(), `{"queue":"q", "user":"u"}`; got != want {
			t.Errorf("Labels() = %s; want %s", got, want)
		}
	})
}
