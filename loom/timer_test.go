package loom_test

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
)

// TestDelayedNeverEarly: a delayed action runs in the first frame whose
// time is at or past its due time, never in one before, on the real clock.
func TestDelayedNeverEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := loom.New()
		defer l.Close()
		var r recorder
		l.PostAfter(time.Second, r.note("due"))
		l.PostAfter(3*time.Second, r.note("at"))
		time.Sleep(time.Second - time.Nanosecond)
		l.Update()
		r.expect(t, "1ns early")
		time.Sleep(time.Nanosecond)
		l.Update()
		r.expect(t, "on time", "due")
		time.Sleep(2*time.Second - time.Nanosecond)
		l.Update()
		r.expect(t, "1ns before the instant")
		time.Sleep(time.Nanosecond)
		l.Update()
		r.expect(t, "at the instant", "at")
	})
}

// TestTimerStopAndReset: Stop keeps a waiting timer from running and
// reports whether it did; Reset makes a timer wait d from now, whether it
// was waiting, ran or was stopped, and reports whether it was waiting; a
// timer stopped by one that runs before it in the same frame does not run;
// a timer reset while it runs runs again in a later frame, at most once a
// frame; after Close, Reset reports false.
func TestTimerStopAndReset(t *testing.T) {
	l, _ := testLoom(t)
	r := &recorder{l: l}
	a := l.PostAfter(time.Second, r.note("a"))
	if !a.Stop() || a.Stop() {
		t.Error("Stop, Stop = want true, false")
	}
	b := l.PostAfter(time.Second, r.note("b"))
	if !b.Reset(3 * time.Second) {
		t.Error("Reset of a waiting timer = false; want true")
	}
	l.UpdateDelta(3*time.Second - time.Nanosecond)
	r.expect(t, "1ns before the reset time")
	l.UpdateDelta(time.Nanosecond)
	r.expect(t, "at the reset time", "2:b")
	if b.Reset(time.Second) {
		t.Error("Reset of a timer that ran = true; want false")
	}
	l.UpdateDelta(time.Second)
	r.expect(t, "reset after its run", "3:b")
	b.Reset(time.Second)
	if !b.Stop() || b.Reset(time.Second) {
		t.Error("Stop of a timer reset after its run, then Reset = want true, false")
	}
	l.UpdateDelta(time.Second)
	r.expect(t, "reset after Stop", "4:b")
	if b.Err() != nil {
		t.Errorf("Err() = %v after runs and a Stop; want nil", b.Err())
	}

	var c *loom.Timer
	l.PostAfter(time.Second, func() { r.add("stopper"); c.Stop() })
	c = l.PostAfter(time.Second, r.note("c"))
	l.UpdateDelta(time.Second)
	r.expect(t, "stopped by a timer of the same frame", "5:stopper")

	var tick *loom.Timer
	tick = l.PostAfter(0, func() { r.add("tick"); tick.Reset(0) })
	frames(l, 3, time.Millisecond)
	r.expect(t, "reset to 0 as it runs", "6:tick", "7:tick", "8:tick")
	tick.Stop()

	var again *loom.Timer
	again = l.PostAfter(10*time.Millisecond, func() {
		r.add("again")
		if r.l.Frame() == 9 {
			again.Reset(5 * time.Millisecond)
		}
	})
	l.UpdateDelta(10 * time.Millisecond)
	if again.IsDone() {
		t.Error("a timer reset as it ran reports IsDone")
	}
	l.UpdateDelta(4 * time.Millisecond)
	l.UpdateDelta(time.Millisecond)
	r.expect(t, "reset to 5ms as it runs", "9:again", "11:again")
	l.Close()
	if again.Reset(time.Millisecond) {
		t.Error("Reset after Close = true; want false")
	}
}

// TestTimerFromAnotherGoroutine: a timer is safe for use by several
// goroutines: one resets it, reads it and at last stops it while frames
// run it; once Stop has returned, it never runs again. Halfway, the
// goroutine leaves the timer alone until a frame has run it, so that it
// runs at least once however the two goroutines are scheduled.
func TestTimerFromAnotherGoroutine(t *testing.T) {
	l, _ := testLoom(t)
	var runs atomic.Int32
	tm := l.PostAfter(time.Millisecond, func() { runs.Add(1) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 1000 {
			if i == 500 {
				for runs.Load() == 0 {
					runtime.Gosched() // a frame runs the timer a millisecond after its last Reset
				}
			}
			tm.Reset(time.Millisecond)
			tm.IsDone()
			tm.Done()
			tm.Err()
			runtime.Gosched() // lets the frames run where all goroutines share one thread (js/wasm)
		}
		tm.Stop()
	}()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			update(t, l)
			runtime.Gosched()
		}
	}
	after := runs.Load()
	frames(l, 3, time.Millisecond)
	if runs.Load() != after || !tm.IsDone() || runs.Load() == 0 {
		t.Errorf("%d runs, %d after the last Stop, done %v; want some, none after, done", runs.Load(), runs.Load()-after, tm.IsDone())
	}
}

// TestTimerDone: a timer is done (IsDone, and its Done channel closed) once
// it is not waiting any more: it ran, or was stopped; Reset makes it wait
// again, with a new Done channel.
func TestTimerDone(t *testing.T) {
	l, _ := testLoom(t)
	ran := 0
	a := l.PostAfter(2*time.Millisecond, func() { ran++ })
	b := l.PostAfter(2*time.Millisecond, func() {})
	aDone, bDone := a.Done(), b.Done()
	if a.IsDone() || b.IsDone() || testkit.IsClosed(aDone) || testkit.IsClosed(bDone) {
		t.Fatal("a waiting timer reports done")
	}
	b.Stop()
	if !b.IsDone() || !testkit.IsClosed(bDone) || !testkit.IsClosed(b.Done()) {
		t.Fatal("a stopped timer reports not done")
	}
	update(t, l)
	if a.IsDone() || testkit.IsClosed(aDone) {
		t.Fatal("a timer not due yet reports done")
	}
	update(t, l)
	if !a.IsDone() || !testkit.IsClosed(aDone) || ran != 1 {
		t.Fatalf("after its due time: done %v, Done closed %v, ran %d", a.IsDone(), testkit.IsClosed(aDone), ran)
	}
	a.Reset(time.Millisecond)
	if a.IsDone() || testkit.IsClosed(a.Done()) {
		t.Fatal("a reset timer reports done")
	}
	update(t, l)
	if !a.IsDone() || ran != 2 {
		t.Fatalf("after its reset time: done %v, ran %d", a.IsDone(), ran)
	}
}

// TestTimerResetAfterClose: once its loom or scope has closed, Reset does
// nothing and reports false, even for a timer that was not waiting then (it
// had run, or was stopped): it never runs again and stays done.
func TestTimerResetAfterClose(t *testing.T) {
	l, _ := testLoom(t)
	s := l.NewScope()
	runs := map[string]int{}
	timers := map[string]*loom.Timer{}
	for _, name := range []string{"ran", "stopped"} {
		for _, post := range []struct {
			of string
			f  func(time.Duration, func()) *loom.Timer
		}{{"loom", l.PostAfter}, {"scope", s.PostAfter}, {"loom scaled", l.PostAfterScaled}, {"scope scaled", s.PostAfterScaled}} {
			key := post.of + " " + name
			timers[key] = post.f(0, func() { runs[key]++ })
			if name == "stopped" {
				timers[key].Stop()
			}
		}
	}
	update(t, l)
	s.Close()
	for key, tm := range timers {
		if strings.HasPrefix(key, "scope") && tm.Reset(0) {
			t.Errorf("%s: Reset after its scope closed = true; want false", key)
		}
	}
	update(t, l)
	l.Close()
	for key, tm := range timers {
		if tm.Reset(0) {
			t.Errorf("%s: Reset after its loom closed = true; want false", key)
		}
		want := 0
		if strings.HasSuffix(key, "ran") {
			want = 1
		}
		if runs[key] != want || !tm.IsDone() || !testkit.IsClosed(tm.Done()) {
			t.Errorf("%s: %d runs, done %v; want %d, done", key, runs[key], tm.IsDone(), want)
		}
	}
}

// TestScaledTimers checks PostAfterScaled: its timers count on scaled time,
// so a time scale of 0 holds them back and 2 brings them twice as soon; they
// run after the frame's unscaled timers; Reset and Stop work on them; Idle
// reports when the next one is due; closing the loom or their scope ends
// them with ErrClosed.
func TestScaledTimers(t *testing.T) {
	r := &recorder{}
	l := loom.New(loom.ManualClock())
	lastFrame := observeFrames(l)
	l.PostAfterScaled(100*time.Millisecond, r.note("scaled 100ms"))
	l.PostAfter(100*time.Millisecond, r.note("unscaled 100ms"))
	l.SetTimeScale(0)
	l.UpdateDelta(time.Second)
	r.expect(t, "paused", "unscaled 100ms")
	if i := l.Idle(); i.Timed {
		t.Errorf("Idle while paused = %+v; want no timed work", i)
	}
	l.SetTimeScale(2)
	l.PostAfter(60*time.Millisecond, r.note("unscaled 60ms"))
	if i := l.Idle(); !i.Timed || i.Delay != 50*time.Millisecond {
		t.Errorf("Idle at double speed = %+v; want the scaled timer due in 50ms", i)
	}
	l.UpdateDelta(40 * time.Millisecond)
	r.expect(t, "40ms at double speed")
	l.UpdateDelta(20 * time.Millisecond) // 120ms of scaled time, 60ms unscaled
	r.expect(t, "60ms at double speed", "unscaled 60ms", "scaled 100ms")

	tm := l.PostAfterScaled(50*time.Millisecond, r.note("reset"))
	if !tm.Reset(200 * time.Millisecond) {
		t.Error("Reset of a waiting scaled timer reported false")
	}
	l.UpdateDelta(50 * time.Millisecond) // 100ms scaled
	r.expect(t, "before the reset time")
	l.UpdateDelta(50 * time.Millisecond) // 200ms scaled
	r.expect(t, "at the reset time", "reset")
	stopped := l.PostAfterScaled(0, r.note("stopped"))
	if !stopped.Stop() || !stopped.IsDone() {
		t.Error("Stop of a waiting scaled timer failed")
	}
	l.UpdateDelta(time.Second)
	r.expect(t, "after Stop")

	s := l.NewScope()
	ofScope := s.PostAfterScaled(time.Second, r.note("of the scope"))
	s.Close()
	pending := l.PostAfterScaled(time.Second, r.note("pending at Close"))
	if lastFrame().Pending != 0 {
		t.Errorf("Pending = %d; want 0", lastFrame().Pending)
	}
	l.UpdateDelta(0)
	if got := lastFrame().Pending; got != 1 {
		t.Errorf("Pending = %d; want the one scaled timer", got)
	}
	l.Close()
	r.expect(t, "after Close")
	if !errors.Is(ofScope.Err(), loom.ErrClosed) || !errors.Is(pending.Err(), loom.ErrClosed) {
		t.Errorf("Err of a scope's timer %v, of a pending one %v; want ErrClosed for both", ofScope.Err(), pending.Err())
	}
	if after := l.PostAfterScaled(0, r.note("after Close")); !errors.Is(after.Err(), loom.ErrClosed) {
		t.Errorf("PostAfterScaled after Close: Err %v; want ErrClosed", after.Err())
	}
}

// TestScaledTimersStale checks that scaled timers reset over and over leave
// a bounded heap, as unscaled ones do.
func TestScaledTimersStale(t *testing.T) {
	l, _ := testLoom(t)
	lastFrame := observeFrames(l)
	tm := l.PostAfterScaled(time.Hour, func() {})
	for range 10_000 {
		tm.Reset(time.Hour)
	}
	ran := false
	tm2 := l.PostAfterScaled(time.Millisecond, func() { ran = true })
	l.UpdateDelta(time.Millisecond)
	if !ran || !tm2.IsDone() {
		t.Error("a scaled timer behind 10,000 stale entries did not run")
	}
	if got := lastFrame().Pending; got != 1 {
		t.Errorf("Pending = %d; want 1", got)
	}
}

// TestTimerDelaysSaturate: a delay near math.MaxInt64, the natural "no
// timeout", means a due time at the end of the clock's range, not one
// wrapped round to the past: such timers wait, for either clock and through
// Reset and a Scope, frame after frame.
func TestTimerDelaysSaturate(t *testing.T) {
	for _, d := range []time.Duration{math.MaxInt64, math.MaxInt64 - time.Millisecond/2} {
		t.Run(fmt.Sprintf("MaxInt64-%d", math.MaxInt64-d), func(t *testing.T) {
			l, _ := testLoom(t)
			s := l.NewScope()
			l.UpdateDelta(time.Millisecond) // the clock is past zero: now + d would wrap
			ran := map[string]bool{}
			note := func(name string) func() { return func() { ran[name] = true } }
			timers := map[string]*loom.Timer{
				"PostAfter":             l.PostAfter(d, note("PostAfter")),
				"PostAfterScaled":       l.PostAfterScaled(d, note("PostAfterScaled")),
				"Scope.PostAfter":       s.PostAfter(d, note("Scope.PostAfter")),
				"Scope.PostAfterScaled": s.PostAfterScaled(d, note("Scope.PostAfterScaled")),
				"Reset":                 l.PostAfter(time.Millisecond, note("Reset")),
				"Reset scaled":          l.PostAfterScaled(time.Millisecond, note("Reset scaled")),
			}
			timers["Reset"].Reset(d)
			timers["Reset scaled"].Reset(d)
			frames(l, 3, time.Hour)
			for name, tm := range timers {
				if ran[name] || tm.IsDone() {
					t.Errorf("%s(%v): ran %v, IsDone() = %v after 3 hours; want it waiting", name, d, ran[name], tm.IsDone())
				}
			}
			if i := l.Idle(); !i.Timed || i.Delay < 100*365*24*time.Hour {
				t.Errorf("Idle() = %+v; want the timers due in about 292 years", i)
			}
			l.SetTimeScale(1e-300) // scaled time all but stopped: its timers are due further still
			if i := l.Idle(); !i.Timed || i.Delay < 100*365*24*time.Hour {
				t.Errorf("Idle() = %+v at a time scale of 1e-300; want the timers due in about 292 years", i)
			}
		})
	}
	// The real clock too, where now is never zero.
	synctest.Test(t, func(t *testing.T) {
		l := loom.New()
		defer l.Close()
		time.Sleep(time.Millisecond)
		ran := false
		tm := l.PostAfter(math.MaxInt64, func() { ran = true })
		for range 3 {
			time.Sleep(time.Hour)
			l.Update()
		}
		if ran || tm.IsDone() {
			t.Errorf("PostAfter(MaxInt64) on the real clock: ran %v, IsDone() = %v; want it waiting", ran, tm.IsDone())
		}
	})
}

// TestZeroTimerPanics: the zero Timer is not usable, as documented, and
// says which calls make one.
func TestZeroTimerPanics(t *testing.T) {
	var tm loom.Timer
	const want = "loom: use of a zero Timer; timers are made by PostAfter and PostAfterScaled"
	checkMisuse(t,
		misuse{func() { tm.Stop() }, want},
		misuse{func() { tm.Reset(time.Second) }, want},
		misuse{func() { tm.IsDone() }, want},
		misuse{func() { tm.Done() }, want},
		misuse{func() { tm.Err() }, want},
	)
}

// refTimer is a timer of the reference of the timer models: when it is
// due, in what order it was scheduled, and what its action does.
type refTimer struct {
	due     time.Duration
	seq     int
	waiting bool // set only by timerModel.wait
	at      int  // its index in timerModel.waiting while it waits
	scaled  bool
	act     int // 0: note its run; 1: stop its target; 2: reset its target by d
	target  int
	d       time.Duration
}

// before reports whether r runs before q in a frame in which both are due:
// unscaled timers first, then by due time, then in the order they were
// scheduled.
func (r *refTimer) before(q *refTimer) bool {
	if r.scaled != q.scaled {
		return !r.scaled
	}
	return r.due < q.due || r.due == q.due && r.seq < q.seq
}

// timerModel is what the timer models share: a loom's timers beside their
// reference, and the reference's clock and sequence.
type timerModel struct {
	t      *testing.T
	timers []*loom.Timer
	ref    []refTimer // by index: copies of refTimer cost the race detector a range check each
	now    time.Duration
	seq    int
	// waiting holds the indices in ref of the waiting timers, in no order,
	// so that a frame looks at those alone, not at every timer ever made.
	waiting []int
}

// wait marks timer k of the reference as waiting, or not.
func (m *timerModel) wait(k int, waiting bool) {
	r := &m.ref[k]
	if r.waiting == waiting {
		return
	}
	r.waiting = waiting
	if waiting {
		r.at = len(m.waiting)
		m.waiting = append(m.waiting, k)
		return
	}
	last := m.waiting[len(m.waiting)-1]
	m.waiting[r.at], m.ref[last].at = last, r.at
	m.waiting = m.waiting[:len(m.waiting)-1]
}

// add records the timer tm, just scheduled as r, which waits.
func (m *timerModel) add(tm *loom.Timer, r refTimer) {
	m.timers = append(m.timers, tm)
	m.ref = append(m.ref, r)
	m.wait(len(m.ref)-1, true)
}

// stop stops timer k between frames, as operation op, checking what Stop
// reports against the reference.
func (m *timerModel) stop(op, k int) {
	if got, want := m.timers[k].Stop(), m.ref[k].waiting; got != want {
		m.t.Fatalf("op %d: Stop(timer %d) = %v; want %v", op, k, got, want)
	}
	m.wait(k, false)
}

// reset resets timer k by d between frames, as operation op, checking what
// Reset reports against the reference.
func (m *timerModel) reset(op, k int, d time.Duration) {
	if got, want := m.timers[k].Reset(d), m.ref[k].waiting; got != want {
		m.t.Fatalf("op %d: Reset(timer %d) = %v; want %v", op, k, got, want)
	}
	m.seq++
	m.ref[k].due, m.ref[k].seq = m.now+d, m.seq
	m.wait(k, true)
}

// checkTimers runs random PostAfter, Stop, Reset and frame operations on a
// loom driven by UpdateDelta and on a reference that keeps each timer's due
// time and order, and compares what each frame runs.
func checkTimers(t *testing.T, ops []byte) {
	l := loom.New(loom.ManualClock())
	m := timerModel{t: t}
	var ran []int
	for i := 0; i+1 < len(ops); i += 2 {
		op, arg := ops[i]%5, int(ops[i+1])
		switch op {
		case 0, 1: // post: two operations in five
			k := len(m.timers)
			d := time.Duration(arg%32) * time.Millisecond
			m.seq++
			m.add(l.PostAfter(d, func() { ran = append(ran, k) }), refTimer{due: m.now + d, seq: m.seq})
		case 2:
			if len(m.timers) > 0 {
				m.stop(i, arg%len(m.timers))
			}
		case 3:
			if len(m.timers) > 0 {
				m.reset(i, arg%len(m.timers), time.Duration(arg%7)*time.Millisecond)
			}
		case 4: // frame
			m.now += time.Duration(arg%8) * time.Millisecond
			var want []int
			for _, k := range m.waiting {
				if m.ref[k].due <= m.now {
					want = append(want, k)
				}
			}
			slices.SortFunc(want, func(a, b int) int {
				return cmp.Or(cmp.Compare(m.ref[a].due, m.ref[b].due), cmp.Compare(m.ref[a].seq, m.ref[b].seq))
			})
			for _, k := range want {
				m.wait(k, false)
			}
			ran = ran[:0]
			l.UpdateDelta(time.Duration(arg%8) * time.Millisecond)
			if !slices.Equal(ran, want) && !(len(ran) == 0 && len(want) == 0) {
				t.Fatalf("op %d: frame at %v ran timers %v; want %v", i, m.now, ran, want)
			}
		}
	}
	if stale, entries := l.Stale(); stale > 64 && stale > entries/2 {
		t.Errorf("%d stale entries out of %d: compaction did not run", stale, entries)
	}
	l.Close()
}

func FuzzTimers(f *testing.F) {
	f.Add([]byte{0, 3, 0, 1, 4, 2, 3, 5, 2, 0, 4, 7, 4, 7})
	f.Fuzz(func(t *testing.T, ops []byte) {
		checkTimers(t, ops[:min(len(ops), 4000)])
	})
}

func TestTimersRandom(t *testing.T) {
	t.Parallel() // long, and shares nothing with the other tests: it runs beside them
	checkRandom(t, 11, 100, 4000, checkTimers)
}

// checkRandom runs check on n random sequences of size operations, drawn
// from seed.
func checkRandom(t *testing.T, seed uint64, n, size int, check func(*testing.T, []byte)) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	ops := make([]byte, size)
	for range n {
		for i := range ops {
			ops[i] = byte(r.UintN(256))
		}
		check(t, ops)
	}
}

// checkTimersInFrame runs timers whose actions stop or reset other timers,
// or themselves, in the frame that runs them, on a loom with a budget of
// actions per frame, against a plain model: each frame runs, one at a time,
// until the budget is spent, the earliest waiting timer of the oldest frame
// whose timers are not all run yet (those due at that frame's time and
// scheduled before it began, those of PostAfter before those of
// PostAfterScaled), so that what a frame leaves runs ahead of newer timers;
// an action's Stop or Reset takes effect at once, and reports what the
// model says. The time scale stays 1, so that both clocks read the same.
func checkTimersInFrame(t *testing.T, ops []byte) {
	if len(ops) == 0 {
		return
	}
	budget := int(ops[0]%6) + 1
	l := loom.New(loom.ManualClock(), loom.WithBudget(budget, 0))
	defer l.Close()
	// did is what an action did: note its timer, or stop or reset its
	// target, with what Stop or Reset reported.
	type did struct {
		k, act, target int
		reported       bool
	}
	m := timerModel{t: t}
	// cuts holds, oldest first, the frames whose timers may not all have
	// run: each frame's time and the last sequence number before it began.
	type cut struct {
		now time.Duration
		seq int
	}
	var cuts []cut
	var ran []did // what the loom's actions did, in order
	for i := 1; i+2 < len(ops); i += 3 {
		op, a, b := ops[i]%4, int(ops[i+1]), int(ops[i+2])
		switch op {
		case 0, 1: // post, on unscaled time or on scaled time
			k := len(m.timers)
			m.seq++
			r := refTimer{
				due: m.now + time.Duration(a%16)*time.Millisecond, seq: m.seq,
				scaled: op == 1, act: b % 3, target: (b / 3) % (k + 1), d: time.Duration(a%5) * time.Millisecond,
			}
			post := l.PostAfter
			if r.scaled {
				post = l.PostAfterScaled
			}
			m.add(post(r.due-m.now, func() {
				switch r.act {
				case 0:
					ran = append(ran, did{k: k})
				case 1:
					ran = append(ran, did{k, 1, r.target, m.timers[r.target].Stop()})
				case 2:
					ran = append(ran, did{k, 2, r.target, m.timers[r.target].Reset(r.d)})
				}
			}), r)
		case 2: // stop or reset between frames
			if len(m.timers) == 0 {
				continue
			}
			if k := a % len(m.timers); b%2 == 0 {
				m.stop(i, k)
			} else {
				m.reset(i, k, time.Duration(b%7)*time.Millisecond)
			}
		case 3: // frame
			dt := time.Duration(a%4) * time.Millisecond
			m.now += dt
			cuts = append(cuts, cut{m.now, m.seq})
			var want []did
			for len(want) < budget && len(cuts) > 0 {
				k := -1
				for _, j := range m.waiting {
					if r := &m.ref[j]; r.due <= cuts[0].now && r.seq <= cuts[0].seq && (k < 0 || r.before(&m.ref[k])) {
						k = j
					}
				}
				if k < 0 {
					cuts = cuts[1:]
					continue
				}
				m.wait(k, false)
				r := &m.ref[k]
				target := &m.ref[r.target]
				switch r.act {
				case 0:
					want = append(want, did{k: k})
				case 1:
					want = append(want, did{k, 1, r.target, target.waiting})
					m.wait(r.target, false)
				case 2:
					want = append(want, did{k, 2, r.target, target.waiting})
					m.seq++
					target.due, target.seq = m.now+r.d, m.seq
					m.wait(r.target, true)
				}
			}
			ran = ran[:0]
			l.UpdateDelta(dt)
			if !slices.Equal(ran, want) {
				t.Fatalf("op %d: frame at %v (budget %d) did %+v; want %+v (act 1: stop, 2: reset)", i, m.now, budget, ran, want)
			}
		}
	}
}

func FuzzTimersInFrame(f *testing.F) {
	f.Add([]byte{2, 0, 3, 0, 0, 3, 4, 3, 0, 0, 3, 1, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		checkTimersInFrame(t, ops[:min(len(ops), 6000)])
	})
}

// TestTimersInFrameRandom runs checkTimersInFrame on random operations:
// about a third of the actions stop a timer and a third reset one, often one
// due in the same frame, and the budget leaves some of each frame's due
// timers to the next.
func TestTimersInFrameRandom(t *testing.T) {
	t.Parallel() // long, and shares nothing with the other tests: it runs beside them
	checkRandom(t, 13, 200, 3000, checkTimersInFrame)
}

// BenchmarkFrameDelayed measures a frame with many pending delayed actions
// of which about one in 300 is due: each frame advances the clock by 1ms and
// the due times are spread over 300ms, each action re-arming itself 300ms
// later. The baseline is the Loom this package ports: a list scanned every
// frame, with List.Remove for each due action.
func BenchmarkFrameDelayed(b *testing.B) {
	const spread = 300 * time.Millisecond
	for _, pending := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("impl=loom/pending=%d", pending), func(b *testing.B) {
			b.ReportAllocs()
			l := loom.New(loom.ManualClock())
			r := rand.New(rand.NewPCG(1, 1))
			timers := make([]*loom.Timer, pending)
			for i := range timers {
				timers[i] = l.PostAfter(time.Duration(r.Int64N(int64(spread))), func() {
					timers[i].Reset(spread)
				})
			}
			for b.Loop() {
				l.UpdateDelta(time.Millisecond)
			}
			b.ReportMetric(float64(pending)/float64(spread/time.Millisecond), "due/frame")
		})
		if pending > 10_000 && testing.Short() {
			continue
		}
		b.Run(fmt.Sprintf("impl=listscan/pending=%d", pending), func(b *testing.B) {
			b.ReportAllocs()
			type item struct {
				due int64
				f   func()
			}
			r := rand.New(rand.NewPCG(1, 1))
			var list, current []item
			var now int64
			for range pending {
				var it item
				it.due = r.Int64N(int64(spread))
				it.f = func() {}
				list = append(list, it)
			}
			for b.Loop() {
				now += int64(time.Millisecond)
				// The seed's Update: collect the due items, then remove each
				// with a linear search (List.Remove), then run them.
				current = current[:0]
				for _, it := range list {
					if it.due <= now {
						current = append(current, it)
					}
				}
				for _, c := range current {
					for k := range list {
						if list[k].due == c.due {
							list = append(list[:k], list[k+1:]...)
							break
						}
					}
				}
				for _, c := range current {
					c.f()
					list = append(list, item{due: c.due + int64(spread), f: c.f})
				}
			}
		})
	}
}

// TestTimerPostedFromABubble: a timer that a testing/synctest bubble posts
// or resets on a loom made outside it, on the real clock, whose clock the
// bubble's is not, is due within d of the loom's current frame, and runs
// once the loom's clock has passed that: not at the end of the clock's range,
// where a reading of the bubble's clock (in 2000) filed it.
func TestTimerPostedFromABubble(t *testing.T) {
	l := loom.New()
	defer l.Close()
	l.Update()
	var posted, reset atomic.Bool
	other := l.PostAfter(time.Hour, func() { reset.Store(true) })
	synctest.Test(t, func(t *testing.T) {
		l.PostAfter(time.Millisecond, func() { posted.Store(true) })
		other.Reset(time.Millisecond)
	})
	if i := l.Idle(); !i.Timed || i.Delay > time.Millisecond {
		t.Fatalf("Idle() = %+v after timers of a millisecond; want Timed, a Delay of 1ms at most", i)
	}
	for !posted.Load() || !reset.Load() { // the loom's clock passes the millisecond
		l.Update()
		runtime.Gosched()
	}
}
