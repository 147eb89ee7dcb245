package loom_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/taskqueue-go/taskqueue/loom"
)

// Every user callback that a wait calls may panic: the panic goes to the
// handler with its stack, ends only the coroutine that waited (its Err is
// the panic, its defers run), and every other coroutine, polled in the same
// frame or not, goes on exactly as it would have.
func TestPanickingWaitEndsOnlyItsCoroutine(t *testing.T) {
	waits := map[string]func() loom.Instruction{
		"WaitUntil":  func() loom.Instruction { return loom.WaitUntil(func() bool { panic("boom in WaitUntil") }) },
		"WaitWhile":  func() loom.Instruction { return loom.WaitWhile(func() bool { panic("boom in WaitWhile") }) },
		"WaitCustom": func() loom.Instruction { return loom.WaitCustom(panickyWaiter{}) },
		"WaitFor":    func() loom.Instruction { return loom.WaitFor(panickyWaitable{}) },
	}
	for name, wait := range waits {
		t.Run(name, func(t *testing.T) {
			l, panics := testLoom(t)
			ready := false
			var before, after, deferred bool
			var afterFrame int64
			// A polled coroutine yielded before the panicking one, and one after.
			l.StartCoroutine(func(y func(loom.Instruction) bool) {
				if y(loom.WaitUntil(func() bool { return ready })) {
					before = true
				}
			})
			bad := l.StartCoroutine(func(y func(loom.Instruction) bool) {
				defer func() { deferred = true }()
				for y(wait()) {
				}
			})
			l.StartCoroutine(func(y func(loom.Instruction) bool) {
				if y(loom.WaitUntil(func() bool { return ready })) {
					after, afterFrame = true, l.Frame()
				}
			})
			update(t, l)
			update(t, l)
			ready = true
			update(t, l)
			if !before || !after {
				t.Fatalf("the other coroutines resumed: before %v, after %v; want both", before, after)
			}
			if afterFrame != 3 {
				t.Errorf("the coroutine after resumed in frame %d, want 3", afterFrame)
			}
			if !bad.IsDone() || !deferred {
				t.Fatalf("the coroutine whose wait panicked: done %v, defers ran %v; want both", bad.IsDone(), deferred)
			}
			var pe *loom.PanicError
			if !errors.As(bad.Err(), &pe) || !strings.Contains(pe.Error(), "boom") {
				t.Errorf("Err() = %v, want the panic", bad.Err())
			}
			if got := panics.Take(); len(got) != 1 || !strings.Contains(string(got[0].Stack), "failures_test.go") {
				t.Errorf("handler got %d panics (want 1, with the stack of the panic)", len(got))
			}
		})
	}
}

// The program of the report: the panic of one predicate used to escape
// Update and drop the other polled coroutines for good.
func TestPanickingPredicateKeepsOthersPolled(t *testing.T) {
	l, panics := testLoom(t)
	ok, ready := false, false
	l.StartCoroutine(func(y func(loom.Instruction) bool) { y(loom.WaitUntil(func() bool { panic("boom") })) })
	l.StartCoroutine(func(y func(loom.Instruction) bool) {
		if y(loom.WaitUntil(func() bool { return ready })) {
			ok = true
		}
	})
	update(t, l)
	ready = true
	for range 10 {
		update(t, l)
	}
	if !ok {
		t.Fatal("the second coroutine never resumed")
	}
	if n := panics.Len(); n != 1 {
		t.Errorf("handler got %d panics, want 1", n)
	}
}

// StopAllCoroutines stops every coroutine started before it returns, from
// whichever goroutine, begun or not.
func TestStopAllCoroutinesStopsQueuedStarts(t *testing.T) {
	t.Run("from another goroutine", func(t *testing.T) {
		l, _ := testLoom(t)
		var c *loom.Coroutine
		ran := false
		done := make(chan struct{})
		go func() {
			defer close(done)
			c = l.StartCoroutine(func(y func(loom.Instruction) bool) { ran = true })
			l.StopAllCoroutines()
		}()
		<-done
		update(t, l)
		if ran || !errors.Is(c.Err(), loom.ErrStopped) || !c.IsDone() {
			t.Fatalf("ran %v, Err %v; want a coroutine stopped before it began", ran, c.Err())
		}
	})
	t.Run("on the loop, started elsewhere", func(t *testing.T) {
		l, _ := testLoom(t)
		ran := false
		var c *loom.Coroutine
		done := make(chan struct{})
		go func() {
			defer close(done)
			c = l.StartCoroutine(func(y func(loom.Instruction) bool) { ran = true })
		}()
		<-done
		l.StopAllCoroutines() // the loop's goroutine, between frames
		update(t, l)
		if ran || !c.IsDone() || !errors.Is(c.Err(), loom.ErrStopped) {
			t.Fatalf("after StopAllCoroutines and a frame: ran %v, done %v, Err %v", ran, c.IsDone(), c.Err())
		}
	})
	t.Run("a queued start and its waiter both end", func(t *testing.T) {
		l, _ := testLoom(t)
		done := make(chan struct{})
		var queued *loom.Coroutine
		go func() {
			defer close(done)
			queued = l.StartCoroutine(func(y func(loom.Instruction) bool) {})
		}()
		<-done
		resumed := false
		waiter := l.StartCoroutine(func(y func(loom.Instruction) bool) {
			if y(loom.WaitFor(queued)) {
				resumed = true
			}
		})
		stopped := make(chan struct{})
		go func() { defer close(stopped); l.StopAllCoroutines() }()
		<-stopped
		for range 3 {
			update(t, l)
		}
		// The waiter was started on the loop before the stop: it is
		// stopped too, and must have ended, not hung.
		if resumed {
			t.Fatal("a stopped coroutine resumed after its wait")
		}
		if !queued.IsDone() || !waiter.IsDone() {
			t.Fatalf("ended: queued %v, waiter %v; want both", queued.IsDone(), waiter.IsDone())
		}
	})
}

// A body that ignores the false its yield reported used to make Stop spin
// forever; it now panics with a message, which ends the coroutine.
func TestYieldAfterFalsePanics(t *testing.T) {
	l, panics := testLoom(t)
	c := l.StartCoroutine(func(y func(loom.Instruction) bool) {
		for {
			y(loom.NextFrame()) // ignores false
		}
	})
	update(t, l)
	if !c.Stop() {
		t.Fatal("Stop reported the coroutine had ended")
	}
	update(t, l) // the stop is applied: yield reports false, and the body yields again
	var pe *loom.PanicError
	if !errors.As(c.Err(), &pe) || !strings.Contains(pe.Error(), "yielded after its yield reported false") {
		t.Fatalf("Err() = %v, want the panic about yielding after false", c.Err())
	}
	if n := panics.Len(); n != 1 {
		t.Errorf("handler got %d panics, want 1", n)
	}
}
