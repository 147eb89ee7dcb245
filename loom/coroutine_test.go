package loom_test

import (
	"context"
	"errors"
	"iter"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// TestStartBeginsOnTheLoop: a coroutine never begins on the goroutine that
// starts it, but on the loop, running up to its first yield: in the next
// frame if started between frames, from any goroutine; in the running
// frame's pass if started from an action; right after the coroutine that
// starts it yields, in the same pass, if started by a body.
func TestStartBeginsOnTheLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := testLoom(t)
		r := &recorder{l: l}
		first := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			r.add("between frames: begins")
			yield(loom.NextFrame())
			r.add("between frames: resumed")
		})
		r.expect(t, "StartCoroutine returned") // nothing runs on the caller
		started := make(chan *loom.Coroutine)
		go func() {
			started <- l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				r.add("other goroutine: begins")
				yield(loom.NextFrame())
			})
		}()
		c := <-started
		l.Post(func() {
			r.add("action")
			l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				r.add("from an action: begins")
				l.StartCoroutine(func(yield func(loom.Instruction) bool) {
					r.add("from a body: begins")
				})
				r.add("from an action: yields")
				yield(loom.NextFrame())
				r.add("from an action: resumed")
			})
		})
		r.expect(t, "other goroutine's StartCoroutine returned")
		l.UpdateDelta(time.Millisecond)
		r.expect(t, "frame 1", "1:action", "1:between frames: begins", "1:other goroutine: begins",
			"1:from an action: begins", "1:from an action: yields", "1:from a body: begins")
		l.UpdateDelta(time.Millisecond)
		r.expect(t, "frame 2", "2:between frames: resumed", "2:from an action: resumed")
		if first.Err() != nil || c.Err() != nil || !first.IsDone() || !c.IsDone() {
			t.Errorf("done %v, %v, Err() = %v, %v; want both done, nil", first.IsDone(), c.IsDone(), first.Err(), c.Err())
		}
	})
}

// TestCoroutineHandle: a Coroutine's Done channel, made before or after
// its end, is closed once it has ended, and IsDone reports it; Err is nil
// while it runs and after its body returns.
func TestCoroutineHandle(t *testing.T) {
	l, _ := testLoom(t)
	var errWhileRunning error = loom.ErrClosed
	var c *loom.Coroutine
	c = l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		errWhileRunning = c.Err()
		yield(loom.NextFrame())
	})
	early := c.Done()
	update(t, l)
	if c.IsDone() || testkit.IsClosed(early) || c.Err() != nil || errWhileRunning != nil {
		t.Errorf("while it waits: done %v, Done closed %v, Err() = %v, Err() while running = %v; want false, false, nil, nil",
			c.IsDone(), testkit.IsClosed(early), c.Err(), errWhileRunning)
	}
	update(t, l)
	if !c.IsDone() || !testkit.IsClosed(early) || !testkit.IsClosed(c.Done()) || c.Err() != nil {
		t.Errorf("once its body returned: done %v, Done closed %v and %v, Err() = %v; want true, true, true, nil",
			c.IsDone(), testkit.IsClosed(early), testkit.IsClosed(c.Done()), c.Err())
	}
}

// TestCoroutinePanic: a body that panics, in its first part or later, ends
// alone: the panic goes to the panic handler with the stack where it
// happened and to Err, its defers run, the coroutines waiting for it
// resume and the others go on. A panic in a deferred call that Stop runs is
// reported too.
func TestCoroutinePanic(t *testing.T) {
	l, p := testLoom(t)
	r := &recorder{l: l}
	boom := errors.New("boom")
	early := l.StartCoroutine(func(yield func(loom.Instruction) bool) { panicWith(boom) })
	update(t, l)
	if !errors.Is(early.Err(), boom) || !early.IsDone() {
		t.Errorf("Err() = %v; want a *PanicError wrapping boom", early.Err())
	}
	late := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		defer r.add("late defer")
		yield(loom.NextFrame())
		panic("late")
	})
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		yield(loom.WaitFor(late))
		r.add("waiter resumed")
	})
	other := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		yield(loom.NextFrame())
		r.add("other goes on")
	})
	update(t, l)
	update(t, l)
	r.expect(t, "the frame of the panic", "3:late defer", "3:waiter resumed", "3:other goes on")
	got := p.Take()
	if len(got) != 2 || !errors.Is(got[0], boom) || got[1].Value != "late" {
		t.Fatalf("handler got %v", got)
	}
	if !strings.Contains(string(got[0].Stack), "panicWith") {
		t.Errorf("the stack does not show where the coroutine panicked:\n%s", got[0].Stack)
	}
	var pe *loom.PanicError
	if !errors.As(late.Err(), &pe) || pe.Value != "late" || other.Err() != nil {
		t.Errorf("Err() = %v, %v", late.Err(), other.Err())
	}
	var se *scheduler.PanicError // the same type
	if !errors.As(late.Err(), &se) || se != pe {
		t.Errorf("Err() = %v is not a *scheduler.PanicError", late.Err())
	}
	d := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		defer func() { panic("in defer") }()
		yield(loom.NextFrame())
	})
	update(t, l)
	d.Stop()
	update(t, l)
	if got := p.Take(); len(got) != 1 || got[0].Value != "in defer" || !errors.As(d.Err(), &pe) || pe.Value != "in defer" {
		t.Errorf("handler got %v, Err() = %v; want the panic of the deferred call in both", got, d.Err())
	}
}

func panicWith(err error) { panic(err) }

// TestCoroutinesOnALockedThread runs coroutines on a goroutine locked to its
// OS thread, as a render thread is: iter.Pull coroutines created and resumed
// there, also from inside one another, must not trip the runtime's check that
// a coroutine stays on its thread.
func TestCoroutinesOnALockedThread(t *testing.T) {
	done := make(chan []string)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		l := loom.New(loom.ManualClock())
		r := &recorder{l: l}
		l.Post(func() {
			l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				child := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
					yield(loom.WaitForFrames(2))
					r.add("child")
				})
				yield(loom.WaitFor(child))
				r.add("parent")
			})
		})
		frames(l, 4, time.Millisecond)
		l.Close()
		done <- r.take()
	}()
	if got, want := <-done, []string{"3:child", "3:parent"}; !slices.Equal(got, want) {
		t.Errorf("recorded %v; want %v", got, want)
	}
}

// TestCoroutineIsAnIterator: a coroutine body is an ordinary iter.Seq, which
// other code can range over.
func TestCoroutineIsAnIterator(t *testing.T) {
	var body iter.Seq[loom.Instruction] = func(yield func(loom.Instruction) bool) {
		for i := range 3 {
			if !yield(loom.WaitForFrames(i + 2)) {
				return
			}
		}
	}
	var got []loom.Instruction
	for in := range body {
		got = append(got, in)
	}
	if want := []loom.Instruction{loom.WaitForFrames(2), loom.WaitForFrames(3), loom.WaitForFrames(4)}; !slices.Equal(got, want) {
		t.Errorf("ranged %v; want %v", got, want)
	}
	l, _ := testLoom(t)
	c := l.StartCoroutine(body) // begins in frame 1
	frames(l, 9, time.Millisecond)
	if n := len(l.Coroutines()); n != 1 {
		t.Fatalf("%d coroutines live after 9 frames; want 1", n)
	}
	l.UpdateDelta(time.Millisecond)
	select {
	case <-c.Done():
	default:
		t.Error("the coroutine did not end in frame 10 (1+2+3+4)")
	}
}

// TestStartCoroutineMisuse: starting a nil body, or with a nil context,
// panics, naming the call.
func TestStartCoroutineMisuse(t *testing.T) {
	l, _ := testLoom(t)
	body := func(func(loom.Instruction) bool) {}
	var none context.Context
	checkMisuse(t,
		misuse{func() { l.StartCoroutine(nil) }, "loom: StartCoroutine(nil)"},
		misuse{func() { l.NewScope().StartCoroutine(nil) }, "loom: Scope.StartCoroutine(nil)"},
		misuse{func() { l.StartCoroutineContext(t.Context(), nil) }, "loom: StartCoroutineContext(ctx, nil)"},
		misuse{func() { l.StartCoroutineContext(none, body) }, "loom: StartCoroutineContext with a nil context"},
	)
}

// BenchmarkCoroutineResume measures a frame of many coroutines that yield
// every frame, per coroutine, against the floor: a bare iter.Pull next() on
// as many iterators, in the same run.
func BenchmarkCoroutineResume(b *testing.B) {
	const n = 10_000
	b.Run("impl=loom/coroutines=10000", func(b *testing.B) {
		b.ReportAllocs()
		l := loom.New(loom.ManualClock())
		for range n {
			l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				for yield(loom.NextFrame()) {
				}
			})
		}
		for b.Loop() {
			l.UpdateDelta(time.Millisecond)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/coroutine")
		l.Close()
	})
	b.Run("impl=iterpull/coroutines=10000", func(b *testing.B) {
		b.ReportAllocs()
		nexts := make([]func() (loom.Instruction, bool), n)
		stops := make([]func(), n)
		for i := range nexts {
			nexts[i], stops[i] = iter.Pull(func(yield func(loom.Instruction) bool) {
				for yield(loom.NextFrame()) {
				}
			})
		}
		for b.Loop() {
			for _, next := range nexts {
				next()
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/coroutine")
		for _, stop := range stops {
			stop()
		}
	})
}

// BenchmarkCoroutineStartStop measures the life of a coroutine: started on
// the loop, run to its first yield, stopped.
func BenchmarkCoroutineStartStop(b *testing.B) {
	b.ReportAllocs()
	l := loom.New(loom.ManualClock())
	body := func(yield func(loom.Instruction) bool) {
		for yield(loom.NextFrame()) {
		}
	}
	for b.Loop() {
		l.StartCoroutine(body).Stop()
	}
}

// TestZeroCoroutinePanics: a Coroutine that no loom started would never
// end; its methods panic, naming the call, rather than wait forever.
func TestZeroCoroutinePanics(t *testing.T) {
	var c loom.Coroutine
	for call, f := range map[string]func(){
		"Done":   func() { c.Done() },
		"Err":    func() { c.Err() },
		"IsDone": func() { c.IsDone() },
		"Stop":   func() { c.Stop() },
	} {
		want := "loom: Coroutine." + call + " of a Coroutine not started by StartCoroutine"
		if got := testkit.PanicMessage(f); got != want {
			t.Errorf("%s of the zero Coroutine panicked with %q; want %q", call, got, want)
		}
	}
}
