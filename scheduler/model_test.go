package scheduler_test

import (
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"pgregory.net/rapid"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// modelItem is a Task of the model test: it records its start and its slot,
// then runs the functions sent to it on its goroutine until released.
type modelItem struct {
	barrier bool
	ended   bool // in the reference: finished or dequeued
	id      scheduler.ID
	release chan struct{}
	do      chan func()
	started atomic.Bool
	slot    scheduler.Slot // set when it starts
}

func newModelItem(barrier bool) *modelItem {
	return &modelItem{barrier: barrier, release: make(chan struct{}), do: make(chan func())}
}

func (m *modelItem) Run(sl scheduler.Slot) {
	m.slot = sl
	m.started.Store(true)
	for {
		select {
		case f := <-m.do:
			f()
		case <-m.release:
			return
		}
	}
}

// onItem runs f on the goroutine of the running item m and waits for it.
func (m *modelItem) onItem(f func()) {
	done := make(chan struct{})
	m.do <- func() { defer close(done); f() }
	<-done
}

// refScheduler is the trivially correct reference: a FIFO slice of waiting
// items and the set of running ones, advanced by the rules of the contract.
type refScheduler struct {
	limit     int
	queue     []*modelItem
	running   []*modelItem
	exclusive bool
}

// advance starts what the contract says starts: the head of the queue while
// a slot is free; a barrier only when nothing runs, and then alone.
func (r *refScheduler) advance() {
	for len(r.queue) > 0 && !r.exclusive {
		h := r.queue[0]
		if h.barrier {
			if len(r.running) > 0 {
				return
			}
			r.exclusive = true
		} else if len(r.running) >= r.limit {
			return
		}
		r.queue = r.queue[1:]
		r.running = append(r.running, h)
	}
}

// schedulerMachine runs a Scheduler and the reference side by side; each of
// its actions is a step, after which the test waits until the scheduler's
// goroutines are quiet (synctest.Wait) and compares.
type schedulerMachine struct {
	s          *scheduler.Scheduler
	ref        *refScheduler
	items      []*modelItem
	panics     atomic.Int32
	wantPanics int32
}

func newSchedulerMachine(t *rapid.T) *schedulerMachine {
	m := &schedulerMachine{}
	limit := rapid.IntRange(1, 4).Draw(t, "limit")
	m.s = scheduler.New(limit, scheduler.WithPanicHandler(func(*scheduler.PanicError) { m.panics.Add(1) }))
	m.ref = &refScheduler{limit: limit}
	return m
}

// Enqueue queues an item, or a barrier.
func (m *schedulerMachine) Enqueue(t *rapid.T) {
	it := newModelItem(rapid.IntRange(0, 7).Draw(t, "barrier") == 0)
	var task scheduler.Task = it
	if it.barrier {
		task = scheduler.Barrier(it)
	}
	id, err := m.s.Enqueue(task)
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	it.id = id
	m.items = append(m.items, it)
	m.ref.queue = append(m.ref.queue, it)
}

// Finish ends a running item: it returns, panics or calls runtime.Goexit.
func (m *schedulerMachine) Finish(t *rapid.T) {
	if len(m.ref.running) == 0 {
		t.Skip("nothing runs")
	}
	k := rapid.IntRange(0, len(m.ref.running)-1).Draw(t, "running")
	it := m.ref.running[k]
	switch rapid.IntRange(0, 2).Draw(t, "how") {
	case 0:
		close(it.release)
	case 1:
		it.do <- func() { close(it.release); panic("model") }
		m.wantPanics++
	default:
		it.do <- func() { close(it.release); runtime.Goexit() }
	}
	m.ref.running = slices.Delete(m.ref.running, k, k+1)
	it.ended = true
	if it.barrier {
		m.ref.exclusive = false
	}
}

// Dequeue tries to remove any item ever queued.
func (m *schedulerMachine) Dequeue(t *rapid.T) {
	if len(m.items) == 0 {
		t.Skip("no item")
	}
	it := m.items[rapid.IntRange(0, len(m.items)-1).Draw(t, "item")]
	k := slices.Index(m.ref.queue, it)
	if got, want := m.s.TryDequeue(it.id), k >= 0; got != want {
		t.Fatalf("TryDequeue = %v; want %v", got, want)
	}
	if k >= 0 {
		m.ref.queue = slices.Delete(m.ref.queue, k, k+1)
		it.ended = true
	}
}

// TryRun tries to run on the caller, which holds no slot.
func (m *schedulerMachine) TryRun(t *rapid.T) {
	ran := false
	got := m.s.TryRun(scheduler.Slot{}, func(sl scheduler.Slot) {
		ran = true
		if !m.s.Holds(sl) {
			t.Error("the Slot TryRun gives its function holds no slot")
		}
		if problem := m.s.Books(); problem != "" {
			t.Errorf("inside TryRun: %s", problem)
		}
	})
	want := !m.ref.exclusive && len(m.ref.queue) == 0 && len(m.ref.running) < m.ref.limit
	if got != want || ran != got {
		t.Fatalf("TryRun = %v (ran %v); want %v", got, ran, want)
	}
}

// InPlace runs TryRun from a running item, with its Slot: it runs in the
// item's place, and nested again from there.
func (m *schedulerMachine) InPlace(t *rapid.T) {
	if len(m.ref.running) == 0 {
		t.Skip("nothing runs")
	}
	it := m.ref.running[rapid.IntRange(0, len(m.ref.running)-1).Draw(t, "running")]
	var holds, ran, got, nested bool
	it.onItem(func() {
		holds = m.s.Holds(it.slot)
		got = m.s.TryRun(it.slot, func(sl scheduler.Slot) {
			ran = true
			nested = m.s.TryRun(sl, func(scheduler.Slot) {})
		})
	})
	if !holds || !got || !ran || !nested {
		t.Fatalf("from a running item: Holds = %v, TryRun = %v (ran %v, nested %v); want all true", holds, got, ran, nested)
	}
}

// Check compares the scheduler with the reference once it is quiet.
func (m *schedulerMachine) Check(t *rapid.T) {
	m.ref.advance()
	synctest.Wait()
	for k, it := range m.items {
		// An item has started if it runs, or if it ended and was not
		// dequeued (a dequeued one must never start).
		want := slices.Contains(m.ref.running, it) || (it.ended && testkit.IsClosed(it.release))
		if got := it.started.Load(); got != want {
			t.Fatalf("item %d started = %v; want %v (queue %d, running %d)", k, got, want, len(m.ref.queue), len(m.ref.running))
		}
	}
	st := m.s.Stats()
	if st.Running != len(m.ref.running) || st.Pending != len(m.ref.queue) {
		t.Fatalf("Stats: Running %d, Pending %d; want %d, %d", st.Running, st.Pending, len(m.ref.running), len(m.ref.queue))
	}
	if got := m.s.Active(); got != len(m.ref.running) {
		t.Fatalf("Active() = %d slots; want %d", got, len(m.ref.running))
	}
	if problem := m.s.Books(); problem != "" {
		t.Fatal(problem)
	}
	if got := m.panics.Load(); got != m.wantPanics {
		t.Fatalf("%d panics reached the handler; want %d", got, m.wantPanics)
	}
	// A Slot holds its scheduler's slot exactly while its item runs.
	for k, it := range m.items {
		if it.started.Load() {
			if got, want := m.s.Holds(it.slot), slices.Contains(m.ref.running, it); got != want {
				t.Fatalf("Holds(Slot of item %d) = %v; want %v", k, got, want)
			}
		}
	}
}

// finish lets everything end, so that the bubble ends with no goroutine.
func (m *schedulerMachine) finish(t *rapid.T) {
	for _, it := range m.items {
		if !testkit.IsClosed(it.release) {
			close(it.release)
		}
	}
	if err := m.s.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestSchedulerModel runs random sequences of enqueues (barriers among
// them), finishes (return, panic, Goexit), dequeues, TryRun on the caller and
// in an item's place, on schedulers of limit 1 to 4, checking after every
// step against the reference: which items started, the counts, the slots.
func TestSchedulerModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rapid.Check(bubbled{t}, func(t *rapid.T) {
			m := newSchedulerMachine(t)
			defer m.finish(t)
			t.Repeat(rapid.StateMachineActions(m))
		})
	})
}

// bubbled is a *testing.T in a synctest bubble, for rapid.Check, which
// otherwise asks for the test's deadline, a call the bubble forbids.
type bubbled struct{ *testing.T }
