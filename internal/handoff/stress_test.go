package handoff

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// A trial is one call handed from a caller to a runner, with what each side
// saw of it. The runner writes its fields before it hands the trial back on
// the results channel, the caller its own before it returns.
type trial struct {
	c      *Call
	n      int    // the trial's number, which the function writes as its outcome
	out    int    // the outcome, written by the function before Deliver
	ran    int32  // the times the function ran
	runner string // "delivered", "abandoned" (Deliver refused) or "refused" (Start refused)
	caller string // "delivered", "abandoned" (Wait: false, true) or "canceled" (false, false)
	yield  int    // how many times the runner yields between its steps
}

// TestStress races many callers, which wait with contexts canceled at random
// points (before Arm, before Wait, while they wait, or never), some spinning
// first, against runners that Start, run and Deliver with random yields in
// between (or none, so that a Deliver meets a caller about to park), and
// checks each call's end: exactly one of
//   - the function ran once, Deliver reported true, and the caller saw the
//     delivery with the function's outcome;
//   - the function never ran, Start reported false, and the caller gave the
//     call up with ran = false;
//   - the function ran once, Deliver reported false, and the caller gave the
//     call up with ran = true,
//
// with the three counts equal on both sides. Calls are pooled, as the
// package's users pool them: a Call goes back to the pool once Spin or Wait
// reported the delivery (by the caller) or once Start reported false (by the
// runner), and one given up while running is dropped. Under -race this also
// checks that the outcome written before Deliver is ordered before the
// caller's read.
//
// The race runs in a testing/synctest bubble, whose goroutines run at once
// as any others do, so that a caller whose wake-up was lost ends the test
// as a deadlock of the bubble instead of hanging it, once the rest is done.
// And the contexts of the callers that are never canceled end once every
// runner has delivered or refused every call: such a caller whose wake-up
// was lost then wakes by its context and reports the call given up, which
// the runner delivered.
//
// It would catch a Start or Deliver that does not compare-and-swap (a
// function run after its caller left, or twice on a reused call; an outcome
// reported to both sides or to neither), a Wait that misreads the race (a
// caller told "given up" for a call whose outcome was delivered), a wakeup
// that is lost (the mismatch or the deadlock above), and an Arm that does
// not reset a reused Call.
func TestStress(t *testing.T) {
	synctest.Test(t, stress)
}

func stress(t *testing.T) {
	const (
		callers = 8
		runners = 3
	)
	perCaller := 3000
	if testing.Short() {
		perCaller = 300
	}
	var (
		pool    = make(chan *Call, callers*2)
		work    = make(chan *trial)
		results = make(chan *trial, callers*perCaller)
		fresh   atomic.Int64 // Calls made because the pool was empty
		spun    atomic.Int64 // calls whose caller saw the delivery while it spun
	)
	end, endAll := context.WithCancel(context.Background()) // see above
	defer endAll()
	getCall := func() *Call {
		select {
		case c := <-pool:
			return c
		default:
			fresh.Add(1)
			return new(Call)
		}
	}
	putCall := func(c *Call) {
		select {
		case pool <- c:
		default:
		}
	}

	var runWG sync.WaitGroup
	for range runners {
		runWG.Go(func() {
			for tr := range work {
				yieldN(tr.yield)
				if !tr.c.Start() {
					tr.runner = "refused"
					putCall(tr.c) // Start reported false: the Call is free
					results <- tr
					continue
				}
				yieldN(tr.yield)
				atomic.AddInt32(&tr.ran, 1)
				tr.out = tr.n
				yieldN(tr.yield)
				if tr.c.Deliver() {
					tr.runner = "delivered"
				} else {
					tr.runner = "abandoned"
				}
				results <- tr
			}
		})
	}

	var callWG sync.WaitGroup
	for w := range callers {
		callWG.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 0x5eed))
			for i := range perCaller {
				tr := &trial{n: w*perCaller + i + 1, yield: rng.IntN(4)}
				var (
					ctx  = context.Background()
					stop = func() {}
				)
				mode := rng.IntN(6) // 0: no context to watch; 1: canceled before Arm; 2: before Wait; 3: while waiting; 4, 5: never
				if mode != 0 {
					ctx, stop = context.WithCancel(end)
				}
				if mode == 1 {
					stop()
				}
				tr.c = getCall()
				tr.c.Arm(ctx)
				var cancelWG sync.WaitGroup
				if mode == 3 {
					n := rng.IntN(8)
					cancelWG.Go(func() { yieldN(n); stop() })
				}
				work <- tr
				if mode == 2 {
					stop()
				}
				var delivered, ran bool
				if rng.IntN(2) == 0 && tr.c.Spin(time.Duration(rng.IntN(2000))) {
					delivered, ran = true, true // spun until delivered: no Wait
					spun.Add(1)
				} else {
					delivered, ran = tr.c.Wait(ctx)
				}
				switch {
				case delivered && ran:
					tr.caller = "delivered"
					if tr.out != tr.n { // read under -race: must be ordered after the write
						t.Errorf("trial %d: delivered outcome %d", tr.n, tr.out)
					}
					putCall(tr.c)
				case !delivered && ran:
					tr.caller = "abandoned" // the runner owns the Call now
				case !delivered && !ran:
					tr.caller = "canceled" // the runner frees the Call when Start refuses
				default:
					t.Errorf("trial %d: Wait = (true, false)", tr.n)
				}
				if mode == 0 && !delivered {
					t.Errorf("trial %d: a wait that watches no context was given up", tr.n)
				}
				cancelWG.Wait()
				stop()
			}
		})
	}
	// Every call reaches a runner, which sends it on results once it has
	// delivered or refused it; then the callers may wait no more.
	all := make([]*trial, 0, callers*perCaller)
	for range callers * perCaller {
		all = append(all, <-results)
	}
	endAll()
	callWG.Wait()
	close(work)
	runWG.Wait()

	count := map[[2]string]int{}
	for _, tr := range all {
		count[[2]string{tr.runner, tr.caller}]++
		ran := atomic.LoadInt32(&tr.ran)
		switch {
		case tr.runner == "delivered" && tr.caller == "delivered" && ran == 1:
		case tr.runner == "refused" && tr.caller == "canceled" && ran == 0:
		case tr.runner == "abandoned" && tr.caller == "abandoned" && ran == 1:
		default:
			t.Errorf("trial %d: runner %q, caller %q, function ran %d times", tr.n, tr.runner, tr.caller, ran)
		}
	}
	delivered := count[[2]string{"delivered", "delivered"}]
	refused := count[[2]string{"refused", "canceled"}]
	abandoned := count[[2]string{"abandoned", "abandoned"}]
	if total := delivered + refused + abandoned; total != callers*perCaller {
		t.Errorf("%d calls settled (%v); want %d", total, count, callers*perCaller)
	}
	t.Logf("delivered %d (%d seen while spinning), given up before start %d, given up while running %d; %d Calls made for %d calls",
		delivered, spun.Load(), refused, abandoned, fresh.Load(), callers*perCaller)
	// Each end must be reached, or the test did not race what it claims to.
	if delivered == 0 || refused == 0 || abandoned == 0 || spun.Load() == 0 {
		t.Errorf("an end never happened: delivered %d (spun %d), refused %d, abandoned %d", delivered, spun.Load(), refused, abandoned)
	}
	if fresh.Load() >= int64(callers*perCaller) {
		t.Errorf("no Call was reused")
	}
}

func yieldN(n int) {
	for range n {
		runtime.Gosched()
	}
}
