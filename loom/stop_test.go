package loom_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
)

// ticker returns a coroutine body that records each resume, why its loop
// ended, and its defer.
func ticker(r *recorder, name string) func(func(loom.Instruction) bool) {
	return func(yield func(loom.Instruction) bool) {
		defer r.add(name + " defer")
		for yield(loom.NextFrame()) {
			r.add(name + " tick")
		}
		r.add(name + " yield reported false")
	}
}

// TestStop: Stop ends a coroutine on the loop, at the start of the next
// frame's pass if called between frames or in the running frame's pass if
// called from an action: its yield reports false, its defers run, Err
// reports ErrStopped, the coroutines waiting for it resume; it never
// resumes after Stop returns. Stop reports whether it had not ended; a body
// that stops its own coroutine ends at its next yield.
func TestStop(t *testing.T) {
	l, _ := testLoom(t)
	r := &recorder{l: l}
	a := l.StartCoroutine(ticker(r, "a"))
	frames(l, 2, time.Millisecond)
	r.expect(t, "before Stop", "2:a tick")
	if !a.Stop() {
		t.Error("Stop of a live coroutine = false")
	}
	r.expect(t, "Stop returned") // nothing runs on the caller
	update(t, l)
	r.expect(t, "the next frame", "3:a yield reported false", "3:a defer")
	if a.Stop() || a.Err() != loom.ErrStopped || !a.IsDone() || !testkit.IsClosed(a.Done()) {
		t.Errorf("after its end: second Stop true, or Err() = %v, done %v; want false, ErrStopped, done", a.Err(), a.IsDone())
	}

	var self *loom.Coroutine
	self = l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		defer r.add("self defer")
		yield(loom.NextFrame())
		self.Stop()
		r.add("self goes on to its yield")
		if !yield(loom.NextFrame()) {
			return
		}
		r.add("never")
	})
	frames(l, 2, time.Millisecond)
	r.expect(t, "a coroutine that stops itself", "5:self goes on to its yield", "5:self defer")
	if self.Err() != loom.ErrStopped {
		t.Errorf("Err() = %v; want ErrStopped", self.Err())
	}

	b := l.StartCoroutine(ticker(r, "b"))
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		yield(loom.WaitFor(b))
		r.add("waiter resumed")
	})
	update(t, l)
	l.Post(func() { b.Stop() })
	update(t, l)
	r.expect(t, "stopped by an action", "7:b yield reported false", "7:b defer", "7:waiter resumed")
}

// TestStopFromAnotherGoroutine: Stop is safe from any goroutine and runs
// nothing there; the coroutine ends in the next frame, and one stopped
// before it began never begins.
func TestStopFromAnotherGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := testLoom(t)
		r := &recorder{l: l}
		c := l.StartCoroutine(ticker(r, "c"))
		update(t, l) // c begins
		queued := make(chan *loom.Coroutine)
		go func() {
			c.Stop()
			queued <- l.StartCoroutine(func(yield func(loom.Instruction) bool) { r.add("never") })
		}()
		q := <-queued
		go func() { q.Stop() }()
		synctest.Wait()
		r.expect(t, "the stops returned")
		update(t, l)
		r.expect(t, "the next frame", "2:c yield reported false", "2:c defer")
		if c.Err() != loom.ErrStopped || q.Err() != loom.ErrStopped {
			t.Errorf("Err() = %v, %v; want ErrStopped twice", c.Err(), q.Err())
		}
	})
}

// TestStopRacesFrames: Stop from another goroutine while frames run back
// to back: the coroutine resumes at most once after Stop returns (the
// resume under way then), its defers run once, and it ends with ErrStopped.
func TestStopRacesFrames(t *testing.T) {
	for round := range 200 {
		l := loom.New(loom.ManualClock())
		var resumes, defers atomic.Int32
		var began atomic.Bool
		c := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			began.Store(true)
			defer defers.Add(1)
			for yield(loom.NextFrame()) {
				resumes.Add(1)
			}
		})
		stopped := make(chan int32)
		go func() {
			c.Stop()
			stopped <- resumes.Load()
		}()
		var at int32
	loop:
		for {
			select {
			case at = <-stopped:
				break loop
			default:
				l.UpdateDelta(time.Millisecond)
				runtime.Gosched() // lets the stopper run where goroutines share one thread (js/wasm)
			}
		}
		frames(l, 3, time.Millisecond)
		if r := resumes.Load(); r > at+1 {
			t.Fatalf("round %d: %d resumes after Stop returned (at %d)", round, r-at, at)
		}
		wantDefers := int32(0)
		if began.Load() {
			wantDefers = 1
		}
		if defers.Load() != wantDefers || !errors.Is(c.Err(), loom.ErrStopped) || !c.IsDone() || c.Stop() {
			t.Fatalf("round %d: defers %d, Err %v; want %d, ErrStopped, and a second Stop false", round, defers.Load(), c.Err(), wantDefers)
		}
		l.Close()
	}
}

// TestStopAllCoroutines: StopAllCoroutines, from another goroutine, from
// the loop between frames or from a coroutine, stops every coroutine
// started before it returns: those waiting, the caller itself, and those
// not begun, which never begin, even one that another waits for; none
// resumes after it. One started after it returns runs.
func TestStopAllCoroutines(t *testing.T) {
	for _, from := range []string{"another goroutine", "the loop", "a coroutine"} {
		t.Run(from, func(t *testing.T) {
			l, _ := testLoom(t)
			r := &recorder{}
			var cs []*loom.Coroutine
			for i := range 3 {
				cs = append(cs, l.StartCoroutine(ticker(r, fmt.Sprint("begun ", i))))
			}
			update(t, l)
			r.take()
			start := func(name string) {
				c := l.StartCoroutine(func(yield func(loom.Instruction) bool) { r.add(name + " began") })
				cs = append(cs, c, l.StartCoroutine(func(yield func(loom.Instruction) bool) {
					if yield(loom.WaitFor(c)) {
						r.add("the waiter of " + name + " resumed")
					}
				}))
			}
			switch from {
			case "another goroutine":
				done := make(chan struct{})
				go func() {
					defer close(done)
					for i := range 20 {
						start(fmt.Sprint("queued ", i))
					}
					l.StopAllCoroutines()
				}()
				<-done
			case "the loop":
				done := make(chan struct{})
				go func() {
					defer close(done)
					start("queued elsewhere")
				}()
				<-done
				start("queued here")
				l.StopAllCoroutines()
			case "a coroutine":
				cs = append(cs, l.StartCoroutine(func(yield func(loom.Instruction) bool) {
					defer r.add("caller defer")
					start("started by the caller")
					l.StopAllCoroutines()
					if yield(loom.NextFrame()) {
						r.add("the caller resumed")
					}
				}))
			}
			frames(l, 2, time.Millisecond)
			for _, got := range r.take() {
				if !strings.HasSuffix(got, "defer") && !strings.HasSuffix(got, "yield reported false") {
					t.Errorf("ran after the stop: %q", got)
				}
			}
			for i, c := range cs {
				if !c.IsDone() || !errors.Is(c.Err(), loom.ErrStopped) {
					t.Errorf("coroutine %d: done %v, Err() = %v; want ErrStopped", i, c.IsDone(), c.Err())
				}
			}
			after := l.StartCoroutine(func(yield func(loom.Instruction) bool) { r.add("started after") })
			update(t, l)
			r.expect(t, "a coroutine started after StopAllCoroutines returned", "started after")
			if after.Err() != nil {
				t.Errorf("the coroutine started after: Err() = %v; want nil", after.Err())
			}
		})
	}
}

// TestGroupStopsResumeNoWaiter: after StopAllCoroutines or a Scope's Close
// returns, none of the coroutines it stops resumes, not even one that waits
// for another of them, whose end would otherwise wake it, just as when each
// is stopped with Stop. Each case stops pairs of a coroutine and a waiter
// started after it, between frames and, as the awaited coroutine returns,
// from inside it.
func TestGroupStopsResumeNoWaiter(t *testing.T) {
	const pairs = 32 // a Scope keeps no order among its coroutines: many pairs try many orders
	cases := []struct {
		name string
		stop func(l *loom.Loom, s *loom.Scope, cs []*loom.Coroutine)
		want error
	}{
		{"Stop each", func(_ *loom.Loom, _ *loom.Scope, cs []*loom.Coroutine) {
			for _, c := range cs {
				c.Stop()
			}
		}, loom.ErrStopped},
		{"StopAllCoroutines", func(l *loom.Loom, _ *loom.Scope, _ []*loom.Coroutine) { l.StopAllCoroutines() }, loom.ErrStopped},
		{"Scope.Close", func(_ *loom.Loom, s *loom.Scope, _ []*loom.Coroutine) { s.Close() }, loom.ErrClosed},
	}
	for _, tc := range cases {
		for _, from := range []string{"between frames", "from the awaited coroutine"} {
			t.Run(tc.name+"/"+from, func(t *testing.T) {
				l := loom.New(loom.ManualClock())
				s := l.NewScope()
				var resumed []string
				var cs []*loom.Coroutine
				stopNow := make(chan struct{})
				for i := range pairs {
					awaited := s.StartCoroutine(func(yield func(loom.Instruction) bool) {
						for yield(loom.NextFrame()) {
							select {
							case <-stopNow:
								if from != "between frames" {
									tc.stop(l, s, cs)
									return // its end wakes its waiter
								}
							default:
							}
						}
					})
					waiter := s.StartCoroutine(func(yield func(loom.Instruction) bool) {
						if yield(loom.WaitFor(awaited)) {
							resumed = append(resumed, fmt.Sprintf("waiter %d", i))
						}
					})
					cs = append(cs, awaited, waiter)
				}
				frames(l, 2, time.Millisecond)
				close(stopNow)
				if from == "between frames" {
					tc.stop(l, s, cs)
				}
				frames(l, 2, time.Millisecond)
				if len(resumed) > 0 {
					t.Errorf("resumed after the stop: %v", resumed)
				}
				for i, c := range cs {
					if from != "between frames" && i == 0 {
						continue // the awaited coroutine that stopped the others returned
					}
					if !c.IsDone() || !errors.Is(c.Err(), tc.want) {
						t.Errorf("coroutine %d: done %v, Err() = %v; want %v", i, c.IsDone(), c.Err(), tc.want)
					}
				}
				l.Close()
			})
		}
	}
}

// TestYieldAfterFalsePanics: a body that yields again after its yield
// reported false, which would keep Stop waiting forever, panics with a
// message that says so, which ends the coroutine.
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

// TestStopMisuse: Stop of a nil *Coroutine panics, naming the call.
func TestStopMisuse(t *testing.T) {
	checkMisuse(t, misuse{func() { (*loom.Coroutine)(nil).Stop() }, "loom: Stop of a nil *Coroutine"})
}
