package loom_test

import (
	"slices"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
)

// TestCoroutinesSnapshot: Coroutines lists the coroutines that have not
// ended, in the order they were started, each with its state ("queued",
// "running" for the one whose body calls it, "waiting"), what it waits for,
// the frame it began in and whether it is a scope's; at the cost its doc
// gives.
func TestCoroutinesSnapshot(t *testing.T) {
	l, _ := testLoom(t)
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
	if n := testing.AllocsPerRun(100, func() { l.Coroutines() }); n > 1+2*2 && !testkit.RaceEnabled {
		t.Errorf("Coroutines() of two waiting coroutines allocates %v times; want at most 5", n)
	}
	q := l.StartCoroutine(func(yield func(loom.Instruction) bool) {}) // waits to begin
	if infos := l.Coroutines(); len(infos) != 3 || infos[2] != (loom.CoroutineInfo{Coroutine: q, State: "queued"}) {
		t.Errorf("Coroutines() = %+v; want a third, queued", infos)
	}
	if n := testing.AllocsPerRun(100, func() { l.Coroutines() }); n > 2+2*2 && !testkit.RaceEnabled {
		t.Errorf("Coroutines() with a coroutine waiting to begin allocates %v times; want at most 6", n)
	}
	update(t, l) // q begins and ends
	if infos := l.Coroutines(); len(infos) != 2 {
		t.Errorf("Coroutines() = %+v; want the two that have not ended", infos)
	}

	// Started before the same frame, c's first part runs while d, started
	// after it, waits to begin in that pass: d is queued, not missing.
	var fromC []loom.CoroutineInfo
	c := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		fromC = l.Coroutines()
		yield(loom.NextFrame())
	})
	d := l.StartCoroutine(func(yield func(loom.Instruction) bool) { yield(loom.NextFrame()) })
	update(t, l)
	if len(fromC) != 4 || fromC[2].Coroutine != c || fromC[2].State != "running" ||
		fromC[3] != (loom.CoroutineInfo{Coroutine: d, State: "queued"}) {
		t.Errorf("Coroutines() from c's first part = %+v; want a and b waiting, c running, d queued", fromC)
	}
}
