package taskqueue_test

import (
	"context"
	"errors"
	"testing"

	"pgregory.net/rapid"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// groupMachine checks a group's state word, the counts of members queued
// and running and its flags, against a plain model, through the functions
// the group's runners use: members are added, started, ended with or without
// an error, and the group canceled, in any order.
type groupMachine struct {
	p        *taskqueue.GroupProbe
	failFast bool
	queued   int // added and not started, those taken included
	taken    []taskqueue.Member
	running  []taskqueue.Member
	canceled bool
}

func (m *groupMachine) Add(t *rapid.T) {
	m.p.Add(func(context.Context) error { return nil })
	if !m.canceled {
		m.queued++
	}
}

func (m *groupMachine) Take(t *rapid.T) {
	mem, ok := m.p.Take()
	if want := m.queued > len(m.taken) && !m.canceled; ok != want {
		t.Fatalf("Take = %v with %d queued, %d taken, canceled %v; want %v", ok, m.queued, len(m.taken), m.canceled, want)
	}
	if ok {
		m.taken = append(m.taken, mem)
	}
}

func (m *groupMachine) Start(t *rapid.T) {
	if len(m.taken) == 0 {
		t.Skip("no member taken")
	}
	mem := m.taken[0]
	m.taken = m.taken[1:]
	ok := m.p.Start()
	if ok == m.canceled {
		t.Fatalf("Start = %v with the group canceled %v", ok, m.canceled)
	}
	if ok {
		m.queued--
		m.running = append(m.running, mem)
	} else {
		m.queued-- // a start refused for a cancel takes the member off the counts
	}
}

func (m *groupMachine) End(t *rapid.T) {
	if len(m.running) == 0 {
		t.Skip("nothing runs")
	}
	i := rapid.IntRange(0, len(m.running)-1).Draw(t, "member")
	var err error
	if rapid.IntRange(0, 3).Draw(t, "fails") == 0 {
		err = errors.New("member failed")
	}
	m.p.End(m.running[i], err)
	m.running = append(m.running[:i], m.running[i+1:]...)
	if err != nil && m.failFast {
		m.cancel()
	}
}

func (m *groupMachine) Cancel(t *rapid.T) {
	m.p.Cancel(context.Canceled)
	m.cancel()
}

// cancel is the model of a cancel: the members waiting in the list are
// dropped; those taken stay counted until their start fails.
func (m *groupMachine) cancel() {
	if !m.canceled {
		m.canceled = true
		m.queued = len(m.taken)
	}
}

func (m *groupMachine) Check(t *rapid.T) {
	q, r, canceled, done := m.p.Counts()
	if canceled != m.canceled {
		t.Fatalf("canceled = %v; want %v", canceled, m.canceled)
	}
	if r != len(m.running) {
		t.Fatalf("running = %d; want %d", r, len(m.running))
	}
	if q != m.queued {
		t.Fatalf("queued = %d; want %d", q, m.queued)
	}
	if want := len(m.running) == 0 && (m.canceled || m.queued == 0); done != want {
		t.Fatalf("done = %v; want %v (queued %d, running %d, canceled %v)", done, want, m.queued, len(m.running), m.canceled)
	}
}

// TestGroupStateModel runs random sequences on a group's state word, on a
// suspended queue whose runners never run, so that the test alone starts and
// ends members.
func TestGroupStateModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		q := taskqueue.NewConcurrent(4)
		q.Suspend()
		failFast := rapid.Bool().Draw(t, "failFast")
		m := &groupMachine{p: taskqueue.NewGroupProbe(q, failFast), failFast: failFast}
		t.Repeat(rapid.StateMachineActions(m))
		q.Resume() // the runners find nothing left, or run what the test left
		q.Close()
	})
}
