package loom_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// A typed coroutine gives its value to a coroutine that waits for it, in the
// pass in which it ends, and to a goroutine that waits with a context.
func TestTaskResult(t *testing.T) {
	l, _ := panicLoom(t)
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
	for range 3 {
		update(t, l)
	}
	if got != "loaded" || at != 2 {
		t.Fatalf("the waiter got %q in frame %d; want %q in frame 2, the pass in which the task ended", got, at, "loaded")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if v, err := task.Wait(ctx); v != "loaded" || err != nil {
		t.Fatalf("Wait() = %q, %v", v, err)
	}

	boom := errors.New("decode failed")
	failing := loom.StartTask(l, func(y func(loom.Instruction) bool) (int, error) { return 0, boom })
	if _, err := failing.Result(); err != boom {
		t.Fatalf("a failing task's Result error = %v", err)
	}
	panicking := loom.StartTask(l, func(y func(loom.Instruction) bool) (int, error) { panic("bad asset") })
	var pe *loom.PanicError
	if _, err := panicking.Result(); !errors.As(err, &pe) {
		t.Fatalf("a panicking task's Result error = %v", err)
	}
}

// goer runs functions on goroutines and counts them.
type goer struct{ closed bool }

func (g *goer) Go(f func()) error {
	if g.closed {
		return errors.New("closed")
	}
	go f()
	return nil
}

// Work off the frame and back: the coroutine resumes in the first frame after
// the function returned, with its result; a panic becomes its error.
func TestRunOff(t *testing.T) {
	l, _ := panicLoom(t)
	release := make(chan struct{})
	off := loom.RunOff(&goer{}, func() (int, error) { <-release; return 42, nil })
	var got int
	var at int64
	l.StartCoroutine(func(y func(loom.Instruction) bool) {
		if y(loom.WaitFor(off)) {
			got, _ = off.Result()
			at = l.Frame()
		}
	})
	update(t, l)
	update(t, l)
	if off.IsDone() || got != 0 {
		t.Fatal("the result is there before the function returned")
	}
	close(release)
	<-off.Done()
	update(t, l)
	if got != 42 || at != 3 {
		t.Fatalf("got %d in frame %d, want 42 in frame 3", got, at)
	}
	p := loom.RunOff(&goer{}, func() (int, error) { panic("in the worker") })
	<-p.Done()
	if err := p.Err(); err == nil || !strings.Contains(err.Error(), "in the worker") {
		t.Fatalf("a panicking function's error = %v", err)
	}
	if err := loom.RunOff(&goer{closed: true}, func() (int, error) { return 1, nil }).Err(); err == nil {
		t.Fatal("a refused function reports no error")
	}
}

// A coroutine bound to a context stops when the context is done, at the
// next frame, with its defers run; one whose context is done never begins.
func TestStartCoroutineContext(t *testing.T) {
	synctest.Test(t, testStartCoroutineContext)
}

func testStartCoroutineContext(t *testing.T) {
	l, _ := panicLoom(t)
	ctx, cancel := context.WithCancel(context.Background())
	deferred, frames := false, 0
	c := l.StartCoroutineContext(ctx, func(y func(loom.Instruction) bool) {
		defer func() { deferred = true }()
		for y(loom.NextFrame()) {
			frames++
		}
	})
	update(t, l)
	update(t, l)
	cancel()
	synctest.Wait() // the context's AfterFunc has asked for the stop
	update(t, l)
	if !c.IsDone() || !deferred || !errors.Is(c.Err(), loom.ErrStopped) {
		t.Fatalf("after cancel: done %v, defers ran %v, Err %v", c.IsDone(), deferred, c.Err())
	}
	if frames != 2 {
		t.Fatalf("ran %d frames, want 2", frames)
	}
	ran := false
	d := l.StartCoroutineContext(ctx, func(y func(loom.Instruction) bool) { ran = true })
	if ran || !errors.Is(d.Err(), loom.ErrStopped) {
		t.Fatalf("with a done context: ran %v, Err %v", ran, d.Err())
	}
}

// inlineGoer runs each function at once, on the caller's goroutine.
type inlineGoer struct{}

func (inlineGoer) Go(f func()) error { f(); return nil }

// TestRunOffAllocations checks the cost of a round trip off the frame: the
// result and the function handed to the queue, two allocations, and none
// for the wait (WaitFor polls IsDone and makes no channel), nor for a Done
// channel that nobody asked for.
func TestRunOffAllocations(t *testing.T) {
	l, _ := panicLoom(t)
	rounds := 0
	l.StartCoroutine(func(y func(loom.Instruction) bool) {
		for {
			off := loom.RunOff(inlineGoer{}, func() (int, error) { return 1, nil })
			if !y(loom.WaitFor(off)) {
				return
			}
			if v, err := off.Result(); v != 1 || err != nil {
				t.Errorf("Result() = %v, %v; want 1, nil", v, err)
			}
			rounds++
		}
	})
	update(t, l)
	if a := testing.AllocsPerRun(100, func() { update(t, l) }); a > 2 {
		t.Errorf("a round trip allocates %v times; want at most 2", a)
	}
	if rounds != 102 {
		t.Errorf("%d rounds in 102 frames; want one a frame", rounds)
	}

	// A goroutine that waits on Done gets a channel, closed or not yet.
	off := loom.RunOff(inlineGoer{}, func() (int, error) { return 2, nil })
	select {
	case <-off.Done():
	default:
		t.Error("Done of a finished Off is not closed")
	}
	gate := make(chan struct{})
	var g goPool
	late := loom.RunOff(g, func() (int, error) { <-gate; return 3, nil })
	ch := late.Done()
	close(gate)
	<-ch
	if v, _ := late.Result(); v != 3 || !late.IsDone() {
		t.Errorf("after Done: Result %v, IsDone %v", v, late.IsDone())
	}
}

// TestTaskAwaitAllocatesNothing checks that awaiting a typed coroutine costs
// no allocation: in the frame in which a task ends, the coroutine that waits
// for it resumes in the same pass and reads its result, with nothing
// allocated by the end, the wake-up, the resume or Result.
func TestTaskAwaitAllocatesNothing(t *testing.T) {
	l, _ := panicLoom(t)
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
