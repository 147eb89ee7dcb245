package loom_test

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// checkTimers runs random PostAfter, Stop, Reset and frame operations on a
// loom driven by UpdateDelta and on a reference that keeps each timer's due
// time and order, and compares what each frame runs.
func checkTimers(t *testing.T, ops []byte) {
	l := loom.New(loom.ManualClock())
	type refTimer struct {
		due     time.Duration
		seq     int
		waiting bool
	}
	var (
		timers []*loom.Timer
		ref    []refTimer
		now    time.Duration
		seq    int
		ran    []int
	)
	for i := 0; i+1 < len(ops); i += 2 {
		op, arg := ops[i]%5, int(ops[i+1])
		switch op {
		case 0, 1: // post, on unscaled time or on scaled time
			k := len(timers)
			d := time.Duration(arg%32) * time.Millisecond
			timers = append(timers, l.PostAfter(d, func() { ran = append(ran, k) }))
			seq++
			ref = append(ref, refTimer{now + d, seq, true})
		case 2: // stop
			if len(timers) == 0 {
				continue
			}
			k := arg % len(timers)
			if got, want := timers[k].Stop(), ref[k].waiting; got != want {
				t.Fatalf("op %d: Stop(timer %d) = %v; want %v", i, k, got, want)
			}
			ref[k].waiting = false
		case 3: // reset
			if len(timers) == 0 {
				continue
			}
			k := arg % len(timers)
			d := time.Duration(arg%7) * time.Millisecond
			if got, want := timers[k].Reset(d), ref[k].waiting; got != want {
				t.Fatalf("op %d: Reset(timer %d) = %v; want %v", i, k, got, want)
			}
			seq++
			ref[k] = refTimer{now + d, seq, true}
		case 4: // frame
			now += time.Duration(arg%8) * time.Millisecond
			var want []int
			for k := range ref { // by index: copies of refTimer cost the race detector a range check each
				if r := &ref[k]; r.waiting && r.due <= now {
					want = append(want, k)
				}
			}
			slices.SortFunc(want, func(a, b int) int {
				if c := cmp.Compare(ref[a].due, ref[b].due); c != 0 {
					return c
				}
				return cmp.Compare(ref[a].seq, ref[b].seq)
			})
			for _, k := range want {
				ref[k].waiting = false
			}
			ran = ran[:0]
			l.UpdateDelta(time.Duration(arg%8) * time.Millisecond)
			if !slices.Equal(ran, want) && !(len(ran) == 0 && len(want) == 0) {
				t.Fatalf("op %d: frame at %v ran timers %v; want %v", i, now, ran, want)
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
	r := rand.New(rand.NewPCG(11, 12))
	for range 100 {
		ops := make([]byte, 4000)
		for i := range ops {
			ops[i] = byte(r.UintN(256))
		}
		checkTimers(t, ops)
	}
}

// checkTimersInFrame runs timers whose actions stop or reset other timers,
// or themselves, in the frame that runs them, on a loom with a budget of
// actions per frame, against a plain model: each frame runs, one at a time,
// the earliest waiting timer due at the frame's time and scheduled before
// the frame began, those of PostAfter before those of PostAfterScaled,
// until the budget is spent; an action's Stop or Reset takes effect at
// once, and reports what the model says. The time scale stays 1, so that
// both clocks read the same.
func checkTimersInFrame(t *testing.T, ops []byte) {
	if len(ops) == 0 {
		return
	}
	budget := int(ops[0]%6) + 1
	l := loom.New(loom.ManualClock(), loom.WithBudget(budget, 0))
	defer l.Close()
	type refTimer struct {
		due     time.Duration
		seq     int
		waiting bool
		scaled  bool
		act     int // 0: note only; 1: stop target; 2: reset target by d
		target  int
		d       time.Duration
	}
	// refBefore reports whether r runs before q in a frame where both are
	// due: unscaled timers first, then by due time, then by order.
	refBefore := func(r, q *refTimer) bool {
		if r.scaled != q.scaled {
			return !r.scaled
		}
		return r.due < q.due || r.due == q.due && r.seq < q.seq
	}
	// did is what an action did: note its timer, or stop or reset its
	// target, with what Stop or Reset reported.
	type did struct {
		k, act, target int
		reported       bool
	}
	var (
		timers []*loom.Timer
		ref    []refTimer
		now    time.Duration
		seq    int
		ran    []did // what the loom's actions did, in order
	)
	for i := 1; i+2 < len(ops); i += 3 {
		op, a, b := ops[i]%4, int(ops[i+1]), int(ops[i+2])
		switch op {
		case 0, 1: // post, on unscaled time or on scaled time
			k := len(timers)
			r := refTimer{
				due: now + time.Duration(a%16)*time.Millisecond, seq: seq + 1, waiting: true,
				scaled: op == 1, act: b % 3, target: (b / 3) % (k + 1), d: time.Duration(a%5) * time.Millisecond,
			}
			seq++
			ref = append(ref, r)
			post := l.PostAfter
			if r.scaled {
				post = l.PostAfterScaled
			}
			timers = append(timers, post(r.due-now, func() {
				switch r.act {
				case 0:
					ran = append(ran, did{k: k})
				case 1:
					ran = append(ran, did{k, 1, r.target, timers[r.target].Stop()})
				case 2:
					ran = append(ran, did{k, 2, r.target, timers[r.target].Reset(r.d)})
				}
			}))
		case 2: // stop or reset between frames
			if len(timers) == 0 {
				continue
			}
			k := a % len(timers)
			if b%2 == 0 {
				if got, want := timers[k].Stop(), ref[k].waiting; got != want {
					t.Fatalf("op %d: Stop(timer %d) = %v; want %v", i, k, got, want)
				}
				ref[k].waiting = false
				continue
			}
			d := time.Duration(b%7) * time.Millisecond
			if got, want := timers[k].Reset(d), ref[k].waiting; got != want {
				t.Fatalf("op %d: Reset(timer %d) = %v; want %v", i, k, got, want)
			}
			seq++
			ref[k].due, ref[k].seq, ref[k].waiting = now+d, seq, true
		case 3: // frame
			dt := time.Duration(a%4) * time.Millisecond
			now += dt
			lastSeq := seq
			var want []did
			for len(want) < budget {
				k := -1
				for j := range ref { // by index: copies of refTimer cost the race detector a range check each
					if r := &ref[j]; r.waiting && r.due <= now && r.seq <= lastSeq && (k < 0 || refBefore(r, &ref[k])) {
						k = j
					}
				}
				if k < 0 {
					break
				}
				ref[k].waiting = false
				r := ref[k]
				switch r.act {
				case 0:
					want = append(want, did{k: k})
				case 1:
					want = append(want, did{k, 1, r.target, ref[r.target].waiting})
					ref[r.target].waiting = false
				case 2:
					want = append(want, did{k, 2, r.target, ref[r.target].waiting})
					seq++
					ref[r.target].due, ref[r.target].seq, ref[r.target].waiting = now+r.d, seq, true
				}
			}
			ran = ran[:0]
			l.UpdateDelta(dt)
			if !slices.Equal(ran, want) {
				t.Fatalf("op %d: frame at %v (budget %d) did %+v; want %+v (act 1: stop, 2: reset)", i, now, budget, ran, want)
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
	r := rand.New(rand.NewPCG(13, 14))
	for range 200 {
		ops := make([]byte, 3000)
		for i := range ops {
			ops[i] = byte(r.UintN(256))
		}
		checkTimersInFrame(t, ops)
	}
}

// TestTimerDelaysSaturate: a delay near math.MaxInt64, the natural "no
// timeout", means a due time at the end of the clock's range, not one
// wrapped round to the past: such timers wait, for either clock and through
// Reset and a Scope, frame after frame.
func TestTimerDelaysSaturate(t *testing.T) {
	for _, d := range []time.Duration{math.MaxInt64, math.MaxInt64 - time.Millisecond/2} {
		t.Run(fmt.Sprintf("MaxInt64-%d", math.MaxInt64-d), func(t *testing.T) {
			l := loom.New(loom.ManualClock())
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
			for range 3 {
				l.UpdateDelta(time.Hour)
			}
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
			l.Close()
		})
	}
	// The real clock too, where now is never zero.
	synctest.Test(t, func(t *testing.T) {
		l := loom.New()
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
		l.Close()
	})
}
