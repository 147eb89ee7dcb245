package taskqueue_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestPanics: a panic in a task is recovered as a *PanicError that holds the
// value and the task's stack. A task with a handle completes with it; the
// queue's panic handler receives it only when nobody was waiting for the
// handle (a Done channel is no waiting: its reader may have left), and a
// panic of a task of Go or TryGo always; no panic is
// reported twice,
// Stats counts each, and the queue goes on.
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

		// A task whose Done a caller selected on, and left before it
		// panicked: the channel is no waiting, so the handler gets it.
		release = block(t, q)
		h = q.RunAsync(t.Context(), func(context.Context) error { panic(errBoom) })
		select {
		case <-h.Done():
			t.Fatal("Done closed before the task could start")
		case <-time.After(time.Millisecond):
		}
		release()
		synctest.Wait()
		if got := p.Take(); len(got) != 1 || !errors.Is(got[0], errBoom) || h.Err() != got[0] {
			t.Errorf("handler got %v; want the panic of the task whose Done nobody reads now", got)
		}

		// Go and TryGo: the handler gets it, and the queue goes on.
		q.Go(func() { panic("go") })
		if err := q.RunSync(t.Context(), func(context.Context) error { return nil }); err != nil {
			t.Errorf("RunSync after a panic = %v", err)
		}
		synctest.Wait()
		if got := p.Take(); len(got) != 1 || got[0].Value != "go" {
			t.Errorf("handler got %v; want the panic of the Go task", got)
		}
		if !q.TryGo(func() { panic("trygo") }) {
			t.Fatal("TryGo on an idle queue = false")
		}
		synctest.Wait()
		if got := p.Take(); len(got) != 1 || got[0].Value != "trygo" {
			t.Errorf("handler got %v; want the panic of the TryGo task", got)
		}
		if s := q.Stats(); s.Panicked != 5 {
			t.Errorf("Stats().Panicked = %d; want 5", s.Panicked)
		}
	})
}

// TestGoexit: a task that calls runtime.Goexit completes with ErrGoexit, and
// the queue goes on.
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

// TestFutureResult: a Future's Result is the zero value and nil while its
// task is pending, and then, without blocking, the value the task returned
// with its error, the value kept when the error is not nil; Wait gives the
// same.
func TestFutureResult(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		ctx := t.Context()
		q := k.new()
		release := block(t, q)
		f := taskqueue.RunAsync(ctx, q, func(context.Context) (int, error) { return 7, nil })
		if v, err := f.Result(); v != 0 || err != nil || f.IsDone() {
			t.Errorf("Result() of a pending task = %v, %v, done %v; want 0, nil, false", v, err, f.IsDone())
		}
		release()
		if v, err := f.Wait(ctx); v != 7 || err != nil {
			t.Errorf("Wait() = %v, %v; want 7, nil", v, err)
		}
		if v, err := f.Result(); v != 7 || err != nil {
			t.Errorf("Result() once done = %v, %v; want 7, nil", v, err)
		}
		errBoom := errors.New("boom")
		failed := taskqueue.RunAsync(ctx, q, func(context.Context) (int, error) { return 3, errBoom })
		if v, err := failed.Wait(ctx); v != 3 || err != errBoom {
			t.Errorf("Wait() of a failed task = %v, %v; want 3, boom", v, err)
		}
		if v, err := failed.Result(); v != 3 || err != errBoom {
			t.Errorf("Result() of a failed task = %v, %v; want 3, boom", v, err)
		}
	})
}

// TestPanicAfterItsWaiterLeftIsReported: a Wait that gave up, its context
// done, before the task panicked, or a continuation canceled before it,
// watches the task no more: the panic, which no caller receives, goes to
// the queue's panic handler, once.
func TestPanicAfterItsWaiterLeftIsReported(t *testing.T) {
	leave := map[string]func(q *taskqueue.Queue, body func(context.Context) error){
		"Handle.Wait gave up": func(q *taskqueue.Queue, body func(context.Context) error) {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			q.RunAsync(context.Background(), body).Wait(ctx)
		},
		"Future.Wait gave up": func(q *taskqueue.Queue, body func(context.Context) error) {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			taskqueue.RunAsync(context.Background(), q, func(ctx context.Context) (int, error) { return 0, body(ctx) }).Wait(ctx)
		},
		"continuation canceled": func(q *taskqueue.Queue, body func(context.Context) error) {
			q.RunAsync(context.Background(), body).Then(context.Background(), q, nop).Cancel()
		},
	}
	for name, left := range leave {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var p panics
				q := taskqueue.NewConcurrent(2, taskqueue.WithPanicHandler(p.Add))
				left(q, func(context.Context) error { time.Sleep(time.Second); panic("after the waiter left") })
				time.Sleep(2 * time.Second)
				synctest.Wait()
				if got := p.Take(); len(got) != 1 || got[0].Value != "after the waiter left" {
					t.Errorf("the panic handler got %v; want the task's panic, once", got)
				}
				q.Close()
			})
		})
	}
}
