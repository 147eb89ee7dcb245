package loom_test

import (
	"bytes"
	"fmt"
	"runtime"
	rtrace "runtime/trace"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
)

// TestUpdateRunsPhasesInOrder: a frame runs the fixed steps, the actions
// posted before it began in the order they were posted, the delayed
// actions due at its time in due order (those on unscaled time, then those
// on scaled time; among equals, in the order they were posted), then the
// coroutines; work posted during a frame waits for the next one.
func TestUpdateRunsPhasesInOrder(t *testing.T) {
	l, _ := testLoom(t)
	r := &recorder{l: l}
	l.Configure(loom.WithFixedStep(10*time.Millisecond, func(time.Duration) { r.add("step") }))
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		for yield(loom.NextFrame()) {
			r.add("coroutine")
		}
	})
	l.PostAfterScaled(10*time.Millisecond, r.note("scaled 10ms"))
	l.PostAfter(20*time.Millisecond, r.note("20ms"))
	l.PostAfter(10*time.Millisecond, r.note("10ms a"))
	l.PostAfter(10*time.Millisecond, r.note("10ms b"))
	l.PostAfter(5*time.Millisecond, r.note("5ms"))
	l.Post(func() {
		r.add("action 1")
		l.Post(r.note("posted during the frame"))
		l.PostAfter(0, r.note("delayed 0 during the frame"))
	})
	l.Post(r.note("action 2"))
	l.UpdateDelta(10 * time.Millisecond)
	r.expect(t, "frame 1", "1:step", "1:action 1", "1:action 2", "1:5ms", "1:10ms a", "1:10ms b", "1:scaled 10ms")
	l.UpdateDelta(10 * time.Millisecond)
	r.expect(t, "frame 2", "2:step", "2:posted during the frame", "2:delayed 0 during the frame", "2:20ms", "2:coroutine")
	if l.Frame() != 2 {
		t.Errorf("Frame() = %d; want 2", l.Frame())
	}
}

// TestUpdateDelta drives the clock by hand: delays count on the game's
// clock, not the real one, and the clock moves by each frame's dt; Update on
// such a loom, UpdateDelta on one that reads the real clock, and a negative
// dt panic.
func TestUpdateDelta(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := testLoom(t)
		var r recorder
		l.PostAfter(100*time.Millisecond, r.note("100ms"))
		for i := range 3 {
			l.UpdateDelta(40 * time.Millisecond)
			if i < 2 {
				r.expect(t, fmt.Sprintf("frame %d", i+1))
			}
		}
		r.expect(t, "frame 3 (120ms)", "100ms")
		time.Sleep(time.Hour) // the real clock does not matter
		l.UpdateDelta(0)
		if got := l.UnscaledTime(); got != 120*time.Millisecond {
			t.Errorf("UnscaledTime() = %v; want 120ms", got)
		}
		l.PostAfter(10*time.Millisecond, r.note("10ms after the latest frame"))
		l.UpdateDelta(9 * time.Millisecond)
		r.expect(t, "9ms later")
		l.UpdateDelta(time.Millisecond)
		r.expect(t, "10ms later", "10ms after the latest frame")
		rl := loom.New()
		defer rl.Close()
		checkMisuse(t,
			misuse{func() { l.UpdateDelta(-1) }, "loom: UpdateDelta(-1ns): negative delta"},
			misuse{l.Update, "loom: Update called on a loom with a manual clock; use UpdateDelta"},
			misuse{func() { rl.UpdateDelta(0) }, "loom: UpdateDelta called on a loom with the real clock; make it with ManualClock"},
		)
	})
}

// TestUpdateMisusePanics: one loop call runs at a time; Update panics when
// called while a frame runs, from inside the frame or from another
// goroutine, and the frame that runs goes on. Between frames, any goroutine
// may run the next one.
func TestUpdateMisusePanics(t *testing.T) {
	const inFrame = "loom: Update called while a frame runs: from inside the frame, or from two goroutines at once"
	synctest.Test(t, func(t *testing.T) {
		l := loom.New()
		defer l.Close()
		l.Update()
		done := make(chan string)
		go func() { done <- testkit.PanicMessage(l.Update) }()
		if got := <-done; got != "" {
			t.Errorf("Update from another goroutine, between frames, panicked: %q", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		l := loom.New()
		defer l.Close()
		msg := ""
		l.Post(func() { msg = testkit.PanicMessage(l.Update) })
		l.Update()
		if msg != inFrame {
			t.Errorf("nested Update panicked with %q; want %q", msg, inFrame)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		l := loom.New(loom.ManualClock())
		defer l.Close()
		msg := ""
		l.Post(func() { msg = testkit.PanicMessage(func() { l.UpdateDelta(0) }) })
		l.UpdateDelta(0)
		if want := "loom: UpdateDelta called while a frame runs: from inside the frame, or from two goroutines at once"; msg != want {
			t.Errorf("nested UpdateDelta panicked with %q; want %q", msg, want)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// Two goroutines racing for a frame: one runs it, the other is told.
		l := loom.New()
		defer l.Close()
		release := make(chan struct{})
		l.Post(func() { <-release })
		msgs := make(chan string, 2)
		for range 2 {
			go func() { msgs <- testkit.PanicMessage(l.Update) }()
		}
		synctest.Wait()
		if got := <-msgs; got != inFrame {
			t.Errorf("concurrent Update panicked with %q; want %q", got, inFrame)
		}
		close(release)
		if got := <-msgs; got != "" {
			t.Errorf("the Update that ran the frame panicked with %q", got)
		}
		if l.Frame() != 1 {
			t.Errorf("Frame() = %d after one frame", l.Frame())
		}
	})
}

// TestCallbacksRunWithNoLockHeld: every function of the program that the
// loom calls may call the loom back, since none runs with a lock of the
// loom held. Each one here takes the loom's lock (Configure) and its
// coroutine's (Err); one held by the caller would deadlock the test.
func TestCallbacksRunWithNoLockHeld(t *testing.T) {
	var l *loom.Loom
	calls := map[string]int{}
	reenter := func(name string) {
		l.Configure()
		calls[name]++
	}
	l, p := testLoom(t,
		loom.WithFixedStep(time.Millisecond, func(time.Duration) { reenter("fixed step") }),
		loom.WithFrameObserver(func(loom.FrameStats) { reenter("frame observer") }))
	l.Configure(loom.WithPanicHandler(func(e *loom.PanicError) { p.Add(e); reenter("panic handler") }))
	l.Configure(loom.WithWakeFunc(func() { reenter("wake function") }))
	l.Post(func() { reenter("action") })
	l.PostAfter(0, func() { reenter("delayed action") })
	l.Post(func() { panic("to reach the panic handler") })
	var c *loom.Coroutine
	c = l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		reenter("coroutine")
		c.Err()
		yield(loom.WaitUntil(func() bool { reenter("wait predicate"); c.Err(); return true }))
		yield(loom.WaitCustom(customFunc(func() bool { reenter("KeepWaiting"); return false })))
		yield(loom.WaitFor(doneFunc(func() <-chan struct{} { reenter("Done"); return nil })))
	})
	frames(l, 4, time.Millisecond)
	for _, name := range []string{"fixed step", "frame observer", "panic handler", "wake function", "action",
		"delayed action", "coroutine", "wait predicate", "KeepWaiting", "Done"} {
		if calls[name] == 0 {
			t.Errorf("the %s was never called", name)
		}
	}
	if p.Len() != 1 {
		t.Errorf("%d panics reported; want 1", p.Len())
	}
}

// customFunc is a KeepWaiter made of a function.
type customFunc func() bool

func (f customFunc) KeepWaiting() bool { return f() }

// doneFunc is a Waitable made of a function.
type doneFunc func() <-chan struct{}

func (f doneFunc) Done() <-chan struct{} { return f() }

// TestPanicInActionIsReportedAndFrameGoesOn: a panic in an action or a
// delayed action is recovered and given to the panic handler, with its
// value and the stack where it happened, and the frame goes on with the
// next one.
func TestPanicInActionIsReportedAndFrameGoesOn(t *testing.T) {
	l, p := testLoom(t)
	var r recorder
	l.Post(func() { panic("boom") })
	l.Post(r.note("after the panic"))
	l.PostAfter(0, func() { panic(fmt.Errorf("delayed boom")) })
	l.PostAfter(0, r.note("delayed after the panic"))
	update(t, l)
	r.expect(t, "frame", "after the panic", "delayed after the panic")
	got := p.Take()
	if len(got) != 2 || got[0].Value != "boom" || got[1].Error() == "" {
		t.Fatalf("handler got %v; want the two panics", got)
	}
	for _, e := range got {
		if !strings.Contains(string(e.Stack), "TestPanicInActionIsReportedAndFrameGoesOn") {
			t.Errorf("stack does not show the action:\n%s", e.Stack)
		}
	}
}

// TestPanicsInOneFrameEachReported checks that a frame whose actions panic
// one after another reports each panic once, in order, with its value, and
// runs every other action in order, under a budget as without: a panic
// counts as a run action, ends no frame early, and what the budget leaves
// carries over.
func TestPanicsInOneFrameEachReported(t *testing.T) {
	for _, maxActions := range []int{0, 1, 4} {
		t.Run(fmt.Sprintf("maxActions=%d", maxActions), func(t *testing.T) {
			l, p := testLoom(t, loom.WithBudget(maxActions, 0))
			var ran []int
			var wantRan, wantPanics []int
			for i := range 30 {
				if i%3 == 0 || i == 29 {
					l.Post(func() { panic(i) })
					wantPanics = append(wantPanics, i)
					continue
				}
				l.Post(func() { ran = append(ran, i) })
				wantRan = append(wantRan, i)
			}
			var gotPanics []int
			for frame := 0; len(ran)+len(gotPanics) < 30; frame++ {
				if frame > 30 {
					t.Fatalf("after %d frames, %d actions ran and %d panicked; want 30 in all", frame, len(ran), len(gotPanics))
				}
				before := len(ran) + len(gotPanics)
				l.UpdateDelta(time.Millisecond)
				for _, e := range p.Take() {
					v, ok := e.Value.(int)
					if !ok {
						t.Fatalf("panic value %v (%T); want an int", e.Value, e.Value)
					}
					gotPanics = append(gotPanics, v)
				}
				want := 30 - before // the whole batch, or the budget's share of it
				if maxActions > 0 {
					want = min(want, maxActions)
				}
				if n := len(ran) + len(gotPanics) - before; n != want {
					t.Fatalf("frame %d ran %d actions, panics included; want %d", frame, n, want)
				}
			}
			if !slices.Equal(ran, wantRan) {
				t.Errorf("ran %v; want %v", ran, wantRan)
			}
			if !slices.Equal(gotPanics, wantPanics) {
				t.Errorf("panics reported %v; want %v", gotPanics, wantPanics)
			}
		})
	}
}

// TestBudgetCarriesOverInOrder: a budget of n actions runs at most n
// posted and n delayed actions a frame, each phase on its own budget, and
// at least one of each; a time budget starts no action once spent; what is
// left carries over, in order, ahead of newer posts, and the frame's
// statistics count it. Coroutines are not counted.
func TestBudgetCarriesOverInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := loom.New(loom.WithBudget(3, 0))
		defer l.Close()
		last := observeFrames(l)
		var r recorder
		for i := range 5 {
			l.Post(r.note(fmt.Sprint("a", i)))
		}
		for i := range 4 {
			l.PostAfter(0, r.note(fmt.Sprint("d", i)))
		}
		l.PostAfter(time.Hour, r.note("later"))
		l.Update()
		// Each phase has its own budget: the flood of posts does not hold
		// the timers back, nor the other way round.
		r.expect(t, "frame 1", "a0", "a1", "a2", "d0", "d1", "d2")
		if st := last(); st.Actions != 3 || st.Delayed != 3 || st.CarriedOver != 2 || st.Pending != 2 {
			t.Errorf("frame 1: %+v; want 3 actions, 3 delayed, 2 carried over, 2 pending", st)
		}
		l.Post(r.note("late"))
		for i := range 5 { // coroutines are not counted
			l.StartCoroutine(func(func(loom.Instruction) bool) { r.add(fmt.Sprint("c", i)) })
		}
		l.Update()
		r.expect(t, "frame 2", "a3", "a4", "late", "d3", "c0", "c1", "c2", "c3", "c4")
		if st := last(); st.Actions != 3 || st.Delayed != 1 || st.CarriedOver != 0 || st.Pending != 1 {
			t.Errorf("frame 2: %+v; want 3 actions, 1 delayed, none carried over, 1 pending", st)
		}

		// A time budget stops the frame once spent; a frame runs one action
		// at least, however slow.
		l.Configure(loom.WithBudget(0, 10*time.Millisecond))
		for i := range 4 {
			l.Post(func() { r.add(fmt.Sprint("slow", i)); time.Sleep(6 * time.Millisecond) })
		}
		l.Update()
		r.expect(t, "time budget", "slow0", "slow1")
		l.Configure(loom.WithBudget(0, time.Millisecond))
		l.Update()
		r.expect(t, "a budget shorter than an action", "slow2")
		l.Update()
		r.expect(t, "the last", "slow3")
	})
}

// TestBudgetCarriesDelayedActionsOfBothClocksAhead: what a frame's budget
// leaves of its delayed actions, on unscaled time and on scaled time, runs
// ahead of delayed actions posted later, whichever clock those are on: a
// scaled action left over is not put behind newer unscaled ones, and a
// timer that posts itself again every frame does not starve it.
func TestBudgetCarriesDelayedActionsOfBothClocksAhead(t *testing.T) {
	l, p := testLoom(t, loom.WithBudget(1, 0))
	var r recorder
	l.PostAfter(0, r.note("old unscaled"))
	l.PostAfterScaled(0, r.note("old scaled"))
	update(t, l)
	r.expect(t, "frame 1", "old unscaled")
	l.PostAfter(0, r.note("new unscaled"))
	update(t, l)
	update(t, l)
	r.expect(t, "frames 2 and 3", "old scaled", "new unscaled")

	var tick func()
	tick = func() { r.add("tick"); l.PostAfter(0, tick) }
	l.PostAfter(0, tick)
	update(t, l)
	l.PostAfterScaled(0, r.note("scaled"))
	update(t, l)
	update(t, l)
	update(t, l)
	r.expect(t, "a timer that posts itself each frame", "tick", "tick", "scaled", "tick")
	if got := p.Take(); len(got) != 0 {
		t.Fatalf("panics: %v", got)
	}
}

// TestObserverPanicGoesToHandler: a panicking frame observer is reported
// to the panic handler, and the next frame runs as usual.
func TestObserverPanicGoesToHandler(t *testing.T) {
	l, p := testLoom(t, loom.WithFrameObserver(func(fs loom.FrameStats) { panic(fs.Frame) }))
	var r recorder
	l.Post(r.note("frame 1"))
	update(t, l)
	l.Post(r.note("frame 2"))
	update(t, l)
	r.expect(t, "two frames", "frame 1", "frame 2")
	if got := p.Take(); len(got) != 2 || got[0].Value != int64(1) || got[1].Value != int64(2) {
		t.Errorf("the handler got %v; want the observer's panics of frames 1 and 2", got)
	}
}

// TestFrameStats: the observer sees each frame's statistics, at its end.
func TestFrameStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen []loom.FrameStats
		l := loom.New(loom.WithBudget(3, 0), loom.WithFixedStep(10*time.Millisecond, nil),
			loom.WithFrameObserver(func(fs loom.FrameStats) { seen = append(seen, fs) }))
		defer l.Close()
		for range 5 {
			l.Post(func() { time.Sleep(time.Millisecond) })
		}
		l.PostAfter(0, func() {})
		l.PostAfter(time.Hour, func() {})
		l.StartCoroutine(func(y func(loom.Instruction) bool) {
			for y(loom.NextFrame()) {
			}
		})
		time.Sleep(25 * time.Millisecond)
		l.Update()
		want := loom.FrameStats{Frame: 1, FixedSteps: 2, Duration: 3 * time.Millisecond, Actions: 3, Delayed: 1, CarriedOver: 2, Coroutines: 1, Pending: 1}
		if len(seen) != 1 || seen[0] != want {
			t.Fatalf("observed %+v; want %+v", seen, want)
		}
		l.Update()
		if len(seen) != 2 || seen[1].Actions != 2 || seen[1].CarriedOver != 0 || seen[1].Duration != 2*time.Millisecond {
			t.Fatalf("the observer saw %+v", seen)
		}
	})
}

// TestFrameTraceRegion: with tracing on, each frame is a region named
// after the loom.
func TestFrameTraceRegion(t *testing.T) {
	if rtrace.IsEnabled() {
		t.Skip("a trace is running already")
	}
	var buf bytes.Buffer
	if err := rtrace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	l, _ := testLoom(t, loom.WithName("hud"))
	update(t, l)
	rtrace.Stop()
	if !bytes.Contains(buf.Bytes(), []byte("loom frame hud")) {
		t.Fatal("the trace holds no region named \"loom frame hud\"")
	}
}

// TestSteadyFrameAllocatesNothing checks the allocation budget of a frame:
// a frame that runs posted actions, one that runs timers which re-arm
// themselves, and their statistics, given to an observer of a named loom,
// allocate nothing once their buffers have grown.
func TestSteadyFrameAllocatesNothing(t *testing.T) {
	observed := 0
	l, _ := testLoom(t, loom.WithName("steady"), loom.WithFrameObserver(func(fs loom.FrameStats) { observed += fs.Actions + fs.Delayed }))
	n := 0
	f := func() { n++ }
	frame := func() {
		for range 100 {
			l.Post(f)
		}
		l.UpdateDelta(time.Millisecond)
	}
	frame()
	if allocs := testing.AllocsPerRun(100, frame); allocs != 0 {
		t.Errorf("a frame of 100 posted actions allocates %v times; want 0", allocs)
	}
	if n != 102*100 || observed != n { // one frame, then AllocsPerRun's warm-up run and its 100
		t.Errorf("%d actions ran, %d observed; want %d", n, observed, 102*100)
	}
	timers := make([]*loom.Timer, 1000)
	for i := range timers {
		timers[i] = l.PostAfter(time.Duration(i%10)*time.Millisecond, func() {
			timers[i].Reset(10 * time.Millisecond)
		})
	}
	l.UpdateDelta(time.Millisecond)
	observed = 0
	if allocs := testing.AllocsPerRun(100, func() { l.UpdateDelta(time.Millisecond) }); allocs != 0 {
		t.Errorf("a frame of re-arming timers allocates %v times; want 0", allocs)
	}
	if observed != 101*100 { // a tenth of the timers a frame
		t.Errorf("%d timers observed in 101 frames; want %d", observed, 101*100)
	}
}

// TestFloodBuffersShrink: after a flood of posts drained under a budget,
// the loom gives its buffers back: memory follows what is live. A steady
// load keeps its buffers (TestSteadyFrameAllocatesNothing). Under the race
// detector and -short, the flood is a tenth as large; CI runs it at full
// size without the race detector.
func TestFloodBuffersShrink(t *testing.T) {
	t.Parallel() // long, and shares nothing with the other tests: it runs beside them
	flood, budget := 300_000, 10_000
	if testkit.RaceEnabled || testing.Short() {
		flood, budget = 30_000, 1_000
	}
	l, _ := testLoom(t, loom.WithBudget(budget, 0))
	nop := func() {}
	for range 3 {
		for range flood {
			l.Post(nop)
		}
		n := 0
		for l.Idle().Now {
			update(t, l)
			n++
			if n == 1 {
				if b, _ := l.BufferCaps(); b < flood-budget {
					t.Fatalf("batch capacity %d during the flood; want the backlog, %d", b, flood-budget)
				}
			}
		}
		if n != flood/budget {
			t.Fatalf("the flood drained in %d frames, want %d at %d a frame", n, flood/budget, budget)
		}
	}
	for range 32 {
		update(t, l)
	}
	if b, p := l.BufferCaps(); b > loom.MinShrink || p > loom.MinShrink {
		t.Fatalf("after the flood, buffers of %d and %d actions remain; want at most %d", b, p, loom.MinShrink)
	}
}

// BenchmarkPostAndUpdate measures an action's whole way: posted, then run by
// a frame of 1000 actions.
func BenchmarkPostAndUpdate(b *testing.B) {
	b.ReportAllocs()
	l := loom.New(loom.ManualClock())
	n := 0
	f := func() { n++ }
	for i := 1; b.Loop(); i++ {
		l.Post(f)
		if i%1000 == 0 {
			l.UpdateDelta(time.Millisecond)
		}
	}
}

// BenchmarkFrameBacklog measures a frame that runs its budget of 1,000
// posted actions out of a backlog of 10,000 to a million, kept full by 1,000
// posts each frame: the frame's cost must follow the budget, not the backlog.
func BenchmarkFrameBacklog(b *testing.B) {
	const budget = 1_000
	for _, backlog := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("backlog=%d", backlog), func(b *testing.B) {
			l := loom.New(loom.ManualClock(), loom.WithBudget(budget, 0))
			defer l.Close()
			nop := func() {}
			for range backlog {
				l.Post(nop)
			}
			l.UpdateDelta(time.Millisecond) // the backlog is now the frame's batch
			b.ReportAllocs()
			for b.Loop() {
				for range budget {
					l.Post(nop)
				}
				l.UpdateDelta(time.Millisecond)
			}
		})
	}
}

// BenchmarkFloodMemory posts 3 floods of a million actions, drains each under
// a budget of 10,000 actions a frame, then runs a few idle frames, and
// reports the heap that is still in use: the buffers of a flood must go once
// it has passed.
func BenchmarkFloodMemory(b *testing.B) {
	var ms runtime.MemStats
	var before, after uint64
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before = ms.HeapAlloc
		l := loom.New(loom.ManualClock(), loom.WithBudget(10_000, 0))
		nop := func() {}
		for range 3 {
			for range 1_000_000 {
				l.Post(nop)
			}
			for l.Idle().Now {
				l.UpdateDelta(time.Millisecond)
			}
		}
		for range 32 {
			l.UpdateDelta(time.Millisecond)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		after = ms.HeapAlloc
		runtime.KeepAlive(l)
		l.Close()
	}
	b.ReportMetric(float64(int64(after)-int64(before)), "heap-B-after-flood")
}
