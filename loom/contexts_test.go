package loom_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// waitName is the key of a context value in the tests.
type waitName struct{}

// TestContextStopsAWaitingCoroutineInTheNextPass: once the context of
// StartCoroutineContext is done, the first coroutine pass that begins after
// that stops the coroutine, whatever it waits for, as Stop does (its yield
// reports false, its defers run, its Err is ErrStopped, it never resumes):
// a context canceled between frames stops it in the next frame, and one
// canceled by an action stops it in the action's frame. A coroutine started
// with a context done already ends at once and never begins. Each pass
// looks once at each Done channel: contexts that share one (those of
// context.WithValue) make one watch. No goroutine of the test has to run for
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
		{"between frames", "shared"}, {"in an action", "shared"}, {"between frames", "values of one"},
		{"between frames", "each its own"},
	} {
		t.Run(tc.when+"/"+tc.contexts, func(t *testing.T) {
			when := tc.when
			for round := range 20 {
				l := loom.New(loom.ManualClock())
				ctx, cancel := context.WithCancel(context.Background())
				bound := map[string]*loom.Coroutine{}
				var resumed, deferred []string
				for name, wait := range waits {
					ctx := ctx
					if tc.contexts != "shared" {
						ctx = context.WithValue(ctx, waitName{}, name) // the same Done channel
					}
					if tc.contexts == "each its own" {
						var stop context.CancelFunc
						ctx, stop = context.WithCancel(ctx) // its own, canceled with the parent
						defer stop()
					}
					// One that ends at once, bound to the same context.
					l.StartCoroutineContext(ctx, func(yield func(loom.Instruction) bool) {})
					bound[name] = l.StartCoroutineContext(ctx, func(yield func(loom.Instruction) bool) {
						defer func() { deferred = append(deferred, name) }()
						for yield(wait(l)) {
							if ctx.Err() != nil {
								resumed = append(resumed, name)
							}
						}
					})
				}
				l.UpdateDelta(time.Millisecond) // they begin and wait
				wantWatches := 1                // one look a pass for the coroutines of one Done channel
				if tc.contexts == "each its own" {
					wantWatches = len(waits)
				}
				if watches, cs := l.ContextWatches(); watches != wantWatches || cs != len(waits) {
					t.Errorf("round %d: %d contexts watched for %d coroutines; want %d for %d", round, watches, cs, wantWatches, len(waits))
				}
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
				if len(resumed) > 0 || len(deferred) != len(waits) {
					t.Errorf("round %d: resumed after the cancel: %v; defers run: %v; want none resumed, every defer run", round, resumed, deferred)
				}
				ran := false
				late := l.StartCoroutineContext(ctx, func(func(loom.Instruction) bool) { ran = true })
				if !late.IsDone() || !errors.Is(late.Err(), loom.ErrStopped) {
					t.Errorf("round %d: a coroutine started with a done context: done %v, Err() = %v; want ErrStopped at once", round, late.IsDone(), late.Err())
				}
				l.UpdateDelta(time.Millisecond)
				if ran {
					t.Errorf("round %d: a coroutine started with a done context began", round)
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

// BenchmarkCoroutineContexts measures what coroutines bound to contexts
// cost a frame in which they do not resume, since each pass looks at each
// context they are bound to: 10,000 coroutines parked on a long wait, bound
// to no context, to one context shared by all, or each to its own.
// ns/coroutine is the frame's cost divided among them.
func BenchmarkCoroutineContexts(b *testing.B) {
	const n = 10_000
	for _, bound := range []string{"none", "shared", "each"} {
		b.Run("contexts="+bound, func(b *testing.B) {
			b.ReportAllocs()
			l := loom.New(loom.ManualClock())
			shared := b.Context()
			body := func(yield func(loom.Instruction) bool) {
				for yield(loom.WaitForSeconds(time.Hour)) {
				}
			}
			for range n {
				switch bound {
				case "none":
					l.StartCoroutine(body)
				case "shared":
					l.StartCoroutineContext(shared, body)
				case "each":
					ctx, cancel := context.WithCancel(shared)
					defer cancel()
					l.StartCoroutineContext(ctx, body)
				}
			}
			l.UpdateDelta(time.Millisecond)
			for b.Loop() {
				l.UpdateDelta(time.Millisecond)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/coroutine")
			l.Close()
		})
	}
}
