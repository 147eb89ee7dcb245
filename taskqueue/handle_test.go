package taskqueue_test

import (
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// handleMachine checks a Handle's list of waiters against a plain model: the
// channel of Done is one channel, closed exactly when the task is done; each
// Wait's node is signaled once, at the finish; each callback runs once, at
// the finish or at once if the task is done; Err and IsDone agree.
type handleMachine struct {
	q        *taskqueue.Queue
	p        *taskqueue.HandleProbe
	done     <-chan struct{} // the channel of Done, once asked
	waits    []<-chan struct{}
	calls    []*int
	finished bool
	err      error
}

func (m *handleMachine) Done(t *rapid.T) {
	ch := m.p.Handle().Done()
	if m.done != nil && ch != m.done && !m.finished {
		t.Fatal("Done returned two channels for one pending task")
	}
	if m.done == nil {
		m.done = ch
	}
}

func (m *handleMachine) Wait(t *rapid.T) {
	ch := m.p.PushWait()
	if (ch == nil) != m.finished {
		t.Fatalf("a Wait's node was refused = %v, with the task done = %v", ch == nil, m.finished)
	}
	if ch != nil {
		m.waits = append(m.waits, ch)
	}
}

func (m *handleMachine) Notify(t *rapid.T) {
	n := new(int)
	m.p.Notify(func() { *n++ })
	if m.finished && *n != 1 {
		t.Fatal("a callback added to a done task did not run at once")
	}
	m.calls = append(m.calls, n)
}

func (m *handleMachine) Finish(t *rapid.T) {
	if m.finished {
		t.Skip("a task finishes once")
	}
	var err error
	if rapid.Bool().Draw(t, "fails") {
		err = fmt.Errorf("failure %d", rapid.IntRange(0, 9).Draw(t, "n"))
	}
	watched := m.p.Finish(err)
	if want := m.done != nil || len(m.waits) > 0 || len(m.calls) > 0; watched != want {
		t.Fatalf("Finish reported watched = %v; want %v", watched, want)
	}
	m.finished, m.err = true, err
}

func (m *handleMachine) Check(t *rapid.T) {
	h := m.p.Handle()
	if h.IsDone() != m.finished {
		t.Fatalf("IsDone = %v; want %v", h.IsDone(), m.finished)
	}
	if err := h.Err(); !errors.Is(err, m.err) || (err == nil) != (m.err == nil) {
		t.Fatalf("Err = %v; want %v", err, m.err)
	}
	if m.done != nil && isClosed(m.done) != m.finished {
		t.Fatalf("Done's channel closed = %v with the task done = %v", isClosed(m.done), m.finished)
	}
	for i, ch := range m.waits {
		select {
		case <-ch:
			if !m.finished {
				t.Fatalf("wait %d signaled before the finish", i)
			}
			m.waits[i] = closedSignal // received: it must never come again
		default:
			if m.finished && ch != closedSignal {
				t.Fatalf("wait %d not signaled after the finish", i)
			}
		}
	}
	for i, n := range m.calls {
		if want := 0; m.finished {
			want = 1
			if *n != want {
				t.Fatalf("callback %d ran %d times after the finish; want 1", i, *n)
			}
		} else if *n != want {
			t.Fatalf("callback %d ran %d times before the finish", i, *n)
		}
	}
}

// closedSignal stands for a wait's channel whose one signal was received.
var closedSignal = make(chan struct{})

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestHandleModel runs random sequences of Done, Wait, callbacks and the
// finish on a handle, checking it against the model after every step.
func TestHandleModel(t *testing.T) {
	q := taskqueue.NewSerial()
	rapid.Check(t, func(t *rapid.T) {
		m := &handleMachine{q: q, p: taskqueue.NewHandleProbe(q)}
		t.Repeat(rapid.StateMachineActions(m))
	})
}
