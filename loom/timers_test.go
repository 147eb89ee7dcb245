package loom_test

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
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
		case 0, 1: // post
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
			for k, r := range ref {
				if r.waiting && r.due <= now {
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
	r := rand.New(rand.NewPCG(11, 12))
	for range 100 {
		ops := make([]byte, 4000)
		for i := range ops {
			ops[i] = byte(r.UintN(256))
		}
		checkTimers(t, ops)
	}
}
