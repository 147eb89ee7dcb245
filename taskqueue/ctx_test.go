package taskqueue_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestAwaitedPanicsGoToTheHandleAlone: a task submitted with Awaited that
// panics before anyone waits is not reported to the panic handler: its
// handle alone holds the panic, for the Wait that comes. Without the mark,
// such a panic went to both, in a race with the Wait. What an awaited task
// submits with its own context is not marked: its unawaited panic is
// reported.
func TestAwaitedPanicsGoToTheHandleAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reported testkit.Panics[*taskqueue.PanicError]
		q := taskqueue.NewConcurrent(2, taskqueue.WithPanicHandler(reported.Add))
		ctx := taskqueue.Awaited(t.Context())
		var inner *taskqueue.Handle
		h := q.RunAsync(ctx, func(tctx context.Context) error {
			inner = q.RunAsync(tctx, func(context.Context) error { panic("inner") })
			panic("boom")
		})
		f := taskqueue.RunAsync(ctx, q, func(context.Context) (int, error) { panic("typed") })
		synctest.Wait() // every task has panicked; nobody waited yet
		var pe *taskqueue.PanicError
		if err := h.Wait(t.Context()); !errors.As(err, &pe) || pe.Value != "boom" {
			t.Errorf("Wait = %v; want the task's *PanicError", err)
		}
		if _, err := f.Wait(t.Context()); !errors.As(err, &pe) || pe.Value != "typed" {
			t.Errorf("Future.Wait = %v; want the task's *PanicError", err)
		}
		got := reported.Take()
		if len(got) != 1 || got[0].Value != "inner" {
			t.Errorf("the panic handler saw %v; want only the panic of the unmarked inner task", got)
		}
		if inner.Err() == nil {
			t.Error("the inner task's handle has no error")
		}
		q.Close()
	})
	var none context.Context
	if msg := testkit.PanicMessage(func() { taskqueue.Awaited(none) }); msg != "taskqueue: Awaited(nil)" {
		t.Errorf("Awaited(nil) panicked with %q", msg)
	}
}
