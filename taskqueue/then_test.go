package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// A continuation holds no slot while its queue is busy: the first stage's
// queue goes on with its next task.
func TestThenHoldsNoSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		io := taskqueue.NewSerial()
		cpu := taskqueue.NewConcurrent(2)
		release := block(t, cpu) // the second stage is busy
		var order []string
		first := io.RunAsync(ctx, func(context.Context) error { order = append(order, "read 1"); return nil })
		parse := first.Then(ctx, cpu, func(context.Context) error { order = append(order, "parse 1"); return nil })
		second := io.RunAsync(ctx, func(context.Context) error { order = append(order, "read 2"); return nil })
		if err := second.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if parse.IsDone() {
			t.Fatal("the continuation ran while its queue was busy")
		}
		// A handle completes just before its worker gives the slot back:
		// let every goroutine of the bubble settle before counting.
		synctest.Wait()
		if s := io.Stats(); s.Running != 0 {
			t.Errorf("the first stage's queue runs %d tasks while the continuation waits; want 0", s.Running)
		}
		release()
		if err := parse.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(order); got != "[read 1 read 2 parse 1]" {
			t.Errorf("order = %s", got)
		}
	})
}

// TestThenTyped: a chain of 100 typed continuations over two queues hands
// the value on, and a continuation of a task already done runs all the same.
func TestThenTyped(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		ctx := t.Context()
		q, other := k.new(), k.new()
		f := taskqueue.RunAsync(ctx, q, func(context.Context) (int, error) { return 1, nil })
		for i := range 100 {
			on := q
			if i%2 == 1 {
				on = other
			}
			f = taskqueue.Then(ctx, f, on, func(_ context.Context, v int) (int, error) { return v + 1, nil })
		}
		if v, err := f.Wait(ctx); v != 101 || err != nil {
			t.Errorf("Result() after 100 continuations = %d, %v; want 101, nil", v, err)
		}
		// Registered after the task is done: it runs all the same.
		s := taskqueue.Then(ctx, f, q, func(_ context.Context, v int) (string, error) { return fmt.Sprint(v), nil })
		if v, err := s.Wait(ctx); v != "101" || err != nil {
			t.Errorf("Result() = %q, %v; want \"101\"", v, err)
		}
	})
}

// A failed task does not run its continuation, which takes its error.
// TestThenAfterFailure: a continuation runs only after its task returned
// nil; after a task that failed, panicked, was canceled or never accepted,
// it completes with that task's error, and one whose queue is closed when
// its task returns completes with ErrClosed; none of them runs.
func TestThenAfterFailure(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		ctx := t.Context()
		var p panics
		q := k.new(taskqueue.WithPanicHandler(p.Add))
		errBoom := errors.New("boom")
		var ran atomic.Int32
		cont := func(context.Context) error { ran.Add(1); return nil }
		failed := q.RunAsync(ctx, func(context.Context) error { return errBoom })
		if err := failed.Then(ctx, q, cont).Wait(ctx); err != errBoom {
			t.Errorf("continuation of a failed task: Wait() = %v; want boom", err)
		}
		typed := taskqueue.RunAsync(ctx, q, func(context.Context) (int, error) { return 3, errBoom })
		next := taskqueue.Then(ctx, typed, q, func(context.Context, int) (int, error) { ran.Add(1); return 1, nil })
		if v, err := next.Wait(ctx); v != 0 || err != errBoom {
			t.Errorf("typed continuation of a failed task: Wait() = %v, %v; want 0, boom", v, err)
		}
		panicked := q.RunAsync(ctx, func(context.Context) error { panic("x") })
		var pe *taskqueue.PanicError
		if err := panicked.Then(ctx, q, cont).Wait(ctx); !errors.As(err, &pe) {
			t.Errorf("continuation of a panicked task: Wait() = %v; want the *PanicError", err)
		}
		p.Take()
		release := block(t, q)
		canceled := q.RunAsync(ctx, func(context.Context) error { return nil })
		chained := canceled.Then(ctx, q, cont).Then(ctx, q, cont)
		canceled.Cancel()
		if err := chained.Wait(ctx); err != context.Canceled {
			t.Errorf("continuation of a continuation of a canceled task: Wait() = %v; want context.Canceled", err)
		}
		release()
		closing := k.new()
		gate := make(chan struct{})
		first := q.RunAsync(ctx, func(context.Context) error { <-gate; return nil })
		onClosed := first.Then(ctx, closing, cont)
		closing.Close()
		close(gate)
		if err := onClosed.Wait(ctx); err != taskqueue.ErrClosed {
			t.Errorf("continuation on a queue closed before its task returned: Wait() = %v; want ErrClosed", err)
		}
		q.Close()
		if err := q.RunAsync(ctx, cont).Then(ctx, q, cont).Wait(ctx); !errors.Is(err, taskqueue.ErrClosed) {
			t.Errorf("continuation of a refused task: Wait() = %v; want ErrClosed", err)
		}
		if got := ran.Load(); got != 0 {
			t.Errorf("%d continuations ran; want 0", got)
		}
	})
}

// TestThenOrderOfFailures: when several reasons end a continuation at the
// call of Then, a done context comes first, then a closed queue, and the
// failure of the task it follows, done already, only after them.
func TestThenOrderOfFailures(t *testing.T) {
	boom := errors.New("boom")
	src := taskqueue.NewSerial()
	failed := src.RunAsync(context.Background(), func(context.Context) error { return boom })
	failed.Wait(context.Background())
	open, closed := taskqueue.NewSerial(), taskqueue.NewSerial()
	closed.Close()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name string
		ctx  context.Context
		q    *taskqueue.Queue
		want error
	}{
		{"done context, closed queue", done, closed, context.Canceled},
		{"done context", done, open, context.Canceled},
		{"closed queue", context.Background(), closed, taskqueue.ErrClosed},
		{"failed task alone", context.Background(), open, boom},
	} {
		err := failed.Then(c.ctx, c.q, func(context.Context) error { return nil }).Wait(context.Background())
		if !errors.Is(err, c.want) {
			t.Errorf("%s: the continuation of a failed task ended with %v; want %v", c.name, err, c.want)
		}
	}
	src.Close()
	open.Close()
}

// TestThenCancel: a continuation canceled, or whose context ends, while it
// waits for its task never runs, nor one canceled once queued; Stats counts
// them.
func TestThenCancel(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		ctx := t.Context()
		q := k.new()
		var ran atomic.Int32
		cont := func(context.Context) error { ran.Add(1); return nil }
		gate := make(chan struct{})
		first := q.RunAsync(ctx, func(context.Context) error { <-gate; return nil })

		// Canceled while it waits for the task it follows.
		h := first.Then(ctx, q, cont)
		if !h.Cancel() || h.Err() != context.Canceled || !h.IsDone() {
			t.Errorf("Cancel() of a waiting continuation: done %v, Err() = %v", h.IsDone(), h.Err())
		}
		if h.Cancel() {
			t.Error("a second Cancel() = true")
		}

		// Its context done while it waits.
		cctx, cancel := context.WithCancel(ctx)
		h2 := first.Then(cctx, q, cont)
		cancel()
		synctest.Wait()
		if !h2.IsDone() || h2.Err() != context.Canceled {
			t.Errorf("continuation whose context ended while it waited: done %v, Err() = %v", h2.IsDone(), h2.Err())
		}

		// Canceled once queued, behind a busy queue.
		close(gate)
		first.Wait(ctx)
		synctest.Wait()
		release := block(t, q)
		h3 := q.RunAsync(ctx, func(context.Context) error { return nil }).Then(ctx, q, cont)
		release2 := block(t, q) // queued behind the blockers: h3's task
		release()
		synctest.Wait()
		if !h3.Cancel() {
			t.Error("Cancel() of a queued continuation = false")
		}
		release2()
		q.Close()
		if got := ran.Load(); got != 0 {
			t.Errorf("%d canceled continuations ran", got)
		}
		if s := q.Stats(); s.Canceled != 3 {
			t.Errorf("Stats().Canceled = %d; want 3", s.Canceled)
		}
	})
}

// TestThenMisuse: Then panics with a nil queue, function or Future, and on a
// nil or zero Handle.
func TestThenMisuse(t *testing.T) {
	ctx := context.Background()
	q := taskqueue.NewSerial()
	h := q.RunAsync(ctx, nop)
	f := taskqueue.RunAsync(ctx, q, func(context.Context) (int, error) { return 0, nil })
	var zero taskqueue.Handle
	checkMisuses(t, []misuse{
		{"Then(nil queue)", func() { h.Then(ctx, nil, nop) }, "taskqueue: Handle.Then with a nil queue"},
		{"Then(nil func)", func() { h.Then(ctx, q, nil) }, "taskqueue: Handle.Then with a nil function"},
		{"Then on a nil Handle", func() { (*taskqueue.Handle)(nil).Then(ctx, q, nop) }, "taskqueue: Handle.Then on a nil Handle"},
		{"Then on a zero Handle", func() { zero.Then(ctx, q, nop) },
			"taskqueue: use of a zero Handle; handles are made by a queue's RunAsync, RunAfter and RunBarrier"},
		{"generic Then(nil func)", func() { taskqueue.Then[int, int](ctx, f, q, nil) }, "taskqueue: Then with a nil function"},
		{"generic Then(nil future)", func() {
			taskqueue.Then(ctx, nil, q, func(context.Context, int) (int, error) { return 0, nil })
		}, "taskqueue: Then with a nil Future"},
	})
	q.Close()
}

// A full queue: the continuation fails or waits for room, as the policy says.
func TestThenFullQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		first := taskqueue.NewSerial().RunAsync(ctx, func(context.Context) error { return nil })
		first.Wait(ctx)
		fail := taskqueue.NewSerial(taskqueue.WithMaxQueued(1), taskqueue.WithFailWhenFull())
		release := block(t, fail)
		fail.Go(func() {}) // fills it
		if err := first.Then(ctx, fail, func(context.Context) error { return nil }).Err(); err != taskqueue.ErrQueueFull {
			t.Errorf("continuation on a full WithFailWhenFull queue: Err() = %v; want ErrQueueFull", err)
		}
		release()

		wait := taskqueue.NewSerial(taskqueue.WithMaxQueued(1))
		release = block(t, wait)
		wait.Go(func() {})
		var ran atomic.Bool
		h := first.Then(ctx, wait, func(context.Context) error { ran.Store(true); return nil })
		synctest.Wait()
		if h.IsDone() {
			t.Fatal("continuation on a full waiting queue did not wait for room")
		}
		release()
		if err := h.Wait(ctx); err != nil || !ran.Load() {
			t.Errorf("continuation after room came: Wait() = %v, ran %v", err, ran.Load())
		}
	})
}

// TestThenCancelWhileWaitingForRoom: Cancel works on a continuation that
// waits for room on a full queue: it reports true, the continuation is
// canceled at once and never runs once room comes, and the counts say so.
// Its context ending while it waits ends it with that context's error, as
// before.
func TestThenCancelWhileWaitingForRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first := taskqueue.NewSerial().RunAsync(t.Context(), nop)
		first.Wait(t.Context())
		q := taskqueue.NewSerial(taskqueue.WithMaxQueued(1))
		release := block(t, q)
		q.Go(func() {}) // fills it
		var ran atomic.Int32
		f := func(context.Context) error { ran.Add(1); return nil }
		h := first.Then(t.Context(), q, f)
		ctx, cancel := context.WithCancel(t.Context())
		byCtx := first.Then(ctx, q, f)
		synctest.Wait()
		if !h.Cancel() {
			t.Error("Cancel of a continuation waiting for room = false; want true")
		}
		if !h.IsDone() || h.Err() != context.Canceled {
			t.Errorf("after Cancel: IsDone() = %v, Err() = %v; want true, context.Canceled", h.IsDone(), h.Err())
		}
		if h.Cancel() {
			t.Error("a second Cancel = true; want false")
		}
		cancel()
		synctest.Wait()
		if err := byCtx.Err(); err != context.Canceled {
			t.Errorf("continuation whose context ended while it waited for room: Err() = %v; want context.Canceled", err)
		}
		release()
		q.Close()
		if n := ran.Load(); n != 0 {
			t.Errorf("canceled continuations ran %d times once room came; want none", n)
		}
		if st := q.Stats(); st.Canceled != 1 || st.Rejected != 1 || st.Completed != 2 {
			t.Errorf("Stats = %+v; want the Cancel canceled, the context's end rejected, the two Go tasks completed", st)
		}
	})
}

// TestThenCancelAsRoomComes: Cancel races with room coming for a
// continuation that waits for it: Cancel reports true and the function never
// runs, or it reports false and the function runs once.
func TestThenCancelAsRoomComes(t *testing.T) {
	ctx := context.Background()
	first := taskqueue.NewSerial().RunAsync(ctx, nop)
	first.Wait(ctx)
	for round := range 500 {
		q := taskqueue.NewConcurrent(1, taskqueue.WithMaxQueued(1))
		gate := make(chan struct{})
		q.Go(func() { <-gate })
		for q.Stats().Running != 1 {
			runtime.Gosched()
		}
		q.Go(func() {}) // fills it
		var ran atomic.Int32
		h := first.Then(ctx, q, func(context.Context) error { ran.Add(1); return nil })
		for h.IsDone() || q.Stats().Queued != 1 {
			runtime.Gosched()
		}
		go close(gate)
		canceled := h.Cancel()
		err := h.Wait(ctx)
		q.Close()
		if r := ran.Load(); canceled && (r != 0 || err != context.Canceled) || !canceled && (r != 1 || err != nil) {
			t.Fatalf("round %d: Cancel() = %v, the function ran %d times, Wait() = %v", round, canceled, r, err)
		}
		if st := q.Stats(); st.Completed+st.Canceled != 3 {
			t.Fatalf("round %d: Cancel() = %v, Stats = %+v; want 3 completed or canceled", round, canceled, st)
		}
	}
}

// Cancel races with the queuing of the continuation: it runs exactly once, or
// Cancel reports that it stopped it and it never runs.
func TestThenCancelRace(t *testing.T) {
	ctx := context.Background()
	q := taskqueue.NewConcurrent(4)
	const n = 2000
	var ran [n]atomic.Int32
	hs := make([]*taskqueue.Handle, n)
	canceled := make([]bool, n)
	for i := range n {
		first := q.RunAsync(ctx, func(context.Context) error { return nil })
		hs[i] = first.Then(ctx, q, func(context.Context) error { ran[i].Add(1); return nil })
		if rand.IntN(2) == 0 {
			canceled[i] = hs[i].Cancel()
		}
	}
	for i, h := range hs {
		err := h.Wait(ctx)
		switch r := ran[i].Load(); {
		case canceled[i] && (r != 0 || err != context.Canceled):
			t.Fatalf("continuation %d: Cancel() = true, but it ran %d times, Wait() = %v", i, r, err)
		case !canceled[i] && (r != 1 || err != nil):
			t.Fatalf("continuation %d: not canceled, but it ran %d times, Wait() = %v", i, r, err)
		}
	}
	q.Close()
}
