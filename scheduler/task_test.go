package scheduler_test

import (
	"context"
	"testing"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

func TestEnqueueNilPanics(t *testing.T) {
	s := scheduler.New(1)
	for name, f := range map[string]func(){
		"Enqueue":        func() { s.Enqueue(nil) },
		"EnqueueContext": func() { s.EnqueueContext(context.Background(), nil) },
		"Barrier":        func() { scheduler.Barrier(nil) },
		"TryEnqueue":     func() { s.TryEnqueue(nil) },
	} {
		want := "scheduler: " + name + "(nil)"
		if got := testkit.PanicMessage(f); got != want {
			t.Errorf("%s(nil) panicked with %q; want %q", name, got, want)
		}
	}
}
