package taskqueue_test

import (
	"context"
	"errors"
	"testing"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestNilContextPanicsNamingTheCall: every call that takes a context panics
// on a nil one, naming itself, before it queues or waits for anything.
func TestNilContextPanicsNamingTheCall(t *testing.T) {
	q := taskqueue.NewConcurrent(2)
	k := taskqueue.NewKeyed[int](q)
	var none context.Context // a nil context; a nil literal is what staticcheck forbids
	ctx := context.Background()
	nop := func(context.Context) error { return nil }
	one := func(context.Context) (int, error) { return 1, nil }
	h := q.RunAsync(ctx, nop)
	f := taskqueue.RunAsync(ctx, q, one)
	g := taskqueue.NewGroup(ctx, q)
	gof := taskqueue.NewGroupOf[int](ctx, q)
	checkMisuses(t, []misuse{
		{"RunSync", func() { q.RunSync(none, nop) }, "taskqueue: RunSync with a nil context"},
		{"generic RunSync", func() { taskqueue.RunSync(none, q, one) }, "taskqueue: RunSync with a nil context"},
		{"RunAsync", func() { q.RunAsync(none, nop) }, "taskqueue: RunAsync with a nil context"},
		{"generic RunAsync", func() { taskqueue.RunAsync(none, q, one) }, "taskqueue: RunAsync with a nil context"},
		{"RunAfter", func() { q.RunAfter(none, 1, nop) }, "taskqueue: RunAfter with a nil context"},
		{"generic RunAfter", func() { taskqueue.RunAfter(none, q, 1, one) }, "taskqueue: RunAfter with a nil context"},
		{"RunBarrier", func() { q.RunBarrier(none, nop) }, "taskqueue: RunBarrier with a nil context"},
		{"Shutdown", func() { taskqueue.NewSerial().Shutdown(none) }, "taskqueue: Shutdown with a nil context"},
		{"Handle.Wait", func() { h.Wait(none) }, "taskqueue: Handle.Wait with a nil context"},
		{"Handle.Then", func() { h.Then(none, q, nop) }, "taskqueue: Handle.Then with a nil context"},
		{"Future.Wait", func() { f.Wait(none) }, "taskqueue: Future.Wait with a nil context"},
		{"Then", func() {
			taskqueue.Then(none, f, q, func(context.Context, int) (int, error) { return 0, nil })
		}, "taskqueue: Then with a nil context"},
		{"Apply", func() { taskqueue.Apply(none, q, 1, func(int) {}) }, "taskqueue: Apply with a nil context"},
		{"Map", func() {
			taskqueue.Map(none, q, []int{1}, func(context.Context, int) (int, error) { return 0, nil })
		}, "taskqueue: Map with a nil context"},
		{"NewGroup", func() { taskqueue.NewGroup(none, q) }, "taskqueue: NewGroup with a nil context"},
		{"NewGroupOf", func() { taskqueue.NewGroupOf[int](none, q) }, "taskqueue: NewGroupOf with a nil context"},
		{"Group.Wait", func() { g.Wait(none) }, "taskqueue: Group.Wait with a nil context"},
		{"GroupOf.Wait", func() { gof.Wait(none) }, "taskqueue: GroupOf.Wait with a nil context"},
		{"Keyed.RunSync", func() { k.RunSync(none, 1, nop) }, "taskqueue: Keyed.RunSync with a nil context"},
		{"Keyed.RunAsync", func() { k.RunAsync(none, 1, nop) }, "taskqueue: Keyed.RunAsync with a nil context"},
		{"Keyed.RunAfter", func() { k.RunAfter(none, 1, 1, nop) }, "taskqueue: Keyed.RunAfter with a nil context"},
	})
	q.Close()
	if s := q.Stats(); s.Completed != 2 || s.Rejected != 0 || s.Canceled != 0 {
		t.Errorf("Stats() = %+v; want the two tasks of the setup alone, completed", s)
	}
}

// TestErrorsOfAClosedOrFullQueue: a closed queue refuses with ErrClosed and a
// full one with ErrQueueFull, whichever call submits, so that errors.Is
// tells them apart from a task's own errors.
func TestErrorsOfAClosedOrFullQueue(t *testing.T) {
	ctx := context.Background()
	nop := func(context.Context) error { return nil }
	full := taskqueue.NewSerial(taskqueue.WithMaxQueued(1), taskqueue.WithFailWhenFull())
	full.Suspend()
	if err := full.RunAsync(ctx, nop).Err(); err != nil {
		t.Fatalf("the first task of a suspended queue with room for one: %v", err)
	}
	closed := taskqueue.NewSerial()
	closed.Close()
	for _, c := range []struct {
		q    *taskqueue.Queue
		want error
	}{{full, taskqueue.ErrQueueFull}, {closed, taskqueue.ErrClosed}} {
		errs := map[string]error{
			"RunAsync":   c.q.RunAsync(ctx, nop).Err(),
			"RunAfter":   c.q.RunAfter(ctx, 1, nop).Err(),
			"RunBarrier": c.q.RunBarrier(ctx, nop).Err(),
			"Go":         c.q.Go(func() {}),
		}
		for call, err := range errs {
			if !errors.Is(err, c.want) {
				t.Errorf("%s on a queue that refuses with %v: %v", call, c.want, err)
			}
		}
	}
	if err := closed.RunSync(ctx, nop); !errors.Is(err, taskqueue.ErrClosed) {
		t.Errorf("RunSync on a closed queue: %v; want ErrClosed", err)
	}
	full.Resume()
	full.Close()
}
