package loom_test

import (
	"context"
	"errors"
	"testing"
	"time"

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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if v, err := task.Wait(ctx); v != "loaded" || err != nil {
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
