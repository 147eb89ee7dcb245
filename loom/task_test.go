package loom_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
)

// A typed coroutine gives its value to a coroutine that waits for it, in the
// pass in which it ends, and to a goroutine that waits with a context.
func TestTaskResult(t *testing.T) {
	l, _ := testLoom(t)
	task := loom.StartTask(l, func(y func(loom.Instruction) bool) (string, error) {
		if !y(loom.WaitForFrames(2)) {
			return "", nil
		}
		return "loaded", nil
	})
	var got string
	var at int64
	l.StartCoroutine(func(y func(loom.Instruction) bool) {
		if y(loom.WaitFor(task)) {
			got, _ = task.Result()
			at = l.Frame()
		}
	})
	if v, err := task.Result(); v != "" || err != nil || task.IsDone() {
		t.Fatalf("before its end: %q, %v, done %v", v, err, task.IsDone())
	}
	for range 4 {
		update(t, l)
	}
	// Both begin in frame 1; the task waits 2 frames, to frame 3.
	if got != "loaded" || at != 3 {
		t.Fatalf("the waiter got %q in frame %d; want %q in frame 3, the pass in which the task ended", got, at, "loaded")
	}
	if v, err := task.Wait(t.Context()); v != "loaded" || err != nil {
		t.Fatalf("Wait() = %q, %v", v, err)
	}

	boom := errors.New("decode failed")
	failing := loom.StartTask(l, func(y func(loom.Instruction) bool) (int, error) { return 0, boom })
	panicking := loom.StartTask(l, func(y func(loom.Instruction) bool) (int, error) { panic("bad asset") })
	update(t, l) // they begin, and end
	if _, err := failing.Result(); err != boom || failing.Err() != boom {
		t.Fatalf("a failing task's Result error = %v", err)
	}
	var pe *loom.PanicError
	if _, err := panicking.Result(); !errors.As(err, &pe) || panicking.Err() != err {
		t.Fatalf("a panicking task's Result error = %v", err)
	}

	// A task of a scope ends when the scope closes.
	s := l.NewScope()
	scoped := loom.StartTask(s, func(y func(loom.Instruction) bool) (int, error) {
		for y(loom.NextFrame()) {
		}
		return 1, nil
	})
	update(t, l)
	s.Close()
	update(t, l)
	if _, err := scoped.Result(); !scoped.IsDone() || !errors.Is(err, loom.ErrClosed) {
		t.Fatalf("a task of a closed scope: done %v, Result error %v; want ErrClosed", scoped.IsDone(), err)
	}
}

// TestTaskAwaitAllocatesNothing checks that awaiting a typed coroutine costs
// no allocation: in the frame in which a task ends, the coroutine that waits
// for it resumes in the same pass and reads its result, with nothing
// allocated by the end, the wake-up, the resume or Result.
func TestTaskAwaitAllocatesNothing(t *testing.T) {
	l, _ := testLoom(t)
	const pairs = 101 // AllocsPerRun's warm-up run and its 100
	release := make([]bool, pairs)
	got := 0
	for i := range pairs {
		task := loom.StartTask(l, func(y func(loom.Instruction) bool) (int, error) {
			y(loom.WaitUntil(func() bool { return release[i] }))
			return i, nil
		})
		l.StartCoroutine(func(y func(loom.Instruction) bool) {
			if !y(loom.WaitFor(task)) {
				return
			}
			if v, err := task.Result(); v == i && err == nil {
				got++
			}
		})
	}
	update(t, l)
	next := 0
	a := testing.AllocsPerRun(100, func() {
		release[next] = true
		next++
		update(t, l)
	})
	if a != 0 {
		t.Errorf("a frame in which a task ends and its awaiter resumes allocates %v times; want 0", a)
	}
	if got != pairs {
		t.Errorf("%d awaiters read their task's result; want %d", got, pairs)
	}
}

// TestTaskWait: goroutines other than the loop's wait for a task with
// Wait, or with Await among other Waitables, blocking until it ends, or
// until their context ends; a stopped task reports ErrStopped.
func TestTaskWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := testLoom(t)
		release := false
		task := loom.StartTask(l, func(y func(loom.Instruction) bool) (int, error) {
			if !y(loom.WaitUntil(func() bool { return release })) {
				return 0, errors.New("stopped")
			}
			return 42, nil
		})
		got := make(chan int, 1)
		go func() {
			v, err := task.Wait(context.Background())
			if err != nil {
				t.Errorf("Wait() = %v, %v", v, err)
			}
			got <- v
		}()
		other := make(waitable)
		awaited := make(chan error, 1)
		go func() { awaited <- loom.Await(context.Background(), task, other) }()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if v, err := task.Wait(ctx); v != 0 || err != context.DeadlineExceeded {
			t.Errorf("Wait with a context that ends first = %v, %v; want 0, DeadlineExceeded", v, err)
		}
		if err := loom.Await(ctx, task); err != context.DeadlineExceeded {
			t.Errorf("Await with a context that ended = %v; want DeadlineExceeded", err)
		}
		update(t, l)
		release = true
		update(t, l)
		if v := <-got; v != 42 {
			t.Errorf("Wait() from a goroutine = %d; want 42", v)
		}
		synctest.Wait()
		select {
		case err := <-awaited:
			t.Errorf("Await returned %v while a member is not done", err)
		default:
		}

		stopped := loom.StartTask(l, func(y func(loom.Instruction) bool) (int, error) {
			for y(loom.NextFrame()) {
			}
			return 1, nil
		})
		update(t, l)
		if !stopped.Stop() {
			t.Error("Stop of a running task = false")
		}
		update(t, l)
		if v, err := stopped.Wait(context.Background()); v != 0 || err != loom.ErrStopped {
			t.Errorf("a stopped task's Wait() = %v, %v; want 0, ErrStopped", v, err)
		}
		close(other)
		if err := <-awaited; err != nil {
			t.Errorf("Await = %v; want nil, the task's error", err)
		}
	})
}

// TestStartTaskMisuse: StartTask with no Loom or Scope, or no body,
// panics, naming the call.
func TestStartTaskMisuse(t *testing.T) {
	l, _ := testLoom(t)
	body := func(func(loom.Instruction) bool) (int, error) { return 0, nil }
	var none context.Context
	checkMisuse(t,
		misuse{func() { loom.StartTask[int](nil, body) }, "loom: StartTask with a nil Loom or Scope"},
		misuse{func() { loom.StartTask[int](l, nil) }, "loom: StartTask(nil)"},
		misuse{func() { loom.StartTask(l, body).Wait(none) }, "loom: Task.Wait with a nil context"},
	)
}

// BenchmarkTaskAwait measures a coroutine that starts a typed coroutine and
// waits for its result, per round (a start, a yield, a resume, an end).
func BenchmarkTaskAwait(b *testing.B) {
	l := loom.New(loom.ManualClock())
	defer l.Close()
	b.ReportAllocs()
	l.StartCoroutine(func(y func(loom.Instruction) bool) {
		for {
			t := loom.StartTask(l, func(y func(loom.Instruction) bool) (int, error) {
				y(loom.NextFrame())
				return 1, nil
			})
			if !y(loom.WaitFor(t)) {
				return
			}
		}
	})
	for b.Loop() {
		l.UpdateDelta(time.Millisecond)
	}
}

// TestZeroTaskPanics: the methods of a Task that StartTask did not make
// panic, naming the call.
func TestZeroTaskPanics(t *testing.T) {
	var task loom.Task[int]
	for call, f := range map[string]func(){
		"Result": func() { task.Result() },
		"Err":    func() { task.Err() },
		"Wait":   func() { task.Wait(context.Background()) },
		"Done":   func() { task.Done() },
		"IsDone": func() { task.IsDone() },
		"Stop":   func() { task.Stop() },
	} {
		name := call
		if call == "Err" {
			name = "Result" // Err is Result's error
		}
		want := "loom: Task." + name + " of a Task not made by StartTask"
		if got := testkit.PanicMessage(f); got != want {
			t.Errorf("%s of the zero Task panicked with %q; want %q", call, got, want)
		}
	}
}
