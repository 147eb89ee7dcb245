package handoff

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
)

// callMachine drives one Call step by step, the caller's and the runner's
// calls in any order rapid draws, against a plain model: the state, whether
// the caller's context ended, and whether a Wait is asleep (the state word's
// sleeping flag must then be set, and only then). A Wait runs on a goroutine
// of its own; after each step synctest.Wait lets it settle, so the model
// knows exactly whether it must have returned, and with what.
type callMachine struct {
	c *Call

	armed     bool
	state     uint32 // the model's state of c
	watches   bool   // the context can end (else Wait uses the WaitGroup)
	ctx       context.Context
	stop      context.CancelFunc
	ended     bool           // the context was canceled
	waiter    chan [2]bool   // the sleeping Wait's results; nil if none is asleep
	waited    bool           // Wait has returned since Arm
	delivered bool           // and reported the delivery
	refused   bool           // Start reported false on a canceled call
	seen      map[string]int // what the run reached, to check that it reached every end
}

// free reports whether the docs allow c to be armed again.
func (m *callMachine) free() bool {
	return !m.armed || (m.waited && m.delivered) || (m.state == canceled && m.refused)
}

func (m *callMachine) Arm(t *rapid.T) {
	if !m.free() {
		t.Skip("the Call is in use")
	}
	m.stop()
	m.watches = rapid.Bool().Draw(t, "watches")
	if m.watches {
		m.ctx, m.stop = context.WithCancel(context.Background())
		if rapid.Bool().Draw(t, "endedBeforeArm") {
			m.stop()
		}
	} else {
		m.ctx, m.stop = context.Background(), func() {}
	}
	m.ended = m.ctx.Err() != nil
	if m.armed {
		m.seen["reuse"]++
	}
	if len(m.c.ch) != 0 {
		t.Fatalf("Arm of a kept channel with %d wake-ups left in it", len(m.c.ch))
	}
	m.c.Arm(m.ctx)
	m.armed, m.state = true, pending
	m.waited, m.delivered, m.refused = false, false, false
}

func (m *callMachine) Start(t *rapid.T) {
	if !m.armed {
		t.Skip("not armed")
	}
	got, want := m.c.Start(), m.state == pending
	if got != want {
		t.Fatalf("Start = %v in state %s", got, stateNames[m.state])
	}
	if want {
		m.state = running
	} else if m.state == canceled {
		m.refused = true
		m.seen["Start refused"]++
	}
	m.settle(t)
}

func (m *callMachine) Deliver(t *rapid.T) {
	if !m.armed {
		t.Skip("not armed")
	}
	got, woke := m.c.DeliverWoke()
	want := m.state == running
	if got != want {
		t.Fatalf("Deliver = %v in state %s", got, stateNames[m.state])
	}
	if asleep := m.waiter != nil; woke != (want && asleep) {
		t.Fatalf("Deliver woke the caller %v; a Wait asleep %v", woke, asleep)
	}
	if want {
		m.state = done
	}
	m.settle(t)
}

func (m *callMachine) Cancel(t *rapid.T) {
	if !m.armed || !m.watches || m.ended {
		t.Skip("no context to end")
	}
	m.stop()
	m.ended = true
	m.settle(t)
}

func (m *callMachine) Wait(t *rapid.T) {
	if !m.armed || m.waiter != nil || m.waited {
		t.Skip("one Wait per Arm")
	}
	m.waiter = make(chan [2]bool, 1)
	go func(c *Call, ctx context.Context, res chan<- [2]bool) {
		d, r := c.Wait(ctx)
		res <- [2]bool{d, r}
	}(m.c, m.ctx, m.waiter)
	m.settle(t)
}

// settle lets a sleeping Wait run until it returns or sleeps again, and
// checks it against the model: it must have returned exactly when the call
// was delivered or its context ended, and a return on a context's end moves
// the model as the docs say.
func (m *callMachine) settle(t *rapid.T) {
	synctest.Wait()
	if m.waiter == nil {
		return
	}
	var want [2]bool
	switch {
	case m.state == done:
		want = [2]bool{true, true}
	case m.ended && m.state == pending:
		want, m.state = [2]bool{false, false}, canceled
	case m.ended && m.state == running:
		want, m.state = [2]bool{false, true}, abandoned
	default:
		select {
		case got := <-m.waiter:
			t.Fatalf("Wait returned %v in state %s with the context live", got, stateNames[m.state])
		default:
			return // asleep, as it must be
		}
	}
	select {
	case got := <-m.waiter:
		if got != want {
			t.Fatalf("Wait = %v; want %v", got, want)
		}
	default:
		t.Fatalf("Wait asleep in state %s, context ended %v", stateNames[m.state], m.ended)
	}
	m.waiter, m.waited, m.delivered = nil, true, want[0]
	m.seen["Wait woke "+stateNames[m.state]]++
}

// Spin polls the call, briefly: it must report a delivery exactly when the
// model has one. A Spin with nobody delivering ends by its bound on polls,
// the bubble's clock standing still.
func (m *callMachine) Spin(t *rapid.T) {
	if !m.armed {
		t.Skip("not armed")
	}
	if got, want := m.c.Spin(time.Duration(rapid.IntRange(0, 2000).Draw(t, "spin"))), m.state == done; got != want {
		t.Fatalf("Spin = %v in state %s", got, stateNames[m.state])
	}
	if m.state == done && m.waiter == nil && !m.waited {
		// The caller saw the delivery: the Call is free, as after a Wait
		// that reported it.
		m.waited, m.delivered = true, true
		m.seen["Spin saw the delivery"]++
	}
}

func (m *callMachine) Check(t *rapid.T) {
	if !m.armed {
		return
	}
	// The flag is set exactly while a Wait sleeps on a pending or running
	// call: a Deliver that finds it set wakes the Wait, one that does not
	// wakes nobody.
	want := m.state
	if m.waiter != nil && (m.state == pending || m.state == running) {
		want |= sleeping
	}
	if got := m.c.state.Load(); got != want {
		t.Fatalf("state word %#x; the model says %#x (%s)", got, want, stateNames[m.state])
	}
	if got := m.c.Pending(); got != (m.state == pending) {
		t.Fatalf("Pending = %v in state %s", got, stateNames[m.state])
	}
	if got := m.c.Delivered(); got != (m.state == done) {
		t.Fatalf("Delivered = %v in state %s", got, stateNames[m.state])
	}
}

// cleanup wakes a Wait still asleep, as its runner would: by the context's
// end, or for a wait that watches none, by starting and delivering.
func (m *callMachine) cleanup() {
	if m.waiter != nil {
		if m.watches {
			m.stop()
		} else {
			m.c.Start()
			m.c.Deliver()
		}
		<-m.waiter
	}
	m.stop()
}

// TestModel checks random sequences of Arm, Start, Deliver, Spin, Wait and
// the context's end, reusing one Call whenever the docs allow, against
// callMachine's model. It would catch any transition that differs from the
// model (a Start or Deliver that does not compare, a Start that drops the
// sleeping flag, a Wait that returns before its outcome or misreads the
// race, a lost wakeup, a Spin that reports what was not delivered, an Arm
// that does not reset the state), and any reported state that lies
// (Pending, Delivered).
func TestModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seen := map[string]int{}
		ends := []string{"reuse", "Start refused", "Wait woke done", "Wait woke canceled", "Wait woke abandoned", "Spin saw the delivery"}
		// Each round is a fresh set of random sequences (20 of them with
		// -short); rounds go on until every end was reached, up to a bound,
		// so that the check of what the sequences reached does not fail on
		// one unlucky draw.
		for round := 0; round < 25 && !reachedAll(seen, ends); round++ {
			rapid.Check(testkit.NoDeadline{T: t}, func(rt *rapid.T) {
				m := &callMachine{c: new(Call), stop: func() {}, seen: seen}
				if rapid.Bool().Draw(rt, "keepChannel") {
					m.c.KeepChannel() // a reused Call keeps its channel: it must be empty at each Arm
				}
				rt.Cleanup(m.cleanup)
				rt.Repeat(rapid.StateMachineActions(m))
			})
		}
		t.Logf("reached: %v", seen)
		for _, end := range ends {
			if seen[end] == 0 {
				t.Errorf("no sequence reached %q", end)
			}
		}
	})
}

// reachedAll reports whether every one of ends was seen.
func reachedAll(seen map[string]int, ends []string) bool {
	for _, end := range ends {
		if seen[end] == 0 {
			return false
		}
	}
	return true
}
