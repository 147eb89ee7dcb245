package loom_test

import (
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// TestIdle: Idle says what a loop that sleeps between frames must know:
// Now while posted actions, actions carried over by the budget, or starts
// and stops wait for a frame; Frames while coroutines wait for frames, poll
// a condition, or wait for a fixed step or the end of a frame; Timed, with
// the Delay until the earliest, while a delayed action or a timed wait is
// pending (scaled ones at the time scale, none while it is 0), zero or
// negative once due; and always the same Wake channel. A coroutine stopped
// while it waited wants no more frames.
func TestIdle(t *testing.T) {
	l, _ := testLoom(t, loom.WithBudget(1, 0), loom.WithFixedStep(time.Hour, nil))
	check := func(when string, want loom.Idle) {
		t.Helper()
		got := l.Idle()
		if got.Wake == nil || got.Wake != l.Idle().Wake {
			t.Errorf("%s: Wake %v; want one channel, the same on every call", when, got.Wake)
		}
		got.Wake = nil
		if got != want {
			t.Errorf("%s: Idle() = %+v; want %+v", when, got, want)
		}
	}
	check("a new loom", loom.Idle{})
	l.Post(func() {})
	l.Post(func() {})
	check("posts", loom.Idle{Now: true})
	update(t, l)
	check("an action carried over", loom.Idle{Now: true})
	update(t, l)
	check("nothing left", loom.Idle{})

	c := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		yield(loom.WaitForSecondsRealtime(3 * time.Second))
	})
	check("a coroutine to begin", loom.Idle{Now: true})
	update(t, l)
	check("a real-time wait", loom.Idle{Timed: true, Delay: 3 * time.Second})
	l.PostAfter(time.Second, nil)
	l.PostAfterScaled(500*time.Millisecond, nil)
	check("timers", loom.Idle{Timed: true, Delay: 500 * time.Millisecond})
	l.SetTimeScale(4)
	check("a scaled timer at four times the speed", loom.Idle{Timed: true, Delay: 125 * time.Millisecond})
	l.SetTimeScale(0)
	check("a scaled timer, paused", loom.Idle{Timed: true, Delay: time.Second})
	l.SetTimeScale(1)
	c.Stop()
	check("a stop to apply", loom.Idle{Now: true, Timed: true, Delay: 500 * time.Millisecond})
	l.UpdateDelta(2 * time.Second)
	check("a scaled timer left by the budget, due already", loom.Idle{Timed: true, Delay: -1500 * time.Millisecond})
	update(t, l)
	check("the timers ran, the coroutine stopped", loom.Idle{})

	for name, in := range map[string]loom.Instruction{
		"NextFrame": loom.NextFrame(), "WaitForFrames": loom.WaitForFrames(5), "WaitUntil": loom.WaitUntil(func() bool { return false }),
		"WaitForFixedUpdate": loom.WaitForFixedUpdate(), "WaitForEndOfFrame": loom.WaitForEndOfFrame(),
	} {
		c := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			for yield(in) {
			}
		})
		update(t, l)
		check("a coroutine that yields "+name, loom.Idle{Frames: true})
		c.Stop()
		update(t, l)
	}
	l.StartCoroutine(func(yield func(loom.Instruction) bool) { yield(loom.WaitForSeconds(time.Second)) })
	update(t, l)
	check("a scaled wait", loom.Idle{Timed: true, Delay: time.Second})
	l.SetTimeScale(0)
	check("a scaled wait, paused", loom.Idle{})
}

// TestIdleWantsNoFramesForStoppedCoroutines: a coroutine that polls a
// condition, waits for frames, or waits on a coroutine that has ended,
// wants frames until it is stopped, and none after, whether Stop or
// StopAllCoroutines (called between frames, they take effect in the next)
// or Close stopped it, with no frame run after Close: a loop that sleeps by
// Idle must not wake at its frame pace for coroutines that have ended.
func TestIdleWantsNoFramesForStoppedCoroutines(t *testing.T) {
	waits := map[string]func(l *loom.Loom) loom.Instruction{
		"a condition": func(*loom.Loom) loom.Instruction { return loom.WaitUntil(func() bool { return false }) },
		"frames":      func(*loom.Loom) loom.Instruction { return loom.WaitForFrames(1 << 20) },
	}
	stops := map[string]func(l *loom.Loom, c *loom.Coroutine){
		"Stop":              func(_ *loom.Loom, c *loom.Coroutine) { c.Stop() },
		"StopAllCoroutines": func(l *loom.Loom, _ *loom.Coroutine) { l.StopAllCoroutines() },
		"Close":             func(l *loom.Loom, _ *loom.Coroutine) { l.Close() },
	}
	for wname, wait := range waits {
		for sname, stop := range stops {
			l, _ := testLoom(t)
			c := l.StartCoroutine(func(yield func(loom.Instruction) bool) { yield(wait(l)) })
			update(t, l)
			if !l.Idle().Frames {
				t.Errorf("%s: a coroutine that waits for %s wants no frames", sname, wname)
			}
			stop(l, c)
			if sname != "Close" {
				update(t, l)
			}
			if got := l.Idle(); got.Frames || !c.IsDone() {
				t.Errorf("%s of a coroutine that waited for %s: ended %v, Idle() = %+v; want ended, no frames", sname, wname, c.IsDone(), got)
			}
		}
	}
}
