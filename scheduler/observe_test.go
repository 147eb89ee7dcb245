package scheduler_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// TestWorkersCarryTheName: the workers of a named scheduler, and those that
// run a named child's items, carry the name as the pprof label "queue": the
// goroutine profile shows it on the worker's stack, and a CPU profile taken
// while the items burn CPU holds it.
func TestWorkersCarryTheName(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("js/wasm has no CPU profiler: the profile holds no samples")
	}
	root := scheduler.New(2, scheduler.WithName("render"))
	child := scheduler.New(1, scheduler.WithTarget(root), scheduler.WithName("decode"))
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	root.Enqueue(scheduler.Func(func() { started <- struct{}{}; <-release }))
	child.Enqueue(scheduler.Func(func() { started <- struct{}{}; <-release }))
	<-started
	<-started
	var buf bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&buf, 1)
	profile := buf.String()
	close(release)
	for _, name := range []string{"render", "decode"} {
		if !strings.Contains(profile, `labels: {"queue":"`+name+`"}`) {
			t.Errorf("the goroutine profile shows no worker labelled %q:\n%s", name, profile)
		}
	}

	// A CPU profile: the label's value is in the profile's string table
	// only if samples carry it.
	var cpu bytes.Buffer
	if err := pprof.StartCPUProfile(&cpu); err != nil {
		t.Skipf("no CPU profile here: %v", err) // another profile runs (go test -cpuprofile)
	}
	// About 0.2 s of CPU: the profiler samples 100 times a second of it.
	burn := scheduler.New(1, scheduler.WithName("cpu-burner"))
	burn.Enqueue(scheduler.Func(func() {
		for range 200_000 {
			spinWork()
		}
	}))
	burn.Wait(context.Background())
	pprof.StopCPUProfile()
	zr, err := gzip.NewReader(&cpu)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte("cpu-burner")) {
		t.Error("the CPU profile holds no sample labelled cpu-burner")
	}
	root.Wait(context.Background())
}

// TestUnnamedChildRunsWithTheNameAbove: the items of an unnamed child carry
// the name of the nearest named Scheduler above it, before and after a named
// grandchild's turn on the same worker.
func TestUnnamedChildRunsWithTheNameAbove(t *testing.T) {
	root := scheduler.New(1, scheduler.WithName("render"))
	mid := scheduler.New(1, scheduler.WithTarget(root))
	leaf := scheduler.New(1, scheduler.WithTarget(mid), scheduler.WithName("decode"))
	release := make(chan struct{})
	root.Enqueue(scheduler.Func(func() { <-release })) // holds the one slot while the rest queues
	var got [3]string
	mid.Enqueue(scheduler.Func(func() { got[0] = testkit.Labels() }))
	leaf.Enqueue(scheduler.Func(func() { got[1] = testkit.Labels() }))
	mid.Enqueue(scheduler.Func(func() { got[2] = testkit.Labels() }))
	close(release)
	root.Wait(context.Background())
	want := [3]string{`{"queue":"render"}`, `{"queue":"decode"}`, `{"queue":"render"}`}
	if got != want {
		t.Errorf("labels of the child's item, the grandchild's, the child's: %v; want %v", got, want)
	}
}

var spinSink uint64

func spinWork() {
	x := spinSink
	for i := range 1000 {
		x = x*31 + uint64(i)
	}
	spinSink = x
}

// TestTraceRegions: with runtime/trace on, each item is a region named by
// its scheduler, or "scheduler" if unnamed.
func TestTraceRegions(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("no trace here: %v", err)
	}
	named := scheduler.New(1, scheduler.WithName("physics-step"))
	unnamed := scheduler.New(1)
	for range 3 {
		named.Enqueue(scheduler.Func(func() {}))
		unnamed.Enqueue(scheduler.Func(func() {}))
	}
	named.Wait(context.Background())
	unnamed.Wait(context.Background())
	trace.Stop()
	for _, name := range []string{"physics-step", "scheduler"} {
		if !bytes.Contains(buf.Bytes(), []byte(name)) {
			t.Errorf("the trace holds no region %q", name)
		}
	}
}

// TestPanicsGoToSlog: the default panic handler writes a structured record
// through log/slog, with the scheduler's name.
func TestPanicsGoToSlog(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, nil)))
	defer slog.SetDefault(old)
	s := scheduler.New(1, scheduler.WithName("loader"))
	s.Enqueue(scheduler.Func(func() { panic("bad asset") }))
	s.Wait(context.Background())
	out := buf.String()
	for _, want := range []string{`"level":"ERROR"`, `"source":"loader"`, `"panic":"bad asset"`, `"stack":"goroutine`} {
		if !strings.Contains(out, want) {
			t.Errorf("slog record %s lacks %s", out, want)
		}
	}
}

// TestWaitLatency: a sample of the items' waits shows in Stats, for items
// taken one at a time and for items a serial worker claims in runs.
func TestWaitLatency(t *testing.T) {
	for _, limit := range []int{1, 2} {
		synctest.Test(t, func(t *testing.T) {
			s := scheduler.New(limit)
			release := make(chan struct{})
			for range limit {
				s.Enqueue(scheduler.Func(func() { <-release }))
			}
			for range 8 * 64 {
				s.Enqueue(scheduler.Func(func() {}))
			}
			time.Sleep(time.Second) // the queued items wait this long, at least
			close(release)
			s.Wait(context.Background())
			l := s.Stats().Wait
			if l.Samples != 8 {
				t.Errorf("limit %d: Wait.Samples = %d after 512 items; want 8, one in 64", limit, l.Samples)
			}
			if l.P50 < time.Second || l.P50 > l.P99 || l.P99 > l.Max || l.Max > 2*time.Second {
				t.Errorf("limit %d: Wait = %+v; want P50 over 1s, and P50 <= P99 <= Max <= 2s", limit, l)
			}
		})
	}
}

// BenchmarkObserve measures what names (pprof labels on the workers) and
// runtime/trace cost per item: an unnamed scheduler against a named one,
// with tracing off and on.
func BenchmarkObserve(b *testing.B) {
	for _, tracing := range []bool{false, true} {
		for _, name := range []string{"", "render"} {
			b.Run(fmt.Sprintf("trace=%v/named=%v", tracing, name != ""), func(b *testing.B) {
				if tracing {
					if err := trace.Start(io.Discard); err != nil {
						b.Skip(err)
					}
					defer trace.Stop()
				}
				benchEnqueue(b, scheduler.New(1, scheduler.WithName(name)))
			})
		}
	}
}

// TestWaitLatencySamplesABacklog: Stats.Wait samples one item in 64 however
// long the backlog: 6,400 items queued at once on a scheduler of limit 1,
// each running a millisecond, give 100 samples, the longest wait over 6
// seconds.
func TestWaitLatencySamplesABacklog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 6400
		s := scheduler.New(1)
		for range n {
			s.Enqueue(scheduler.Func(func() { time.Sleep(time.Millisecond) }))
		}
		s.Wait(context.Background())
		if w := s.Stats().Wait; w.Samples != n/64 || w.Max < 6*time.Second {
			t.Errorf("Stats().Wait = %+v after %d items of 1ms queued at once; want %d samples, the longest over 6s", w, n, n/64)
		}
	})
}

// TestWaitLatencyFollowsLaterSamples: Stats.Wait, read once, counts the
// samples that come after: the summary Stats keeps is made again once a
// new sample arrives.
func TestWaitLatencyFollowsLaterSamples(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(1)
		for range 64 {
			s.Enqueue(scheduler.Func(func() {}))
		}
		s.Wait(context.Background())
		first := s.Stats().Wait
		if first.Samples != 1 || first.Max >= time.Second {
			t.Fatalf("Stats().Wait = %+v after 64 items that never waited; want 1 sample, under 1s", first)
		}
		release := make(chan struct{})
		s.Enqueue(scheduler.Func(func() { <-release }))
		for range 63 {
			s.Enqueue(scheduler.Func(func() {}))
		}
		time.Sleep(time.Second)
		close(release)
		s.Wait(context.Background())
		if w := s.Stats().Wait; w.Samples != 2 || w.Max < time.Second {
			t.Errorf("Stats().Wait = %+v after 64 more items, the sampled one held a second; want 2 samples, the longest at least 1s", w)
		}
	})
}

// TestWaitLatencyBoundsLongWaits: the percentiles and Max are upper bounds
// of waits of any length: an hour, a day, and two centuries, past the
// largest power of two a Duration holds, where the bound is the longest
// Duration.
func TestWaitLatencyBoundsLongWaits(t *testing.T) {
	for _, wait := range []time.Duration{time.Hour, 24 * time.Hour, 200 * 365 * 24 * time.Hour} {
		synctest.Test(t, func(t *testing.T) {
			s := scheduler.New(1)
			s.Enqueue(scheduler.Func(func() { time.Sleep(wait) }))
			for range 64 {
				s.Enqueue(scheduler.Func(func() {}))
			}
			s.Wait(context.Background())
			l := s.Stats().Wait
			if l.Samples != 1 || l.P50 < wait || l.P99 < wait || l.Max < wait || l.Max > 2*wait && l.Max != math.MaxInt64 {
				t.Errorf("the sampled item waited %v; Stats().Wait = %+v, want 1 sample and bounds from %v up to twice that", wait, l, wait)
			}
		})
	}
}
