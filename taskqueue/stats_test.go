package taskqueue_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestStatsOutcomes: every way a task ends is counted once, in its field:
// Succeeded (tasks of Go that did not panic included), Failed (an error, or
// runtime.Goexit, by a task with a handle, of RunSync or of Go), Panicked,
// Canceled (a context done before the start, Cancel) and Rejected (a
// closed queue); Completed is Succeeded + Failed + Panicked.
func TestStatsOutcomes(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		ctx := context.Background()
		var p panics
		q := k.new(taskqueue.WithPanicHandler(p.Add))
		errBoom := errors.New("boom")
		q.RunAsync(ctx, func(context.Context) error { return nil }).Wait(ctx)
		q.RunAsync(ctx, func(context.Context) error { return errBoom }).Wait(ctx)
		q.RunAsync(ctx, func(context.Context) error { panic("x") }).Wait(ctx)
		q.RunAsync(ctx, func(context.Context) error { runtime.Goexit(); return nil }).Wait(ctx)
		q.RunSync(ctx, func(context.Context) error { return errBoom })
		q.Go(func() {})
		q.Go(func() { panic("y") })
		q.Go(func() { runtime.Goexit() })
		synctest.Wait()
		limit := uint64(q.Stats().Limit) // the kind's, checked elsewhere
		release := block(t, q)           // limit tasks that succeed
		canceledCtx, cancel := context.WithCancel(ctx)
		watched := q.RunAsync(canceledCtx, nop)
		_ = watched.Done() // someone watches it: it is canceled at once
		queued := q.RunAsync(ctx, nop)
		cancel()
		queued.Cancel()
		synctest.Wait()
		release()
		q.Close()
		q.Go(func() {})
		q.RunAsync(ctx, nop)
		want := taskqueue.Stats{Limit: int(limit), Completed: 8 + limit, Succeeded: 2 + limit, Failed: 4, Panicked: 2, Canceled: 2, Rejected: 2}
		if got := q.Stats(); got != want {
			t.Errorf("Stats() = %+v; want %+v", got, want)
		}
	})
}
