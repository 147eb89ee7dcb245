package taskqueue_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

func TestPanics(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		var p panics
		q := k.new(taskqueue.WithPanicHandler(p.Add))
		errBoom := errors.New("boom")

		// A task with a handle that a caller waits for: the caller gets the
		// panic, and the handler stays out.
		release := block(t, q)
		h := q.RunAsync(t.Context(), func(context.Context) error { panic(errBoom) })
		waited := make(chan error)
		go func() { waited <- h.Wait(t.Context()) }()
		synctest.Wait()
		release()
		err := <-waited
		var pe *taskqueue.PanicError
		if !errors.As(err, &pe) || !errors.Is(err, errBoom) {
			t.Fatalf("Wait = %v; want a *PanicError wrapping boom", err)
		}
		if !strings.Contains(string(pe.Stack), "TestPanics") {
			t.Errorf("stack does not show the panicking task:\n%s", pe.Stack)
		}
		if got := p.Take(); len(got) != 0 {
			t.Errorf("handler got %v; want nothing: the waiting caller got the panic", got)
		}
		// A task with a handle that nobody waits for: the handler gets it,
		// and the handle still reports it.
		h = q.RunAsync(t.Context(), func(context.Context) error { panic(errBoom) })
		synctest.Wait()
		if got := p.Take(); len(got) != 1 || !errors.Is(got[0], errBoom) || h.Err() != got[0] {
			t.Errorf("handler got %v; want the unwatched handle's panic, which Err reports too", got)
		}

		// Go: the handler gets it, and the queue goes on.
		q.Go(func() { panic("go") })
		if err := q.RunSync(t.Context(), func(context.Context) error { return nil }); err != nil {
			t.Errorf("RunSync after a panic = %v", err)
		}
		synctest.Wait()
		if got := p.Take(); len(got) != 1 || got[0].Value != "go" {
			t.Errorf("handler got %v; want the panic of the Go task", got)
		}
		if s := q.Stats(); s.Panicked != 3 {
			t.Errorf("Stats().Panicked = %d; want 3", s.Panicked)
		}
	})
}

func TestGoexit(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		h := q.RunAsync(t.Context(), func(context.Context) error { runtime.Goexit(); return nil })
		if err := h.Wait(t.Context()); err != taskqueue.ErrGoexit {
			t.Errorf("Wait = %v; want ErrGoexit", err)
		}
		// The queue goes on.
		if err := q.RunSync(t.Context(), func(context.Context) error { return nil }); err != nil {
			t.Errorf("RunSync after Goexit = %v", err)
		}
	})
}

// A Future's Result is the zero value and nil while pending, then the value.
func TestOutsideFutureResultAndThen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		ctx := context.Background()
		release := make(chan struct{})
		f := taskqueue.RunAsync(ctx, q, func(context.Context) (int, error) { <-release; return 7, nil })
		if v, err := f.Result(); v != 0 || err != nil || f.IsDone() {
			t.Fatalf("pending Result = %v, %v, done %v", v, err, f.IsDone())
		}
		g := taskqueue.Then(ctx, f, q, func(_ context.Context, v int) (string, error) {
			if v != 7 {
				return "", errors.New("wrong value")
			}
			return "seven", nil
		})
		close(release)
		s, err := g.Wait(ctx)
		if s != "seven" || err != nil {
			t.Fatalf("Then: %q %v", s, err)
		}
		// A failing predecessor passes its error; the continuation does not run.
		boom := errors.New("boom")
		bad := taskqueue.RunAsync(ctx, q, func(context.Context) (int, error) { return 3, boom })
		var ran atomic.Bool
		c := taskqueue.Then(ctx, bad, q, func(context.Context, int) (int, error) { ran.Store(true); return 1, nil })
		if _, err := c.Wait(ctx); !errors.Is(err, boom) || ran.Load() {
			t.Fatalf("continuation of a failed task: err %v ran %v", err, ran.Load())
		}
		if v, err := bad.Result(); v != 3 || !errors.Is(err, boom) {
			t.Fatalf("Result of failed task = %v %v", v, err)
		}
		// A panicking predecessor.
		p := q.RunAsync(ctx, func(context.Context) error { panic("x") })
		pc := p.Then(ctx, q, func(context.Context) error { ran.Store(true); return nil })
		var pe *taskqueue.PanicError
		if err := pc.Wait(ctx); !errors.As(err, &pe) || ran.Load() {
			t.Fatalf("continuation of a panicked task: %v ran %v", err, ran.Load())
		}
		// The continuation's queue is closed when the predecessor returns.
		q2 := taskqueue.NewSerial()
		rel2 := make(chan struct{})
		h := q.RunAsync(ctx, func(context.Context) error { <-rel2; return nil })
		ch := h.Then(ctx, q2, func(context.Context) error { ran.Store(true); return nil })
		q2.Close()
		close(rel2)
		if err := ch.Wait(ctx); !errors.Is(err, taskqueue.ErrClosed) || ran.Load() {
			t.Fatalf("continuation on a queue closed meanwhile: %v ran %v", err, ran.Load())
		}
		// The continuation's ctx ends while it waits.
		rel3 := make(chan struct{})
		h3 := q.RunAsync(ctx, func(context.Context) error { <-rel3; return nil })
		cctx, cancel := context.WithCancel(ctx)
		c3 := h3.Then(cctx, q, func(context.Context) error { ran.Store(true); return nil })
		cancel()
		synctest.Wait()
		if !c3.IsDone() || !errors.Is(c3.Err(), context.Canceled) {
			t.Errorf("continuation whose context ended while waiting: done %v err %v", c3.IsDone(), c3.Err())
		}
		// Cancel of a waiting continuation.
		c4 := h3.Then(ctx, q, func(context.Context) error { ran.Store(true); return nil })
		if !c4.Cancel() {
			t.Errorf("Cancel of a waiting continuation returned false")
		}
		close(rel3)
		q.Close()
		if ran.Load() {
			t.Fatal("a continuation that should not run ran")
		}
		if !c4.IsDone() || !errors.Is(c4.Err(), context.Canceled) {
			t.Errorf("canceled continuation: %v", c4.Err())
		}
	})
}
