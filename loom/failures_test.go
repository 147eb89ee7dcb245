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
