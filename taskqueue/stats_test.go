package taskqueue_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

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

// TestStatsWait: Stats.Wait samples one task in 64 and says how long it
// waited, from submitted to started, as powers of two nanoseconds: here a
// second behind a task that runs that long, so 2^30 ns; and for delayed
// tasks from when they came due, not from when they were submitted.
func TestStatsWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 4*64 + 1
		q := taskqueue.NewSerial()
		q.Go(func() { time.Sleep(time.Second) })
		for range n - 1 {
			q.Go(func() {})
		}
		q.Close()
		const second = 1 << 30 * time.Nanosecond // the power of two above a second
		if w := q.Stats().Wait; w.Samples != n/64 || w.P50 != second || w.P99 != second || w.Max != second {
			t.Errorf("Stats().Wait = %+v after %d tasks that waited a second; want %d samples of %v", w, n, n/64, second)
		}
		delayed := taskqueue.NewSerial()
		for range n {
			delayed.RunAfter(context.Background(), time.Hour, nop)
		}
		delayed.Close()
		if w := delayed.Stats().Wait; w.Samples != n/64 || w.Max >= time.Microsecond {
			t.Errorf("Stats().Wait = %+v after %d tasks delayed an hour, each started when due; want %d samples of no wait", w, n, n/64)
		}
	})
}

// TestStatsWaitSamplesABacklog: Stats.Wait samples one task in 64 however
// long the backlog: 6,400 tasks queued at once on a serial queue, each
// running a millisecond, give 100 samples, the longest wait over 6 seconds,
// as when the tasks come one at a time.
func TestStatsWaitSamplesABacklog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 6400
		q := taskqueue.NewSerial()
		for range n {
			q.Go(func() { time.Sleep(time.Millisecond) })
		}
		q.Close()
		if w := q.Stats().Wait; w.Samples != n/64 || w.Max < 6*time.Second {
			t.Errorf("Stats().Wait = %+v after %d tasks of 1ms queued at once; want %d samples, the longest over 6s", w, n, n/64)
		}
	})
}
