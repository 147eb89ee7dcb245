package loom_test

import (
	"bytes"
	"expvar"
	"fmt"
	rtrace "runtime/trace"
	"strings"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

func TestFrameStatsAndObserver(t *testing.T) {
	var seen []loom.FrameStats
	l, panics := testLoom(t, loom.WithName("render"), loom.WithBudget(3, 0),
		loom.WithFrameObserver(func(fs loom.FrameStats) { seen = append(seen, fs) }))
	for range 5 {
		l.Post(func() {})
	}
	l.PostAfter(0, func() {})
	l.PostAfter(time.Hour, func() {})
	l.StartCoroutine(func(y func(loom.Instruction) bool) {
		for y(loom.NextFrame()) {
		}
	})
	update(t, l)
	fs := seen[len(seen)-1]
	want := loom.FrameStats{Frame: 1, Actions: 3, Delayed: 1, CarriedOver: 2, Coroutines: 1, Pending: 1}
	fs.Duration = 0
	if fs != want {
		t.Fatalf("observed %+v, want %+v", fs, want)
	}
	update(t, l)
	if len(seen) != 2 || seen[1].Actions != 2 || seen[1].CarriedOver != 0 {
		t.Fatalf("the observer saw %+v", seen)
	}
	l.Post(func() { panic("in an action") })
	update(t, l)
	if got := panics.Take(); len(got) != 1 || got[0].Source != "render" {
		t.Fatalf("the handler got %v; want one panic whose Source is the loom's name", got)
	}
}

// With tracing on, each frame is a region named after the loom.
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

// A frame observer publishes frame statistics through expvar, where a
// metrics scraper finds them.
func ExampleWithFrameObserver() {
	frames := expvar.NewMap("loom_example")
	l := loom.New(loom.ManualClock(), loom.WithName("game"), loom.WithFrameObserver(func(fs loom.FrameStats) {
		frames.Add("frames", 1)
		frames.Add("actions", int64(fs.Actions))
		frames.Add("carried_over", int64(fs.CarriedOver))
	}))
	defer l.Close()
	for range 3 {
		l.Post(func() {})
		l.UpdateDelta(time.Second / 60)
	}
	fmt.Println(strings.ReplaceAll(frames.String(), " ", ""))
	// Output: {"actions":3,"carried_over":0,"frames":3}
}

// Statistics, an observer and a name cost a frame no allocation.
func TestObservedFrameAllocatesNothing(t *testing.T) {
	n := 0
	l, _ := testLoom(t, loom.WithName("steady"), loom.WithFrameObserver(func(fs loom.FrameStats) { n += fs.Actions }))
	f := func() {}
	frame := func() {
		for range 10 {
			l.Post(f)
		}
		l.UpdateDelta(time.Millisecond)
	}
	frame()
	if a := testing.AllocsPerRun(100, frame); a != 0 {
		t.Fatalf("an observed frame allocates %v times", a)
	}
	if n != 1020 { // one frame, then AllocsPerRun's warm-up run and its 100
		t.Fatalf("the observer counted %d actions, want 1020", n)
	}
}
