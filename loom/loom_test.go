package loom_test

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
)

// TestPostersAndFramesStress has posters post numbered actions (some of a
// scope, some panicking) while a loop runs frames as it is woken, under a
// budget, in rounds: each time the posters are done and the loop sleeps,
// every action posted has run exactly once, and each poster's in the order
// it posted them. A lost wake-up shows as a loop asleep with actions queued.
func TestPostersAndFramesStress(t *testing.T) {
	const posters = 8
	perPoster := 20_000
	if testing.Short() {
		perPoster = 2_000
	}
	synctest.Test(t, func(t *testing.T) {
		l, p := testLoom(t, loom.WithBudget(500, 0))
		s := l.NewScope()
		seen := make([][]int, posters) // written by the actions, on the loop
		ran := 0
		record := func(poster, i int) {
			seen[poster] = append(seen[poster], i)
			ran++
		}

		stop := serveOnWake(l, func() {
			for l.Idle().Now {
				l.UpdateDelta(time.Millisecond)
			}
		})

		// Rounds of posts from every poster at once, each round ending with
		// the loop asleep, which it must not be with actions queued.
		const rounds = 10
		for round := range rounds {
			var wg sync.WaitGroup
			for poster := range posters {
				wg.Go(func() {
					for i := round * perPoster / rounds; i < (round+1)*perPoster/rounds; i++ {
						var err error
						switch {
						case i%97 == 0:
							err = l.Post(func() {
								record(poster, i)
								panic(i)
							})
						case poster%2 == 0:
							err = s.Post(func() { record(poster, i) })
						default:
							err = l.Post(func() { record(poster, i) })
						}
						if err != nil {
							t.Errorf("poster %d: Post(%d) = %v; want nil", poster, i, err)
							return
						}
					}
				})
			}
			wg.Wait()
			synctest.Wait() // the loop sleeps: it must have run everything
			if want := posters * (round + 1) * perPoster / rounds; ran != want {
				t.Errorf("round %d: %d actions ran before the loop slept; want %d: a post or a wake-up was lost", round, ran, want)
				break
			}
		}
		stop()
		for poster, got := range seen {
			if len(got) != perPoster {
				t.Errorf("poster %d: %d actions ran; want %d", poster, len(got), perPoster)
				continue
			}
			for i, v := range got {
				if v != i {
					t.Errorf("poster %d: action %d ran in place %d", poster, v, i)
					break
				}
			}
		}
		wantPanics := posters * ((perPoster + 96) / 97)
		if got := len(p.Take()); got != wantPanics {
			t.Errorf("%d panics reported; want %d", got, wantPanics)
		}
	})
}

// TestWakeOncePerBatch: work that arrives for a loop that may be asleep
// wakes it, through the wake function and Idle's Wake channel, once per
// batch: the first post since the last frame began, a delayed action that
// is now the earliest, a coroutine started from another goroutine.
func TestWakeOncePerBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		l := loom.New(loom.WithWakeFunc(func() { calls.Add(1) }))
		defer l.Close()
		wake := l.Idle().Wake
		expect := func(when string, want int32) {
			t.Helper()
			if got := calls.Load(); got != want {
				t.Errorf("%s: the wake function ran %d times in all; want %d", when, got, want)
			}
			select {
			case <-wake:
				if want == 0 {
					t.Errorf("%s: a value on the wake channel; want none", when)
				}
			default:
			}
			select {
			case <-wake:
				t.Errorf("%s: two values on the wake channel", when)
			default:
			}
		}
		for range 10 {
			l.Post(func() {})
		}
		expect("ten posts", 1)
		l.Update()
		l.PostAfter(time.Hour, func() {})
		expect("a new earliest timer", 2)
		l.PostAfter(2*time.Hour, func() {})
		expect("a timer that is not the earliest", 2)
		if i := l.Idle(); i.Now || !i.Timed || i.Delay != time.Hour {
			t.Errorf("Idle() = %+v; want a timer due in 1h", i)
		}
		l.Update()
		started := make(chan *loom.Coroutine)
		go func() { started <- l.StartCoroutine(func(func(loom.Instruction) bool) {}) }()
		c := <-started
		expect("a coroutine started from another goroutine", 3)
		l.Update()
		if !c.IsDone() {
			t.Error("the coroutine did not run in the frame it woke")
		}
	})
}

// TestWakeAfterIdle: work that arrives after an Idle call wakes the loop
// again, though no frame ran since the last wake-up: a loop woken by a
// timer that became the earliest asks Idle again and sleeps, and must not
// sleep through the post, the earlier timer and the coroutine that come
// next. The loop is the one Idle's documentation describes.
func TestWakeAfterIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var wakes atomic.Int32
		l := loom.New(loom.WithWakeFunc(func() { wakes.Add(1) }))
		stop := make(chan struct{})
		loopDone := make(chan struct{})
		go func() {
			defer close(loopDone)
			for {
				i := l.Idle()
				if i.Now || i.Timed && i.Delay <= 0 {
					l.Update()
					continue
				}
				var due <-chan time.Time
				if i.Timed {
					due = time.After(i.Delay)
				}
				select {
				case <-i.Wake:
				case <-due:
					l.Update()
				case <-stop:
					return
				}
			}
		}()
		synctest.Wait()
		start := time.Now()
		ran := func(what string, within time.Duration, arrive func(func())) {
			t.Helper()
			at := time.Duration(-1)
			arrive(func() { at = time.Since(start) })
			synctest.Wait()
			time.Sleep(within)
			synctest.Wait()
			if at < 0 || at > within {
				t.Errorf("%s ran at %v (-1: never) after the start; want within %v", what, at, within)
			}
			start = time.Now()
		}
		// Before each arrival, a timer that is the new earliest wakes the
		// loop, which runs no frame for it and sleeps on to its time.
		earliest := func(k int) {
			l.PostAfter(time.Hour-time.Duration(k)*10*time.Minute, func() {})
			synctest.Wait()
		}
		earliest(0)
		ran("a post", 0, func(f func()) { l.Post(f) })
		earliest(1)
		ran("a timer now the earliest", time.Minute, func(f func()) { l.PostAfter(time.Minute, f) })
		earliest(2)
		ran("a coroutine started from another goroutine", 0, func(f func()) {
			go l.StartCoroutine(func(func(loom.Instruction) bool) { f() })
		})
		close(stop)
		<-loopDone
		l.Close()
		if got := wakes.Load(); got != 6 {
			t.Errorf("the wake function ran %d times; want 6, one for each arrival", got)
		}
	})
}

// TestPanickingWakeFuncGoesToHandler: a panicking wake function runs on
// the goroutine that posts; the post must not see it, and the handler must.
func TestPanickingWakeFuncGoesToHandler(t *testing.T) {
	l, p := testLoom(t, loom.WithWakeFunc(func() { panic("boom in wake") }))
	ran := false
	var err error
	if v := testkit.PanicValue(func() { err = l.Post(func() { ran = true }) }); v != nil || err != nil {
		t.Fatalf("Post panicked with %v, returned %v; want neither", v, err)
	}
	update(t, l)
	if !ran {
		t.Error("the posted action did not run")
	}
	if got := p.Take(); len(got) != 1 || !strings.Contains(got[0].Error(), "boom in wake") {
		t.Errorf("handler got %v, want the wake function's panic", got)
	}
}

// TestClose: Close runs the actions already posted, completes the waiting
// timers with ErrClosed, stops every coroutine with ErrClosed, whatever it
// waits for, its defers run (one that has not begun never does), and is
// idempotent; from then on posts, timers, scopes, coroutines and background
// functions are refused with ErrClosed, and Update does nothing.
func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := loom.New(loom.WithFixedStep(time.Hour, nil))
		var r recorder
		never := func() bool { return false }
		waits := []loom.Instruction{
			loom.NextFrame(), loom.WaitForSeconds(time.Hour), loom.WaitForSecondsRealtime(time.Hour),
			loom.WaitForFrames(100), loom.WaitUntil(never), loom.WaitWhile(func() bool { return true }),
			loom.WaitCustom(&keepWaiter{n: 1 << 30}), loom.WaitFor(make(waitable)),
			loom.WaitAll(make(waitable)), loom.WaitAny(make(waitable)),
			loom.WaitForFixedUpdate(), loom.WaitForEndOfFrame(),
		}
		var cs []*loom.Coroutine
		var wantDefers []string
		for i, w := range waits {
			cs = append(cs, l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				defer r.add(fmt.Sprint("defer ", i))
				for yield(w) {
				}
			}))
			wantDefers = append(wantDefers, fmt.Sprint("defer ", i))
		}
		parent := l.StartCoroutine(func(yield func(loom.Instruction) bool) { yield(loom.WaitFor(cs[0])) })
		l.Update() // they begin and wait
		queued := make(chan *loom.Coroutine)
		go func() { queued <- l.StartCoroutine(func(func(loom.Instruction) bool) { r.add("never begins") }) }()
		q := <-queued
		l.Post(r.note("posted before Close"))
		tm := l.PostAfter(time.Hour, r.note("never runs"))
		l.Close()
		l.Close()
		got := r.take()
		if len(got) == 0 || got[0] != "posted before Close" {
			t.Fatalf("Close ran %q; want the posted action first", got)
		}
		slices.Sort(got[1:])
		slices.Sort(wantDefers)
		if !slices.Equal(got[1:], wantDefers) {
			t.Errorf("Close ran the defers %q; want %q", got[1:], wantDefers)
		}
		for i, c := range append(cs, parent, q) {
			if !c.IsDone() || !errors.Is(c.Err(), loom.ErrClosed) {
				t.Errorf("coroutine %d after Close: done %v, Err() = %v; want ErrClosed", i, c.IsDone(), c.Err())
			}
		}
		if !tm.IsDone() || tm.Err() != loom.ErrClosed || tm.Stop() || tm.Reset(time.Second) {
			t.Errorf("timer after Close: done %v, Err %v; want done, ErrClosed, and Stop and Reset false", tm.IsDone(), tm.Err())
		}
		for name, err := range map[string]error{
			"Post":                  l.Post(r.note("never")),
			"PostAfter":             l.PostAfter(time.Second, nil).Err(),
			"PostAfterScaled":       l.PostAfterScaled(time.Second, nil).Err(),
			"RunAsync":              l.RunAsync(func() {}),
			"StartCoroutine":        l.StartCoroutine(func(func(loom.Instruction) bool) { r.add("never") }).Err(),
			"NewScope, then Post":   l.NewScope().Post(r.note("never")),
			"StartTask":             loom.StartTask(l, func(func(loom.Instruction) bool) (int, error) { return 1, nil }).Err(),
			"StartCoroutineContext": l.StartCoroutineContext(t.Context(), func(func(loom.Instruction) bool) {}).Err(),
		} {
			if err != loom.ErrClosed {
				t.Errorf("%s after Close: %v; want ErrClosed", name, err)
			}
		}
		l.Update() // does nothing
		l.EndFrame()
		r.expect(t, "after Close")
		if l.Frame() != 1 {
			t.Errorf("Frame() = %d after Close; want 1", l.Frame())
		}
	})
}

// TestCloseDuringFrame: Close called during a frame, from an action, a
// coroutine or another goroutine, takes effect as the frame ends, the
// frame's own work done; posts fail from the moment it is called.
func TestCloseDuringFrame(t *testing.T) {
	for _, from := range []string{"an action", "a coroutine", "another goroutine"} {
		t.Run(from, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := loom.New(loom.ManualClock())
				var r recorder
				var postErr error
				closeNow := func() {
					l.Close()
					postErr = l.Post(r.note("posted after Close"))
				}
				c := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
					defer r.add("coroutine defer")
					for yield(loom.NextFrame()) {
						r.add("coroutine resumed")
					}
				})
				l.UpdateDelta(time.Millisecond) // it begins
				switch from {
				case "an action":
					l.Post(closeNow)
				case "a coroutine":
					l.StartCoroutine(func(yield func(loom.Instruction) bool) {
						closeNow()
						yield(loom.NextFrame())
					})
				case "another goroutine":
					inFrame, release := make(chan struct{}), make(chan struct{})
					l.Post(func() { close(inFrame); <-release })
					go func() {
						<-inFrame
						closeNow()
						close(release)
					}()
				}
				l.Post(r.note("the next action of the frame"))
				l.UpdateDelta(time.Millisecond)
				r.expect(t, "the closing frame", "the next action of the frame", "coroutine resumed", "coroutine defer")
				if postErr != loom.ErrClosed || !errors.Is(c.Err(), loom.ErrClosed) {
					t.Errorf("Post after Close = %v, the coroutine's Err() = %v; want ErrClosed, ErrClosed", postErr, c.Err())
				}
				l.UpdateDelta(time.Millisecond) // does nothing
				if l.Frame() != 2 {
					t.Errorf("Frame() = %d after the closing frame; want 2", l.Frame())
				}
			})
		})
	}
}

// TestRenderGoroutine runs a loom on a goroutine locked to its own OS thread,
// paced by a ticker, the way a render thread would.
func TestRenderGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := loom.New()
		var frames atomic.Int32
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			tick := time.NewTicker(time.Second / 60)
			defer tick.Stop()
			for range 60 {
				<-tick.C
				l.Update()
			}
			l.Close()
			close(done)
		}()
		for i := range 120 {
			l.Post(func() { frames.Add(1) })
			if i%2 == 1 {
				time.Sleep(time.Second / 60)
			}
		}
		<-done
		if got := l.Frame(); got != 60 {
			t.Errorf("Frame() = %d; want 60 in one second", got)
		}
		if got := frames.Load(); got != 120 {
			t.Errorf("%d actions ran; want 120 (the last ones run by Close)", got)
		}
	})
}

// TestZeroLoomPanics: every method of the zero Loom that does work panics
// with the same message, which says how to make one, rather than a nil
// dereference deep inside; its clocks read zero.
func TestZeroLoomPanics(t *testing.T) {
	var l loom.Loom
	const want = "loom: use of a zero Loom; make one with New"
	body := func(func(loom.Instruction) bool) {}
	checkMisuse(t,
		misuse{func() { l.Post(func() {}) }, want},
		misuse{func() { l.PostAfter(time.Second, nil) }, want},
		misuse{func() { l.PostAfterScaled(time.Second, nil) }, want},
		misuse{func() { l.Update() }, want},
		misuse{func() { l.UpdateDelta(time.Millisecond) }, want},
		misuse{func() { l.EndFrame() }, want},
		misuse{func() { l.Close() }, want},
		misuse{func() { l.Idle() }, want},
		misuse{func() { l.NewScope() }, want},
		misuse{func() { l.RunAsync(func() {}) }, want},
		misuse{func() { l.WaitBackground(t.Context()) }, want},
		misuse{func() { l.SetTimeScale(1) }, want},
		misuse{func() { l.Configure() }, want},
		misuse{func() { l.StartCoroutine(body) }, want},
		misuse{func() { l.StartCoroutineContext(t.Context(), body) }, want},
		misuse{func() { l.StopAllCoroutines() }, want},
		misuse{func() { l.Coroutines() }, want},
	)
	if l.Frame() != 0 || l.Time() != 0 || l.UnscaledTime() != 0 || l.DeltaTime() != 0 || l.UnscaledDeltaTime() != 0 {
		t.Error("the zero Loom's clocks do not read zero")
	}
}

// TestPostMisuse: Post of a nil function panics, naming the call, from
// the Loom as from a Scope.
func TestPostMisuse(t *testing.T) {
	l, _ := testLoom(t)
	checkMisuse(t,
		misuse{func() { l.Post(nil) }, "loom: Post(nil)"},
		misuse{func() { l.NewScope().Post(nil) }, "loom: Post(nil)"},
	)
}

// BenchmarkPost measures posting an action: from one goroutine, with a frame
// now and then; and from many goroutines at once while a frame goroutine
// runs frames back to back.
func BenchmarkPost(b *testing.B) {
	f := func() {}
	b.Run("posters=1", func(b *testing.B) {
		b.ReportAllocs()
		l := loom.New()
		for i := 1; b.Loop(); i++ {
			l.Post(f)
			if i%(1<<16) == 0 {
				l.Update() // keeps the queue from growing without bound
			}
		}
	})
	b.Run("posters=8", func(b *testing.B) {
		b.ReportAllocs()
		l := loom.New()
		stop := serveOnWake(l, l.Update)
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l.Post(f)
			}
		})
		stop()
		l.Close()
	})
}
