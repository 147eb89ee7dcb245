package handoff

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
)

// The three parties to a call, as TestEveryInterleaving moves them: the
// caller (Wait, one step at a time), the runner (Start, then Deliver's
// compare-and-swap, then its wake-up), and the caller's context, which ends
// once.
const (
	moveCaller = 'C'
	moveRunner = 'R'
	moveCancel = 'X'
)

// The caller's steps, in Wait's order. park, and giveUp when it waits for a
// wake-up on its way, are the steps that may block. Once the call is
// delivered to it, the caller's next move arms the Call again, as a pooled
// Call is reused: the runner must be done with it by then.
var callerSteps = []string{"check", "prepare", "announce", "park", "giveUp"}

// The runner's steps.
var runnerSteps = []string{"Start", "finish", "wake"}

// An interleaving is one run of a call whose parties moved in the order of
// a schedule, and what each saw.
type interleaving struct {
	c     *Call
	watch bool // the caller's context can end
	ctx   context.Context
	stop  context.CancelFunc

	// The caller runs on a goroutine of its own, one step per value on
	// next, and reports each step's end on stepped: its outcome if it ended
	// the call ("delivered", "canceled", "abandoned"), or "".
	next    chan struct{}
	stepped chan string
	pc      int    // the caller's next step
	blocked bool   // the caller's last step has not returned: it sleeps
	caller  string // the caller's outcome; "" while it waits
	endStep string // the step that ended the call for the caller
	slept   bool   // announce set sleeping
	reused  bool   // the caller armed the Call again after its delivery
	settled uint32 // the state word when the caller armed it again

	rpc    int    // the runner's next step
	runner string // "delivered", "refused" (Start), "abandoned" (Deliver); "" while it runs
	ran    bool   // the function ran (Start reported true)
	owed   bool   // Deliver's compare-and-swap found the caller asleep
	woke   bool   // the runner woke the caller

	canceled bool
	trace    []string // the moves made, by name
}

func newInterleaving(watch bool) *interleaving {
	in := &interleaving{c: new(Call), watch: watch, next: make(chan struct{}), stepped: make(chan string, 1)}
	in.ctx, in.stop = context.Background(), func() {}
	if watch {
		in.ctx, in.stop = context.WithCancel(context.Background())
	}
	in.c.Arm(in.ctx)
	go in.runCaller()
	return in
}

// runCaller takes Wait's steps, one per value on in.next, as Wait does.
func (in *interleaving) runCaller() {
	c := in.c
	for pc := 0; ; pc++ {
		if _, ok := <-in.next; !ok {
			return
		}
		end := ""
		switch callerSteps[pc] {
		case "check":
			if c.Delivered() {
				end = "delivered"
			}
		case "prepare":
			c.prepare()
		case "announce":
			if !c.announce() {
				end = "delivered"
			} else {
				in.slept = true
			}
		case "park":
			if c.park(in.ctx) {
				end = "delivered"
			}
		case "giveUp":
			switch delivered, ran := c.giveUp(); {
			case delivered:
				end = "delivered"
			case ran:
				end = "abandoned"
			default:
				end = "canceled"
			}
		}
		in.stepped <- end
		if end != "" {
			return
		}
	}
}

// settle lets the caller's step run until it returns or sleeps, and takes
// its report if it returned.
func (in *interleaving) settle() {
	synctest.Wait()
	if !in.blocked {
		return
	}
	select {
	case end := <-in.stepped:
		in.blocked = false
		if end != "" {
			in.caller, in.endStep = end, callerSteps[in.pc]
		}
		in.pc++
	default:
	}
}

// move makes one move of party p, reporting false if p cannot move: it has
// ended, or (the caller) sleeps in a step, or (the context) has ended.
func (in *interleaving) move(p byte) bool {
	switch p {
	case moveCaller:
		if in.caller == "delivered" && !in.reused {
			in.trace = append(in.trace, "reuse")
			in.settled = in.c.state.Load()
			in.c.Arm(in.ctx) // a late wake-up would now find no channel, or a zero WaitGroup
			in.reused = true
			break
		}
		if in.caller != "" || in.blocked {
			return false
		}
		in.trace = append(in.trace, callerSteps[in.pc])
		in.blocked = true
		in.next <- struct{}{}
	case moveRunner:
		if in.runner != "" {
			return false
		}
		in.trace = append(in.trace, runnerSteps[in.rpc])
		switch runnerSteps[in.rpc] {
		case "Start":
			if in.ran = in.c.Start(); !in.ran {
				in.runner = "refused"
			}
		case "finish":
			ok, sleeper := in.c.finish()
			in.owed = sleeper
			switch {
			case !ok:
				in.runner = "abandoned"
			case !sleeper:
				in.runner = "delivered" // Deliver wakes nobody
			}
		case "wake":
			in.c.wake()
			in.woke = true
			in.runner = "delivered"
		}
		in.rpc++
	case moveCancel:
		if !in.watch || in.canceled {
			return false
		}
		in.trace = append(in.trace, "cancel")
		in.stop()
		in.canceled = true
	}
	in.settle()
	return true
}

// TestEveryInterleaving runs a call through every interleaving of the
// caller's steps (Wait's: check, prepare, announce, park, giveUp), the
// runner's (Start, Deliver's compare-and-swap, its wake-up) and, for a
// caller that watches a context, the context's end, and checks each run's
// end: exactly one of delivered (to both, the function run once), given up
// before it started (Start refused, the function never run) and given up
// while it ran (Deliver refused, the function run once); the caller never
// left asleep; the runner waking the caller exactly when the caller had set
// sleeping before the delivery, never a caller that did not sleep; a caller
// that gives up only once its context ended; the state word settled with no
// flag; and the Call reusable. Each schedule is a string of moves in which
// a party that cannot move (it ended, or the caller sleeps in a step) is
// skipped, followed by the moves left in a fixed order; every interleaving
// is the prefix of some schedule, so all are run.
//
// It would catch a lost wake-up (a runner that reads the flag before the
// caller sets it, or an announce that does not compare-and-swap: the caller
// sleeps for ever), a wake-up sent to a caller that never slept (a send on
// a nil channel, or a WaitGroup.Done without its Add, in this test a
// deadlock or a panic), a Start that drops the flag, and a give-up that
// misreads the race with the delivery.
func TestEveryInterleaving(t *testing.T) {
	for _, watch := range []bool{true, false} {
		t.Run(fmt.Sprintf("watch=%v", watch), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				counts := map[byte]int{moveCaller: len(callerSteps) + 1, moveRunner: len(runnerSteps)}
				if watch {
					counts[moveCancel] = 1
				}
				seen := map[string]bool{}
				ends := map[string]int{}
				// park's select picks at random between a wake-up and the
				// context's end when both are ready: many rounds take both.
				for round := 0; round < 16; round++ {
					for _, sched := range schedules(counts) {
						in := newInterleaving(watch)
						for _, p := range []byte(sched) {
							in.move(p)
						}
						// The moves left, in a fixed order; the context ends last,
						// so that a caller that parks on a context that never ends
						// is seen asleep.
						for in.move(moveRunner) || in.move(moveCaller) || in.move(moveCancel) {
						}
						trace := strings.Join(in.trace, " ")
						end := in.check(t, trace)
						if t.Failed() {
							return
						}
						seen[trace] = true
						ends[end]++
					}
				}
				t.Logf("%d interleavings, ends of 16 rounds: %v", len(seen), ends)
				for _, end := range []string{
					"delivered to a caller that never slept",
					"delivered, waking the caller",
					"delivered as the caller announced",
				} {
					if ends[end] == 0 {
						t.Errorf("no interleaving ended %q", end)
					}
				}
				if watch {
					for _, end := range []string{
						"given up before it started",
						"given up while it ran",
						"delivered as the caller gave up",
					} {
						if ends[end] == 0 {
							t.Errorf("no interleaving ended %q", end)
						}
					}
				}
			})
		})
	}
}

// check checks an interleaving's end, and names it.
func (in *interleaving) check(t *testing.T, trace string) string {
	t.Helper()
	fail := func(format string, args ...any) string {
		t.Errorf("%s: "+format, append([]any{trace}, args...)...)
		in.stop()
		close(in.next)
		return "failed"
	}
	if in.blocked {
		return fail("the caller sleeps for ever in %s (the runner %s)", callerSteps[in.pc], in.runner)
	}
	close(in.next) // the caller's goroutine has returned, or returns now
	if in.caller == "" || in.runner == "" {
		return fail("the caller ended %q, the runner %q; want both ended", in.caller, in.runner)
	}
	if in.caller != in.runner && !(in.caller == "canceled" && in.runner == "refused") {
		return fail("the caller saw %q, the runner %q", in.caller, in.runner)
	}
	if in.ran != (in.caller != "canceled") {
		return fail("the function ran %v, the caller saw %q", in.ran, in.caller)
	}
	if in.caller != "delivered" && !in.canceled {
		return fail("the caller gave up (%q) with its context live", in.caller)
	}
	if !in.watch && in.caller != "delivered" {
		return fail("a caller that watches no context was not delivered: %q", in.caller)
	}
	// A wake-up is owed exactly to a caller that announced its sleep
	// before the delivery, and reached nobody else.
	if in.woke != (in.slept && in.runner == "delivered") {
		return fail("the runner woke the caller %v; the caller slept %v and saw %q at %s", in.woke, in.slept, in.caller, in.endStep)
	}
	s := in.c.state.Load()
	if in.reused {
		s = in.settled
	}
	if s&sleeping != 0 || s == pending || s == running {
		return fail("the state word settled at %#x", s)
	}
	in.stop()

	// The Call is reusable once its caller saw the delivery, or once Start
	// refused it: run it again, parked, on either kind of wait.
	if in.caller == "delivered" || in.runner == "refused" {
		ctx := context.Background()
		if in.watch {
			var stop context.CancelFunc
			ctx, stop = context.WithCancel(ctx)
			defer stop()
		}
		in.c.Arm(ctx)
		res := make(chan [2]bool, 1)
		go func() {
			d, r := in.c.Wait(ctx)
			res <- [2]bool{d, r}
		}()
		synctest.Wait()
		if !in.c.Start() || !in.c.Deliver() {
			return fail("the reused Call was not started and delivered")
		}
		if got := <-res; got != [2]bool{true, true} {
			return fail("the reused Call's Wait = %v", got)
		}
	}

	switch {
	case in.caller == "canceled":
		return "given up before it started"
	case in.caller == "abandoned":
		return "given up while it ran"
	case in.endStep == "giveUp":
		return "delivered as the caller gave up"
	case in.woke:
		return "delivered, waking the caller"
	case in.endStep == "announce":
		return "delivered as the caller announced"
	}
	return "delivered to a caller that never slept"
}

// schedules returns every string with counts[p] moves of each party p.
func schedules(counts map[byte]int) []string {
	var out []string
	var b []byte
	var rec func()
	rec = func() {
		end := true
		for _, p := range []byte{moveCaller, moveRunner, moveCancel} {
			if counts[p] == 0 {
				continue
			}
			end = false
			counts[p]--
			b = append(b, p)
			rec()
			b = b[:len(b)-1]
			counts[p]++
		}
		if end {
			out = append(out, string(b))
		}
	}
	rec()
	return out
}
