package handoff

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"testing/synctest"
	"time"
)

// An op is one step of a transition table: a call on the Call, made by the
// caller or by the runner, in the order the table gives.
type op int

const (
	armCancelable op = iota // Arm with a fresh context that can be canceled
	armBackground           // Arm with context.Background: a wait that watches no context
	start                   // the runner's Start; want is its report
	deliver                 // the runner's Deliver; want is its report
	cancel                  // the caller's context ends
	wait                    // Wait, which must return at once; want and ran are its results
	waitAsleep              // Wait on a goroutine of its own, which must still be asleep
	asleep                  // the Wait begun by waitAsleep must still be asleep
	woken                   // the Wait begun by waitAsleep must have returned want and ran
	spin                    // Spin, which must report want
)

func (o op) String() string {
	return [...]string{"Arm(cancelable)", "Arm(Background)", "Start", "Deliver", "cancel", "Wait", "go Wait", "asleep", "woken", "Spin"}[o]
}

// A step is an op, what it must report, and the phase the Call must be in
// after it. The sleeping flag must be set exactly while a Wait begun by
// waitAsleep sleeps on a pending or running call.
type step struct {
	op    op
	want  bool   // Start's, Deliver's or Spin's report, or Wait's delivered
	ran   bool   // Wait's ran
	state uint32 // the phase after the step
}

var stateNames = [...]string{pending: "pending", running: "running", done: "done", canceled: "canceled", abandoned: "abandoned"}

// transitions lists every transition the package documents, in the orders
// its users make them and in the orders its docs refuse, each with the
// broken implementation it would catch.
var transitions = []struct {
	name  string
	steps []step
}{
	// The common path, on both kinds of wait. Catches a Deliver that does not
	// wake the caller (Wait would sleep for ever: the bubble deadlocks), and
	// Pending or Delivered reading the wrong state.
	{"delivered", []step{
		{op: armCancelable, state: pending},
		{op: start, want: true, state: running},
		{op: deliver, want: true, state: done},
		{op: wait, want: true, ran: true, state: done},
	}},
	{"delivered, no context to watch", []step{
		{op: armBackground, state: pending},
		{op: start, want: true, state: running},
		{op: deliver, want: true, state: done},
		{op: wait, want: true, ran: true, state: done},
	}},
	// The caller's context ends after the outcome was delivered: Wait's
	// select may pick either ready case, and both must report the delivery
	// (the table runs many rounds, so both are taken). Catches a Wait that
	// trusts ctx.Done over the state word and reports a delivered call as
	// given up, which would lose its outcome (a panic above all).
	{"delivered, then the context ends", []step{
		{op: armCancelable, state: pending},
		{op: start, want: true, state: running},
		{op: deliver, want: true, state: done},
		{op: cancel, state: done},
		{op: wait, want: true, ran: true, state: done},
	}},
	// Given up before it started: Start must refuse, so the function never
	// runs. Catches a Start that does not compare (a plain store), and a Wait
	// that gives up without marking the call canceled.
	{"given up before it started", []step{
		{op: armCancelable, state: pending},
		{op: cancel, state: pending},
		{op: wait, want: false, ran: false, state: canceled},
		{op: start, want: false, state: canceled},
		{op: deliver, want: false, state: canceled},
	}},
	// A context that ended before Arm: the call is given up at the first Wait.
	{"context ended before Arm", []step{
		{op: cancel},
		{op: armCancelable, state: pending},
		{op: wait, want: false, ran: false, state: canceled},
		{op: start, want: false, state: canceled},
	}},
	// Given up while it ran: Deliver must report false, so the runner reports
	// the outcome itself. Catches a Deliver that does not compare (it would
	// report true to a runner whose caller left, and the panic would be lost),
	// and a Wait that reports ran = false for a started call.
	{"given up while it ran", []step{
		{op: armCancelable, state: pending},
		{op: start, want: true, state: running},
		{op: cancel, state: running},
		{op: wait, want: false, ran: true, state: abandoned},
		{op: deliver, want: false, state: abandoned},
		{op: start, want: false, state: abandoned},
	}},
	// Deliver before Start is refused and changes nothing. Catches a Deliver
	// that moves any state to done.
	{"Deliver before Start", []step{
		{op: armCancelable, state: pending},
		{op: deliver, want: false, state: pending},
		{op: start, want: true, state: running},
		{op: deliver, want: true, state: done},
		{op: wait, want: true, ran: true, state: done},
	}},
	// A second Start is refused: the function runs at most once.
	{"Start twice", []step{
		{op: armCancelable, state: pending},
		{op: start, want: true, state: running},
		{op: start, want: false, state: running},
		{op: deliver, want: true, state: done},
		{op: start, want: false, state: done},
		{op: wait, want: true, ran: true, state: done},
	}},
	// A second Deliver is refused and wakes nobody twice. Catches a Deliver
	// that signals without winning the state word: a second send on the
	// one-slot channel blocks for ever (the bubble deadlocks), a second
	// WaitGroup.Done panics with a negative counter.
	{"Deliver twice", []step{
		{op: armCancelable, state: pending},
		{op: start, want: true, state: running},
		{op: deliver, want: true, state: done},
		{op: deliver, want: false, state: done},
		{op: wait, want: true, ran: true, state: done},
	}},
	{"Deliver twice, no context to watch", []step{
		{op: armBackground, state: pending},
		{op: start, want: true, state: running},
		{op: deliver, want: true, state: done},
		{op: deliver, want: false, state: done},
		{op: wait, want: true, ran: true, state: done},
	}},
	// Wait sleeps until the runner delivers, not merely until it starts.
	// Catches a Start that wakes the caller, or a Wait that returns early.
	{"Wait sleeps until Deliver", []step{
		{op: armCancelable, state: pending},
		{op: waitAsleep, state: pending},
		{op: start, want: true, state: running},
		{op: asleep, state: running},
		{op: deliver, want: true, state: done},
		{op: woken, want: true, ran: true, state: done},
	}},
	{"Wait sleeps until Deliver, no context to watch", []step{
		{op: armBackground, state: pending},
		{op: waitAsleep, state: pending},
		{op: start, want: true, state: running},
		{op: asleep, state: running},
		{op: deliver, want: true, state: done},
		{op: woken, want: true, ran: true, state: done},
	}},
	// A sleeping Wait wakes when its context ends, and settles the race by
	// the state it finds. Catches a Wait that does not watch ctx.Done.
	{"Wait wakes on cancel, pending", []step{
		{op: armCancelable, state: pending},
		{op: waitAsleep, state: pending},
		{op: cancel, state: canceled},
		{op: woken, want: false, ran: false, state: canceled},
		{op: start, want: false, state: canceled},
	}},
	{"Wait wakes on cancel, running", []step{
		{op: armCancelable, state: pending},
		{op: start, want: true, state: running},
		{op: waitAsleep, state: running},
		{op: cancel, state: abandoned},
		{op: woken, want: false, ran: true, state: abandoned},
		{op: deliver, want: false, state: abandoned},
	}},
	// A caller that spins sees the delivery and never parks: Spin reports it
	// once delivered, not before, and the Wait after it returns at once
	// without a channel (checked by the wait op). Catches a Spin that reports
	// a started call as delivered, and a Deliver that leaves a wake-up for a
	// caller that never parked (a send on a nil channel blocks for ever; a
	// WaitGroup.Done without its Add panics).
	{"spun, delivered", []step{
		{op: armCancelable, state: pending},
		{op: spin, want: false, state: pending},
		{op: start, want: true, state: running},
		{op: spin, want: false, state: running},
		{op: deliver, want: true, state: done},
		{op: spin, want: true, state: done},
		{op: wait, want: true, ran: true, state: done},
	}},
	{"spun, delivered, no context to watch", []step{
		{op: armBackground, state: pending},
		{op: start, want: true, state: running},
		{op: deliver, want: true, state: done},
		{op: spin, want: true, state: done},
		{op: wait, want: true, ran: true, state: done},
	}},
	// A caller that spun in vain parks, and Deliver wakes it: the sleeping
	// flag is set while it sleeps (checked after each step), and Start keeps
	// it. Catches a Start that drops the flag (Deliver would wake nobody: the
	// bubble deadlocks).
	{"spun in vain, then parked", []step{
		{op: armCancelable, state: pending},
		{op: spin, want: false, state: pending},
		{op: waitAsleep, state: pending},
		{op: start, want: true, state: running},
		{op: asleep, state: running},
		{op: deliver, want: true, state: done},
		{op: woken, want: true, ran: true, state: done},
	}},
	{"spun in vain, then parked, no context to watch", []step{
		{op: armBackground, state: pending},
		{op: start, want: true, state: running},
		{op: spin, want: false, state: running},
		{op: waitAsleep, state: running},
		{op: deliver, want: true, state: done},
		{op: woken, want: true, ran: true, state: done},
	}},
	// A given-up call is not delivered, whatever Spin is asked.
	{"spun on a given-up call", []step{
		{op: armCancelable, state: pending},
		{op: cancel, state: pending},
		{op: wait, want: false, ran: false, state: canceled},
		{op: spin, want: false, state: canceled},
		{op: start, want: false, state: canceled},
	}},
	// Reuse, as documented: once Wait has returned true, or once Start has
	// reported false, on either kind of wait in turn. Catches an Arm that
	// does not reset the state word (a reused call would stay done or
	// canceled), or that leaves the WaitGroup or the channel out of step.
	{"reuse", []step{
		{op: armCancelable, state: pending},
		{op: start, want: true, state: running},
		{op: deliver, want: true, state: done},
		{op: wait, want: true, ran: true, state: done},

		{op: armBackground, state: pending},
		{op: start, want: true, state: running},
		{op: deliver, want: true, state: done},
		{op: wait, want: true, ran: true, state: done},

		{op: armCancelable, state: pending},
		{op: cancel, state: pending},
		{op: wait, want: false, ran: false, state: canceled},
		{op: start, want: false, state: canceled},

		{op: armBackground, state: pending},
		{op: waitAsleep, state: pending},
		{op: start, want: true, state: running},
		{op: deliver, want: true, state: done},
		{op: woken, want: true, ran: true, state: done},

		{op: armCancelable, state: pending},
		{op: waitAsleep, state: pending},
		{op: start, want: true, state: running},
		{op: deliver, want: true, state: done},
		{op: woken, want: true, ran: true, state: done},
	}},
}

// TestTransitions runs each row of transitions, in a bubble so that a Wait
// that never wakes fails the test as a deadlock instead of hanging it, for
// many rounds so that Wait's select takes each of its ready cases; and
// again with KeepChannel, where the channel a Wait made must be left empty,
// whichever way the row ends, for the Call's next use.
func TestTransitions(t *testing.T) {
	for _, keep := range []bool{false, true} {
		for _, tt := range transitions {
			t.Run(fmt.Sprintf("%s/keep=%v", tt.name, keep), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					for round := range 64 {
						runSteps(t, round, tt.steps, keep)
					}
				})
			})
		}
	}
}

func runSteps(t *testing.T, round int, steps []step, keep bool) {
	t.Helper()
	var (
		c       Call
		stops   []context.CancelFunc
		waiter  chan [2]bool
		sleeper bool // a Wait begun by waitAsleep has not been seen to return
	)
	if keep {
		c.KeepChannel()
	}
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	cancelable := func() (context.Context, context.CancelFunc) {
		ctx, stop := context.WithCancel(context.Background())
		stops = append(stops, stop)
		return ctx, stop
	}
	ctx, stop := cancelable()
	for i, s := range steps {
		where := fmt.Sprintf("round %d, step %d (%v)", round, i, s.op)
		switch s.op {
		case armCancelable:
			if ctx.Err() == nil { // a context canceled before Arm is kept
				ctx, stop = cancelable()
			}
			c.Arm(ctx)
		case armBackground:
			ctx, stop = context.Background(), func() {}
			c.Arm(ctx)
		case start:
			if got := c.Start(); got != s.want {
				t.Fatalf("%s: Start = %v; want %v", where, got, s.want)
			}
		case deliver:
			asleep := c.state.Load()&sleeping != 0
			got, woke := c.DeliverWoke()
			if got != s.want {
				t.Fatalf("%s: Deliver = %v; want %v", where, got, s.want)
			}
			if woke != (got && asleep) {
				t.Fatalf("%s: Deliver woke the caller %v; the caller slept %v", where, woke, asleep)
			}
		case cancel:
			stop()
		case wait:
			if d, r := c.Wait(ctx); d != s.want || r != s.ran {
				t.Fatalf("%s: Wait = (%v, %v); want (%v, %v)", where, d, r, s.want, s.ran)
			}
			if s.want && c.watch && c.ch != nil {
				// A Wait that found the call delivered never parked: it
				// makes no channel, and nothing was sent on one.
				t.Fatalf("%s: Wait of a delivered call made a channel", where)
			}
		case spin:
			if got := c.Spin(10 * time.Microsecond); got != s.want {
				t.Fatalf("%s: Spin = %v; want %v", where, got, s.want)
			}
		case waitAsleep:
			waiter = make(chan [2]bool, 1)
			sleeper = true
			go func(ctx context.Context) {
				d, r := c.Wait(ctx)
				waiter <- [2]bool{d, r}
			}(ctx)
			fallthrough
		case asleep:
			synctest.Wait()
			select {
			case got := <-waiter:
				t.Fatalf("%s: Wait returned %v while the call was %s", where, got, stateNames[c.state.Load()&^sleeping])
			default:
			}
		case woken:
			synctest.Wait()
			select {
			case got := <-waiter:
				if want := [2]bool{s.want, s.ran}; got != want {
					t.Fatalf("%s: Wait = %v; want %v", where, got, want)
				}
				sleeper = false
			default:
				t.Fatalf("%s: Wait still asleep with the call %s", where, stateNames[c.state.Load()&^sleeping])
			}
		}
		if s.op == cancel && waiter != nil {
			synctest.Wait() // let a sleeping Wait settle the state before it is checked
		}
		checkState(t, where, &c, s.state, sleeper && (s.state == pending || s.state == running))
	}
	if !sleeper && len(c.ch) != 0 {
		t.Fatalf("round %d: the row ended with %d wake-ups left in the channel", round, len(c.ch))
	}
}

// checkState checks the state word (its phase, and the sleeping flag of a
// parked caller) and what Pending and Delivered report of it.
func checkState(t *testing.T, where string, c *Call, want uint32, wantSleeping bool) {
	t.Helper()
	got := c.state.Load()
	if phase := got &^ sleeping; phase != want {
		t.Fatalf("%s: state %s; want %s", where, stateNames[phase], stateNames[want])
	}
	if sl := got&sleeping != 0; sl != wantSleeping {
		t.Fatalf("%s: sleeping flag %v in state %s; want %v", where, sl, stateNames[want], wantSleeping)
	}
	if got := c.Pending(); got != (want == pending) {
		t.Fatalf("%s: Pending = %v in state %s", where, got, stateNames[want])
	}
	if got := c.Delivered(); got != (want == done) {
		t.Fatalf("%s: Delivered = %v in state %s", where, got, stateNames[want])
	}
}

// TestWaitUntilDeadline: a Wait whose context has a deadline sleeps exactly
// until it, in fake time, and gives the call up. Catches a Wait that wakes
// early or does not wake at the deadline.
func TestWaitUntilDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
		defer stop()
		var c Call
		c.Arm(ctx)
		t0 := time.Now()
		d, r := c.Wait(ctx)
		if d || r {
			t.Fatalf("Wait = (%v, %v); want (false, false)", d, r)
		}
		if slept := time.Since(t0); slept != 5*time.Second {
			t.Fatalf("Wait slept %v; want 5s", slept)
		}
		if c.Start() {
			t.Fatal("Start = true after the caller gave the call up")
		}
	})
}

// TestWaitDeliveredBeforeDeadline: a runner that delivers before the deadline
// wakes the caller then, with the outcome it wrote before Deliver. Catches a
// Wait that sleeps on to the deadline, and (under -race) an outcome that is
// not ordered before the caller's read.
func TestWaitDeliveredBeforeDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
		defer stop()
		var (
			c      Call
			result int
		)
		c.Arm(ctx)
		go func() {
			time.Sleep(2 * time.Second)
			if c.Start() {
				result = 42
				c.Deliver()
			}
		}()
		t0 := time.Now()
		d, r := c.Wait(ctx)
		if !d || !r {
			t.Fatalf("Wait = (%v, %v); want (true, true)", d, r)
		}
		if slept := time.Since(t0); slept != 2*time.Second {
			t.Fatalf("Wait slept %v; want 2s", slept)
		}
		if result != 42 {
			t.Fatalf("result = %d after the delivery; want 42", result)
		}
	})
}

// TestReuseAcrossBubbles: a pooled Call may be armed in one testing/synctest
// bubble and reused in another, on either kind of wait and from either to
// the other. Catches an Arm that keeps the previous call's channel: the
// next bubble would use a channel of the last one, a fatal error that ends
// the test binary.
func TestReuseAcrossBubbles(t *testing.T) {
	var c Call
	for i, watches := range []bool{true, true, false, false, true} {
		synctest.Test(t, func(t *testing.T) {
			var ctx context.Context = context.Background()
			if watches {
				var stop context.CancelFunc
				ctx, stop = context.WithCancel(ctx)
				defer stop()
			}
			c.Arm(ctx)
			go func() {
				if c.Start() {
					c.Deliver()
				}
			}()
			if d, r := c.Wait(ctx); !d || !r {
				t.Fatalf("bubble %d: Wait = (%v, %v); want (true, true)", i, d, r)
			}
		})
	}
}

// TestReuseAfterALostRace: a caller without a context to watch that
// readies its wake-up, then finds the call delivered as it announces its
// sleep, takes its WaitGroup count back; the Call is then reused in another
// testing/synctest bubble and outside any. Catches an announce that takes
// the count back with Done alone, which leaves the WaitGroup tied to the
// first bubble: the next Add, in another bubble or outside, is a fatal error
// that ends the test binary.
func TestReuseAfterALostRace(t *testing.T) {
	var c Call
	synctest.Test(t, func(t *testing.T) {
		c.Arm(context.Background())
		c.prepare()
		if !c.Start() || !c.Deliver() {
			t.Fatal("the call was not started and delivered")
		}
		if c.announce() {
			t.Fatal("announce = true on a delivered call")
		}
		if d, r := c.Wait(context.Background()); !d || !r {
			t.Fatalf("Wait = (%v, %v); want (true, true)", d, r)
		}
	})
	reuse := func(t *testing.T) {
		c.Arm(context.Background())
		res := make(chan [2]bool, 1)
		go func() {
			d, r := c.Wait(context.Background())
			res <- [2]bool{d, r}
		}()
		for c.state.Load() != pending|sleeping { // the Wait has announced its sleep
			runtime.Gosched()
		}
		if !c.Start() || !c.Deliver() {
			t.Fatal("the reused call was not started and delivered")
		}
		if got := <-res; got != [2]bool{true, true} {
			t.Fatalf("the reused call's Wait = %v", got)
		}
	}
	synctest.Test(t, reuse)
	reuse(t)
}
