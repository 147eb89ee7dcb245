package mainthread

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestPoller drives the poller through what frames and polls report and
// checks, after each step, the budget of the poll it grants and how many
// callers it lets poll. It would catch a poller that keeps polling after
// polls find nothing (an idle loop, or one starved of CPU time, would burn
// a CPU), one that polls after a frame that woke a caller (the caller would
// wait for the poll's end), one that never tries again (a renderer would
// lose the path without wake-ups for good), and one whose waits between
// tries do not grow.
func TestPoller(t *testing.T) {
	if runtime.NumCPU() < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skip("nobody polls on one processor")
	}
	const max = 64 * time.Microsecond
	var spin atomic.Int32
	p := newPoller(max, &spin)
	slots := int32(runtime.GOMAXPROCS(0) - 1)
	// step ends a frame whose calls found calls: the poller must grant a
	// poll of want (0: none); a poll granted sees work come if came.
	step := func(what string, calls uint32, want time.Duration, came bool) {
		t.Helper()
		if got := p.next(calls); got != want {
			t.Fatalf("%s: next(%b) = %v; want %v", what, calls, got, want)
		} else if got > 0 {
			p.polled(came)
		}
		wantSlots := int32(0)
		if p.budget > 0 {
			wantSlots = slots
		}
		if spin.Load() != wantSlots {
			t.Fatalf("%s: %d callers may poll, with a budget of %v; want %d", what, spin.Load(), p.budget, wantSlots)
		}
	}
	step("fresh", 0, max, true)
	step("after a poll that paid", 0, max, false)
	step("after one in vain", 0, max/2, false)
	step("after two", 0, max/4, false)
	step("after three", 0, max/8, false)
	step("after four", 0, max/16, false) // the fifth turns polling off
	step("off", 0, 0, false)
	step("tried again", 0, max, true)
	step("a frame that woke a caller", callWoke, 0, false)
	step("one that found its caller idle", callIdle, 0, false)
	step("budget halved twice", 0, max/4, false)
	step("", 0, max/8, false)
	step("", 0, max/16, false)
	// Polling stays off for a number of frames that doubles with each try
	// that fails, up to maxWait; a try fails in five frames that rule
	// polling out.
	off := 1
	for try := range 13 {
		for range off {
			step("off", callWoke, 0, false)
		}
		for range 5 {
			step("a try", callWoke, 0, false)
		}
		off = min(2*off, maxWait)
		if p.budget != 0 || p.off != off {
			t.Fatalf("try %d: budget %v, polling off for %d frames; want 0, %d", try, p.budget, p.off, off)
		}
	}
	// A poll that pays ends the waits.
	for range off {
		step("off", 0, 0, false)
	}
	step("tried again", 0, max, true)
	step("", 0, max, false)
	step("", 0, max/2, false)
	step("", 0, max/4, false)
	step("", 0, max/8, false)
	step("", 0, max/16, false)
	step("off for one frame again", 0, 0, false)
	step("", 0, max, true)
}

// TestPollerOneProcessor: with one processor, nobody polls: with
// WithSpin(0), which counts as one, and with GOMAXPROCS at 1, which the
// poller reads when it is made (and, in Run, every 256 frames).
func TestPollerOneProcessor(t *testing.T) {
	var spin atomic.Int32
	p := newPoller(0, &spin) // WithSpin(0) counts as one processor
	if d := p.next(0); d != 0 || spin.Load() != 0 {
		t.Fatalf("with polling turned off: next = %v, %d callers may poll; want 0, 0", d, spin.Load())
	}
	prev := runtime.GOMAXPROCS(1)
	p = newPoller(64*time.Microsecond, &spin)
	runtime.GOMAXPROCS(prev)
	for range 3 {
		if d := p.next(0); d != 0 || spin.Load() != 0 {
			t.Fatalf("with GOMAXPROCS at 1: next = %v, %d callers may poll; want 0, 0", d, spin.Load())
		}
	}
}
