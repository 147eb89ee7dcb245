package taskqueue_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestStatsOutcomes: every way a task ends is counted once, in its field.
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
		q.Close()
		want := taskqueue.Stats{Limit: q.Stats().Limit, Completed: 7, Succeeded: 2, Failed: 3, Panicked: 2} // the limit is the kind's, checked elsewhere
		if got := q.Stats(); got != want {
			t.Errorf("Stats() = %+v; want %+v", got, want)
		}
	})
}

// Stats counts outcomes: Succeeded, Failed (error and Goexit), Panicked,
// Canceled (ctx done before start, Cancel), Rejected (closed).
func TestOutsideStatsOutcomes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial(taskqueue.WithPanicHandler(func(*taskqueue.PanicError) {}))
		ctx := context.Background()
		q.RunAsync(ctx, func(context.Context) error { return nil })
		q.RunAsync(ctx, func(context.Context) error { return errors.New("e") })
		h := q.RunAsync(ctx, func(context.Context) error { runtime.Goexit(); return nil })
		q.RunAsync(ctx, func(context.Context) error { panic("p") })
		q.Go(func() { panic("p2") })
		q.Go(func() {})
		synctest.Wait()
		if !errors.Is(h.Err(), taskqueue.ErrGoexit) {
			t.Errorf("Goexit task Err %v", h.Err())
		}
		block := make(chan struct{})
		q.Go(func() { <-block })
		cctx, cancel := context.WithCancel(ctx)
		hc := q.RunAsync(cctx, func(context.Context) error { return nil })
		hx := q.RunAsync(ctx, func(context.Context) error { return nil })
		_ = hc.Done() // someone watches it, so that it is canceled at once
		cancel()
		hx.Cancel()
		synctest.Wait()
		if !hc.IsDone() {
			t.Errorf("task whose context ended before it started is not done at once")
		}
		close(block)
		q.Close()
		q.Go(func() {})
		q.RunAsync(ctx, func(context.Context) error { return nil })
		st := q.Stats()
		want := taskqueue.Stats{Limit: 1, Completed: 7, Succeeded: 3, Failed: 2, Panicked: 2, Canceled: 2, Rejected: 2}
		st.Wait = want.Wait
		if st != want {
			t.Errorf("Stats = %+v\nwant  %+v", st, want)
		}
	})
}

// TestGoexitOfGoCountsAsFailed: a task of Go that calls runtime.Goexit
// counts as Failed, as Stats documents, not as Succeeded.
func TestGoexitOfGoCountsAsFailed(t *testing.T) {
	q := taskqueue.NewSerial()
	q.Go(func() { runtime.Goexit() })
	q.Go(func() {})
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if st := q.Stats(); st.Completed != 2 || st.Failed != 1 || st.Succeeded != 1 {
		t.Errorf("Stats = %+v; want Completed 2, Failed 1, Succeeded 1", st)
	}
}
