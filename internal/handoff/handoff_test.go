package handoff_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/internal/handoff"
	"github.com/taskqueue-go/taskqueue/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, testkit.LeakOptions()...) }

// TestDeliverWakesTheCaller: a started call that is delivered wakes its
// caller with delivered and ran, with and without a context that can end.
// A Deliver that wakes nobody, or a Wait that returns before the delivery,
// fails it.
func TestDeliverWakesTheCaller(t *testing.T) {
	cancelable, cancel := context.WithCancel(context.Background())
	defer cancel()
	for name, ctx := range map[string]context.Context{"background": context.Background(), "cancelable": cancelable} {
		t.Run(name, func(t *testing.T) {
			var c handoff.Call
			for round := range 3 { // the Call is reused after each delivery
				c.Arm(ctx)
				if !c.Pending() || c.Delivered() {
					t.Fatalf("round %d: armed call: Pending %v, Delivered %v; want true, false", round, c.Pending(), c.Delivered())
				}
				var ranAt atomic.Bool
				go func() {
					if !c.Start() {
						t.Error("Start of a pending call = false")
						return
					}
					ranAt.Store(true)
					if !c.Deliver() {
						t.Error("Deliver of a running call with its caller waiting = false")
					}
				}()
				delivered, ran := c.Wait(ctx)
				if !delivered || !ran || !ranAt.Load() || !c.Delivered() {
					t.Fatalf("round %d: Wait = %v, %v, ran %v, Delivered %v; want true, true, true, true", round, delivered, ran, ranAt.Load(), c.Delivered())
				}
			}
		})
	}
}

// TestCancelBeforeStart: a caller whose context ends before the runner
// starts the call gets false, false, and the runner's Start then reports
// false: the function never runs.
func TestCancelBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var c handoff.Call
	c.Arm(ctx)
	cancel()
	if delivered, ran := c.Wait(ctx); delivered || ran {
		t.Fatalf("Wait after cancel, before Start = %v, %v; want false, false", delivered, ran)
	}
	if c.Pending() {
		t.Error("a call given up before it started is still Pending")
	}
	if c.Start() {
		t.Error("Start of a call given up = true: the function would run after its caller left")
	}
}

// TestCancelWhileRunning: a caller whose context ends while the function
// runs gets false, true; the runner's Deliver then reports false, so that it
// reports the outcome itself.
func TestCancelWhileRunning(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var c handoff.Call
	c.Arm(ctx)
	if !c.Start() {
		t.Fatal("Start of a pending call = false")
	}
	cancel()
	if delivered, ran := c.Wait(ctx); delivered || !ran {
		t.Fatalf("Wait after cancel, while running = %v, %v; want false, true", delivered, ran)
	}
	if c.Deliver() {
		t.Error("Deliver to a caller that left = true: the outcome would reach nobody")
	}
	if c.Delivered() {
		t.Error("an abandoned call reports Delivered")
	}
}

// TestOneOwnerInEveryRace: runners and callers race over many calls, the
// callers' contexts ending at random points. For every call exactly one of
// these holds, never two and never none: it was delivered to its caller
// (ran, and the caller saw it); it was given up before it started (never
// ran); or it was given up while it ran (ran, and only the runner knows the
// outcome). Counting each outcome on both sides and comparing catches a
// state machine that lets both sides own one outcome, or neither. With
// KeepChannel, a caller reuses its Call, channel and all, after each
// delivery: a wake-up left in the channel would show as a delivery that no
// runner made.
func TestOneOwnerInEveryRace(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("keep=%v", keep), func(t *testing.T) { oneOwnerInEveryRace(t, keep) })
	}
}

func oneOwnerInEveryRace(t *testing.T, keep bool) {
	const calls = 20_000
	var (
		ran, startRefused, delivered, abandonedByRunner  atomic.Int64
		callerDelivered, callerCanceled, callerAbandoned atomic.Int64
	)
	work := make(chan *handoff.Call)
	var runners sync.WaitGroup
	for range 2 {
		runners.Go(func() {
			for c := range work {
				if !c.Start() {
					startRefused.Add(1)
					continue
				}
				ran.Add(1)
				if rand.IntN(4) == 0 {
					runtime.Gosched()
				}
				if c.Deliver() {
					delivered.Add(1)
				} else {
					abandonedByRunner.Add(1)
				}
			}
		})
	}
	var callers sync.WaitGroup
	for range 4 {
		callers.Go(func() {
			var c *handoff.Call
			for range calls / 4 {
				if !keep || c == nil {
					c = new(handoff.Call)
					if keep {
						c.KeepChannel()
					}
				}
				ctx, cancel := context.WithCancel(context.Background())
				c.Arm(ctx)
				handed := c
				go func() { work <- handed }()
				switch rand.IntN(3) {
				case 0:
					cancel()
				case 1:
					go func() {
						runtime.Gosched()
						cancel()
					}()
				}
				d, r := c.Wait(ctx)
				if !d {
					c = nil // a given-up call belongs to the runner: no reuse
				}
				switch {
				case d && r:
					callerDelivered.Add(1)
				case !d && !r:
					callerCanceled.Add(1)
				case !d && r:
					callerAbandoned.Add(1)
				default:
					t.Error("Wait = true, false: delivered but not run")
				}
				cancel()
			}
		})
	}
	callers.Wait()
	// Every call was handed to a runner by its own goroutine: wait until
	// all are taken, then stop the runners.
	for ran.Load()+startRefused.Load() < calls {
		runtime.Gosched()
	}
	close(work)
	runners.Wait()
	if got := callerDelivered.Load() + callerCanceled.Load() + callerAbandoned.Load(); got != calls {
		t.Fatalf("callers saw %d outcomes for %d calls", got, calls)
	}
	if callerDelivered.Load() != delivered.Load() {
		t.Errorf("callers saw %d deliveries, runners made %d", callerDelivered.Load(), delivered.Load())
	}
	if callerCanceled.Load() != startRefused.Load() {
		t.Errorf("callers gave up %d calls before they started, runners refused to start %d", callerCanceled.Load(), startRefused.Load())
	}
	if callerAbandoned.Load() != abandonedByRunner.Load() {
		t.Errorf("callers left %d running calls, runners found %d left", callerAbandoned.Load(), abandonedByRunner.Load())
	}
	if ran.Load() != delivered.Load()+abandonedByRunner.Load() {
		t.Errorf("%d calls ran, %d delivered and %d abandoned", ran.Load(), delivered.Load(), abandonedByRunner.Load())
	}
	t.Logf("%d calls: %d delivered, %d given up before they started, %d while they ran",
		calls, delivered.Load(), startRefused.Load(), abandonedByRunner.Load())
}
