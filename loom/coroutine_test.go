package loom_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
)

// trace records what coroutines did, each entry prefixed with the frame.
type trace struct {
	l   *loom.Loom
	got []string
}

func (tr *trace) add(s string) { tr.got = append(tr.got, fmt.Sprintf("%d:%s", tr.l.Frame(), s)) }

func (tr *trace) expect(t *testing.T, want ...string) {
	t.Helper()
	if !slices.Equal(tr.got, want) {
		t.Errorf("trace:\n  got  %v\n  want %v", tr.got, want)
	}
	tr.got = nil
}

// waitsEach returns a coroutine body that records, then yields in, then
// records again.
func waitsEach(tr *trace, in loom.Instruction) func(func(loom.Instruction) bool) {
	return func(yield func(loom.Instruction) bool) {
		tr.add("before")
		if !yield(in) {
			return
		}
		tr.add("after")
	}
}

// TestInstructionTable checks each row of the package documentation's table
// frame by frame. Each coroutine starts in an action of frame 1.
func TestInstructionTable(t *testing.T) {
	const dt = 100 * time.Millisecond
	cond := false
	keep := &keepWaiter{n: 2}
	done := make(chan struct{})
	cases := []struct {
		name   string
		in     loom.Instruction
		setup  func(l *loom.Loom) // runs in frame 1's action, before the start
		frames int
		want   []string
	}{
		{"NextFrame", loom.NextFrame(), nil, 3, []string{"1:before", "2:after"}},
		{"zero Instruction", loom.Instruction{}, nil, 3, []string{"1:before", "2:after"}},
		{"WaitForSeconds", loom.WaitForSeconds(250 * time.Millisecond), nil, 5, []string{"1:before", "4:after"}},
		{"WaitForSeconds(0)", loom.WaitForSeconds(0), nil, 3, []string{"1:before", "2:after"}},
		{"WaitForSeconds(-1s)", loom.WaitForSeconds(-time.Second), nil, 3, []string{"1:before", "2:after"}},
		{"WaitForSeconds at half speed", loom.WaitForSeconds(200 * time.Millisecond),
			// Frame 1 ran at full speed (100ms); then 50ms of scaled time a frame.
			func(l *loom.Loom) { l.SetTimeScale(0.5) }, 7, []string{"1:before", "5:after"}},
		{"WaitForSeconds paused", loom.WaitForSeconds(time.Millisecond),
			func(l *loom.Loom) { l.SetTimeScale(0) }, 6, []string{"1:before"}},
		{"WaitForSecondsRealtime paused", loom.WaitForSecondsRealtime(200 * time.Millisecond),
			func(l *loom.Loom) { l.SetTimeScale(0) }, 5, []string{"1:before", "3:after"}},
		{"WaitForFrames(3)", loom.WaitForFrames(3), nil, 6, []string{"1:before", "4:after"}},
		{"WaitForFrames(1)", loom.WaitForFrames(1), nil, 3, []string{"1:before", "2:after"}},
		{"WaitForFrames(0)", loom.WaitForFrames(0), nil, 3, []string{"1:before", "2:after"}},
		{"WaitUntil true at once", loom.WaitUntil(func() bool { return true }), nil, 3, []string{"1:before", "2:after"}},
		{"WaitUntil", loom.WaitUntil(func() bool { return cond }),
			func(l *loom.Loom) { l.PostAfter(250*time.Millisecond, func() { cond = true }) }, 6, []string{"1:before", "4:after"}},
		{"WaitWhile", loom.WaitWhile(func() bool { return !cond }),
			func(l *loom.Loom) { l.PostAfter(250*time.Millisecond, func() { cond = true }) }, 6, []string{"1:before", "4:after"}},
		{"WaitCustom", loom.WaitCustom(keep), nil, 6, []string{"1:before", "4:after"}},
		{"WaitFor a channel", loom.WaitFor(waitable(done)),
			func(l *loom.Loom) { l.PostAfter(250*time.Millisecond, func() { close(done) }) }, 6, []string{"1:before", "4:after"}},
		// Steps of 250ms, configured in frame 1 and so in force from frame
		// 2: the accumulator holds 100ms after frame 2, 200ms after frame 3,
		// and frame 4 runs the first step.
		{"WaitForFixedUpdate", loom.WaitForFixedUpdate(),
			func(l *loom.Loom) { l.Configure(loom.WithFixedStep(250*time.Millisecond, nil)) }, 6, []string{"1:before", "4:after"}},
		// The loop never calls EndFrame: frame 1's end phase runs as frame 2
		// begins, before its clock moves.
		{"WaitForEndOfFrame", loom.WaitForEndOfFrame(), nil, 3, []string{"1:before", "1:after"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cond = false
			keep.n = 2
			l := loom.New(loom.ManualClock())
			tr := &trace{l: l}
			l.Post(func() {
				if c.setup != nil {
					c.setup(l)
				}
				l.StartCoroutine(waitsEach(tr, c.in))
			})
			frames(l, c.frames, dt)
			tr.expect(t, c.want...)
			l.Close()
		})
	}
}

// TestPolledOncePerFrameFromNextFrame counts the calls of a WaitUntil
// condition: none in the frame of the yield, then one per frame.
func TestPolledOncePerFrameFromNextFrame(t *testing.T) {
	l := loom.New(loom.ManualClock())
	calls := 0
	var frameOfCalls []int64
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		yield(loom.WaitUntil(func() bool {
			calls++
			frameOfCalls = append(frameOfCalls, l.Frame())
			return calls == 3
		}))
	})
	frames(l, 5, time.Millisecond)
	// With no owner yet, the coroutine was queued and started in frame 1.
	if want := []int64{2, 3, 4}; !slices.Equal(frameOfCalls, want) {
		t.Errorf("condition polled in frames %v; want %v", frameOfCalls, want)
	}
}

// TestStartBeginsOnTheLoop: a coroutine never begins on the goroutine that
// starts it, but on the loop: in the next frame if started between frames;
// in the running frame's pass if started from an action; right after the
// coroutine that starts it yields, in the same pass, if started by a body.
func TestStartBeginsOnTheLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := loom.New(loom.ManualClock())
		tr := &trace{l: l}
		first := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			tr.add("between frames: begins")
			yield(loom.NextFrame())
			tr.add("between frames: resumed")
		})
		tr.expect(t) // nothing runs on the caller
		if infos := l.Coroutines(); len(infos) != 1 || infos[0].State != "queued" {
			t.Errorf("Coroutines() = %+v; want one queued", infos)
		}
		started := make(chan *loom.Coroutine)
		go func() {
			started <- l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				tr.add("other goroutine: begins")
				yield(loom.NextFrame())
			})
		}()
		c := <-started
		if i := l.Idle(); !i.Now {
			t.Errorf("Idle() = %+v with coroutines to begin; want Now", i)
		}
		l.Post(func() {
			tr.add("action")
			l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				tr.add("from an action: begins")
				l.StartCoroutine(func(yield func(loom.Instruction) bool) {
					tr.add("from a body: begins")
				})
				yield(loom.NextFrame())
				tr.add("from an action: resumed")
			})
		})
		l.UpdateDelta(time.Millisecond)
		tr.expect(t, "1:action", "1:between frames: begins", "1:other goroutine: begins",
			"1:from an action: begins", "1:from a body: begins")
		l.UpdateDelta(time.Millisecond)
		tr.expect(t, "2:between frames: resumed", "2:from an action: resumed")
		if first.Err() != nil || c.Err() != nil {
			t.Errorf("Err() = %v, %v", first.Err(), c.Err())
		}
		<-c.Done()
		l.Close()
	})
}

// TestWaitForCoroutine is seed 000's nesting, frame by frame: the parent
// resumes in the same pass in which the child ends.
func TestWaitForCoroutine(t *testing.T) {
	l := loom.New(loom.ManualClock())
	tr := &trace{l: l}
	inner := func(yield func(loom.Instruction) bool) {
		for i := range 3 {
			if !yield(loom.WaitForFrames(2)) {
				return
			}
			tr.add(fmt.Sprint("inner ", i))
		}
	}
	l.Post(func() {
		l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			tr.add("outer")
			if !yield(loom.WaitFor(l.StartCoroutine(inner))) {
				return
			}
			tr.add("outer after inner")
			child := l.StartCoroutine(func(yield func(loom.Instruction) bool) {})
			if !yield(loom.WaitFor(child)) { // ended already: next frame
				return
			}
			tr.add("outer after the ended child")
		})
	})
	frames(l, 9, time.Millisecond)
	tr.expect(t, "1:outer", "3:inner 0", "5:inner 1", "7:inner 2", "7:outer after inner", "8:outer after the ended child")
}

// TestNestedWaitCostsNoFrame: three levels of coroutines waiting for each
// other all end in the frame the innermost ends.
func TestNestedWaitCostsNoFrame(t *testing.T) {
	l := loom.New(loom.ManualClock())
	tr := &trace{l: l}
	level := func(name string, child func(func(loom.Instruction) bool)) func(func(loom.Instruction) bool) {
		return func(yield func(loom.Instruction) bool) {
			if child != nil {
				yield(loom.WaitFor(l.StartCoroutine(child)))
			} else {
				yield(loom.WaitForFrames(3))
			}
			tr.add(name + " ends")
		}
	}
	l.StartCoroutine(level("outer", level("middle", level("inner", nil)))) // begins in frame 1
	frames(l, 5, time.Millisecond)
	tr.expect(t, "4:inner ends", "4:middle ends", "4:outer ends")
}

func TestStop(t *testing.T) {
	l := loom.New(loom.ManualClock())
	tr := &trace{l: l}
	body := func(name string) func(func(loom.Instruction) bool) {
		return func(yield func(loom.Instruction) bool) {
			defer tr.add(name + " defer")
			for yield(loom.NextFrame()) {
				tr.add(name + " tick")
			}
			tr.add(name + " yield reported false")
		}
	}
	a := l.StartCoroutine(body("a"))
	l.UpdateDelta(time.Millisecond)
	l.UpdateDelta(time.Millisecond)
	tr.expect(t, "2:a tick")
	if !a.Stop() {
		t.Error("Stop of a live coroutine = false")
	}
	tr.expect(t) // between frames: it ends in the next one, and never resumes
	l.UpdateDelta(time.Millisecond)
	tr.expect(t, "3:a yield reported false", "3:a defer")
	if a.Stop() || a.Err() != loom.ErrStopped {
		t.Errorf("second Stop = true or Err() = %v; want false, ErrStopped", a.Err())
	}
	select {
	case <-a.Done():
	default:
		t.Error("Done() not closed after Stop")
	}

	// A coroutine that stops itself ends at its next yield.
	var self *loom.Coroutine
	self = l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		defer tr.add("self defer")
		yield(loom.NextFrame())
		self.Stop()
		tr.add("self goes on to its yield")
		if !yield(loom.NextFrame()) {
			return
		}
		tr.add("never")
	})
	l.UpdateDelta(time.Millisecond)
	l.UpdateDelta(time.Millisecond)
	tr.expect(t, "5:self goes on to its yield", "5:self defer")
	if self.Err() != loom.ErrStopped {
		t.Errorf("Err() = %v; want ErrStopped", self.Err())
	}

	// StopAllCoroutines, and a waiter that resumes when its child stops.
	b := l.StartCoroutine(body("b"))
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		yield(loom.WaitFor(b))
		tr.add("waiter resumed")
	})
	l.UpdateDelta(time.Millisecond)
	l.Post(func() { b.Stop() }) // from an action: it ends in this frame's pass
	l.UpdateDelta(time.Millisecond)
	tr.expect(t, "7:b yield reported false", "7:b defer", "7:waiter resumed")
	l.StartCoroutine(body("c"))
	l.StartCoroutine(body("d"))
	l.UpdateDelta(time.Millisecond)
	l.StopAllCoroutines()
	e := l.StartCoroutine(body("e")) // started after StopAllCoroutines returned
	l.UpdateDelta(time.Millisecond)
	tr.expect(t, "9:c yield reported false", "9:c defer", "9:d yield reported false", "9:d defer")
	if n := len(l.Coroutines()); n != 1 || e.IsDone() {
		t.Errorf("%d coroutines live after StopAllCoroutines, the one started after done %v; want it alone, live", n, e.IsDone())
	}
	l.Close()
}

func TestStopFromAnotherGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := loom.New(loom.ManualClock())
		tr := &trace{l: l}
		c := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			defer tr.add("defer")
			for yield(loom.NextFrame()) {
			}
		})
		l.UpdateDelta(time.Millisecond) // c begins
		queued := make(chan *loom.Coroutine)
		go func() {
			c.Stop()
			queued <- l.StartCoroutine(func(yield func(loom.Instruction) bool) { tr.add("never") })
		}()
		q := <-queued
		go func() { q.Stop() }() // stopped before it begins: never runs
		synctest.Wait()
		tr.expect(t)
		l.UpdateDelta(time.Millisecond)
		tr.expect(t, "2:defer")
		if c.Err() != loom.ErrStopped || q.Err() != loom.ErrStopped {
			t.Errorf("Err() = %v, %v; want ErrStopped twice", c.Err(), q.Err())
		}
		go l.StopAllCoroutines()
		synctest.Wait()
		l.Close()
	})
}

func TestCoroutinePanic(t *testing.T) {
	var p panics
	l := loom.New(loom.ManualClock(), loom.WithPanicHandler(p.Add))
	tr := &trace{l: l}
	boom := errors.New("boom")
	// A panic in the first part, run as the coroutine begins.
	early := l.StartCoroutine(func(yield func(loom.Instruction) bool) { panicWith(boom) })
	l.UpdateDelta(time.Millisecond)
	if !errors.Is(early.Err(), boom) {
		t.Errorf("Err() = %v; want a *PanicError wrapping boom", early.Err())
	}
	// A panic later; the waiter resumes, and the other coroutines go on.
	late := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		defer tr.add("late defer")
		yield(loom.NextFrame())
		panic("late")
	})
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		yield(loom.WaitFor(late))
		tr.add("waiter resumed")
	})
	other := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		yield(loom.NextFrame())
		tr.add("other goes on")
	})
	l.UpdateDelta(time.Millisecond)
	l.UpdateDelta(time.Millisecond)
	tr.expect(t, "3:late defer", "3:waiter resumed", "3:other goes on")
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
	// A panic in a deferred call during Stop is reported too.
	d := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		defer func() { panic("in defer") }()
		yield(loom.NextFrame())
	})
	l.UpdateDelta(time.Millisecond)
	d.Stop()
	l.UpdateDelta(time.Millisecond)
	if got := p.Take(); len(got) != 1 || got[0].Value != "in defer" {
		t.Errorf("handler got %v; want the panic of the deferred call", got)
	}
	l.Close()
}

func panicWith(err error) { panic(err) }

func TestCoroutinesSnapshot(t *testing.T) {
	l := loom.New(loom.ManualClock())
	var inside []loom.CoroutineInfo
	a := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		yield(loom.WaitForSeconds(time.Second))
	})
	s := l.NewScope()
	b := s.StartCoroutine(func(yield func(loom.Instruction) bool) {
		inside = l.Coroutines()
		yield(loom.WaitFor(a))
	})
	l.UpdateDelta(time.Millisecond)
	infos := l.Coroutines()
	want := []loom.CoroutineInfo{
		{Coroutine: a, State: "waiting", Wait: "WaitForSeconds(1s)", Started: 1},
		{Coroutine: b, State: "waiting", Wait: "WaitFor(coroutine #1)", Scoped: true, Started: 1},
	}
	if !slices.Equal(infos, want) {
		t.Errorf("Coroutines() = %+v; want %+v", infos, want)
	}
	if len(inside) != 2 || inside[1].State != "running" {
		t.Errorf("Coroutines() from inside b = %+v; want b running", inside)
	}
	// The slice, and at most two for each text of a wait (fmt's, whose
	// printers come from a sync.Pool, which the race detector empties).
	if n := testing.AllocsPerRun(100, func() { l.Coroutines() }); n > 1+2*2 && !raceEnabled {
		t.Errorf("Coroutines() of two waiting coroutines allocates %v times; want at most 5", n)
	}
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {}) // waits to begin
	if n := testing.AllocsPerRun(100, func() { l.Coroutines() }); n > 2+2*2 && !raceEnabled {
		t.Errorf("Coroutines() with a coroutine waiting to begin allocates %v times; want at most 6", n)
	}
	l.Close()
}

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
		tr := &trace{l: l}
		l.Post(func() {
			l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				child := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
					yield(loom.WaitForFrames(2))
					tr.add("child")
				})
				yield(loom.WaitFor(child))
				tr.add("parent")
			})
		})
		frames(l, 4, time.Millisecond)
		l.Close()
		done <- tr.got
	}()
	if got, want := <-done, []string{"3:child", "3:parent"}; !slices.Equal(got, want) {
		t.Errorf("trace %v; want %v", got, want)
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
	l := loom.New(loom.ManualClock())
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
	l.Close()
}

func TestInstructionPanics(t *testing.T) {
	for _, c := range []struct {
		f    func()
		want string
	}{
		{func() { loom.WaitUntil(nil) }, "loom: WaitUntil(nil)"},
		{func() { loom.WaitWhile(nil) }, "loom: WaitWhile(nil)"},
		{func() { loom.WaitFor(nil) }, "loom: WaitFor(nil)"},
		{func() { loom.WaitCustom(nil) }, "loom: WaitCustom(nil)"},
		{func() { loom.New().StartCoroutine(nil) }, "loom: StartCoroutine(nil)"},
		{func() { (*loom.Coroutine)(nil).Stop() }, "loom: Stop of a nil *Coroutine"},
		{func() { var c *loom.Coroutine; loom.WaitFor(c) }, "loom: WaitFor with a nil *loom.Coroutine"},
		{func() { var t *loom.Task[int]; loom.WaitAll(t) }, "loom: WaitAll with a nil *loom.Task[int] at index 0"},
		{func() { loom.FirstDone(nil) }, "loom: FirstDone with a nil member at index 0"},
		{func() { loom.Await(context.Background(), nil) }, "loom: Await with a nil member at index 0"},
		{func() { var l loom.Loom; l.Post(func() {}) }, "loom: use of a zero Loom; make one with New"},
		{func() { loom.StartTask[int](nil, func(func(loom.Instruction) bool) (int, error) { return 0, nil }) }, "loom: StartTask with a nil Loom or Scope"},
	} {
		if got := testkit.PanicMessage(c.f); got != c.want {
			t.Errorf("panicked with %q; want %q", got, c.want)
		}
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

// waitName is the key of a context value in the tests.
type waitName struct{}

// TestContextStopsAWaitingCoroutineInTheNextPass: once the context of
// StartCoroutineContext is done, the first coroutine pass that begins after
// that stops the coroutine, whatever it waits for: a context canceled
// between frames stops it in the next frame, and one canceled by an action
// stops it in the action's frame. No goroutine of the test has to run for
// that (the context's own watch runs on a goroutine of its own, whenever the
// runtime gets to it).
func TestContextStopsAWaitingCoroutineInTheNextPass(t *testing.T) {
	never := func() bool { return false }
	waits := map[string]func(l *loom.Loom) loom.Instruction{
		"WaitForSeconds":         func(*loom.Loom) loom.Instruction { return loom.WaitForSeconds(time.Hour) },
		"WaitForSecondsRealtime": func(*loom.Loom) loom.Instruction { return loom.WaitForSecondsRealtime(time.Hour) },
		"WaitForFrames":          func(*loom.Loom) loom.Instruction { return loom.WaitForFrames(1000) },
		"WaitUntil":              func(*loom.Loom) loom.Instruction { return loom.WaitUntil(never) },
		"WaitFor(coroutine)": func(l *loom.Loom) loom.Instruction {
			return loom.WaitFor(l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				for yield(loom.NextFrame()) {
				}
			}))
		},
		"WaitFor(channel)":  func(*loom.Loom) loom.Instruction { return loom.WaitFor(waitable(make(chan struct{}))) },
		"WaitForEndOfFrame": func(*loom.Loom) loom.Instruction { return loom.WaitForEndOfFrame() },
	}
	for _, tc := range []struct{ when, contexts string }{
		{"between frames", "shared"}, {"in an action", "shared"}, {"between frames", "each its own"},
	} {
		t.Run(tc.when+"/"+tc.contexts, func(t *testing.T) {
			when := tc.when
			for round := range 20 {
				l := loom.New(loom.ManualClock())
				ctx, cancel := context.WithCancel(context.Background())
				bound := map[string]*loom.Coroutine{}
				var resumed []string
				for name, wait := range waits {
					ctx := ctx
					if tc.contexts != "shared" {
						var stop context.CancelFunc
						ctx = context.WithValue(ctx, waitName{}, name) // the same Done channel
						ctx, stop = context.WithCancel(ctx)            // its own, canceled with the parent
						defer stop()
					}
					// One that ends at once, bound to the same context.
					l.StartCoroutineContext(ctx, func(yield func(loom.Instruction) bool) {})
					bound[name] = l.StartCoroutineContext(ctx, func(yield func(loom.Instruction) bool) {
						for yield(wait(l)) {
							if ctx.Err() != nil {
								resumed = append(resumed, name)
							}
						}
					})
				}
				l.UpdateDelta(time.Millisecond) // they begin and wait
				if when == "between frames" {
					cancel()
				} else {
					l.Post(cancel)
				}
				l.UpdateDelta(time.Millisecond)
				for name, c := range bound {
					if !c.IsDone() || !errors.Is(c.Err(), loom.ErrStopped) {
						t.Errorf("round %d, %s: in the frame after the cancel: done %v, Err() = %v; want ErrStopped",
							round, name, c.IsDone(), c.Err())
					}
				}
				if len(resumed) > 0 {
					t.Errorf("round %d: resumed after the cancel: %v", round, resumed)
				}
				if watches, cs := l.ContextWatches(); watches != 0 || cs != 0 {
					t.Errorf("round %d: %d contexts watched for %d coroutines once all ended; want none", round, watches, cs)
				}
				l.Close()
				cancel()
				if t.Failed() {
					return
				}
			}
		})
	}
}

// TestTimedWaitsSaturate: a wait near math.MaxInt64 nanoseconds or frames,
// the natural "forever", waits: its due time is the end of the clock's
// range, not one wrapped round to the past.
func TestTimedWaitsSaturate(t *testing.T) {
	waits := map[string]loom.Instruction{
		"WaitForSeconds(MaxInt64)":             loom.WaitForSeconds(math.MaxInt64),
		"WaitForSeconds(MaxInt64-1ms)":         loom.WaitForSeconds(math.MaxInt64 - time.Millisecond),
		"WaitForSecondsRealtime(MaxInt64)":     loom.WaitForSecondsRealtime(math.MaxInt64),
		"WaitForSecondsRealtime(MaxInt64-1ms)": loom.WaitForSecondsRealtime(math.MaxInt64 - time.Millisecond),
		"WaitForFrames(MaxInt)":                loom.WaitForFrames(math.MaxInt),
		"WaitForFrames(MaxInt-1)":              loom.WaitForFrames(math.MaxInt - 1),
	}
	l := loom.New(loom.ManualClock())
	l.UpdateDelta(time.Millisecond) // time and frame count are past zero: now + d would wrap
	resumed := map[string]bool{}
	for name, in := range waits {
		l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			if yield(in) {
				resumed[name] = true
			}
		})
	}
	for range 3 {
		l.UpdateDelta(time.Hour)
	}
	for name := range waits {
		if resumed[name] {
			t.Errorf("%s resumed after 3 frames of an hour", name)
		}
	}
	if n := len(l.Coroutines()); n != len(waits) {
		t.Errorf("%d coroutines waiting; want %d", n, len(waits))
	}
	for _, scale := range []float64{1, 1e-300} {
		l.SetTimeScale(scale)
		if i := l.Idle(); !i.Timed || i.Delay < 100*365*24*time.Hour {
			t.Errorf("Idle() = %+v at a time scale of %g; want the waits due in about 292 years", i, scale)
		}
	}
	l.Close()
}
