package scheduler_test

import (
	"context"
	"testing"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// TestNilTaskPanics: a nil Task, or a nil Func, which could not run, makes
// every call that takes a task panic, naming the call and what it got.
func TestNilTaskPanics(t *testing.T) {
	s := scheduler.New(1)
	r, err := s.Reserve()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Cancel()
	calls := map[string]func(scheduler.Task){
		"Enqueue":             func(x scheduler.Task) { s.Enqueue(x) },
		"EnqueueContext":      func(x scheduler.Task) { s.EnqueueContext(context.Background(), x) },
		"TryEnqueue":          func(x scheduler.Task) { s.TryEnqueue(x) },
		"Requeue":             func(x scheduler.Task) { s.Requeue(x) },
		"Reservation.Enqueue": func(x scheduler.Task) { r.Enqueue(x) },
	}
	for name, call := range calls {
		for arg, x := range map[string]scheduler.Task{"nil": nil, "Func(nil)": scheduler.Func(nil)} {
			want := "scheduler: " + name + "(" + arg + ")"
			if got := testkit.PanicMessage(func() { call(x) }); got != want {
				t.Errorf("%s(%s) panicked with %q; want %q", name, arg, got, want)
			}
		}
	}
	if got, want := testkit.PanicMessage(func() { scheduler.Barrier(nil) }), "scheduler: Barrier(nil)"; got != want {
		t.Errorf("Barrier(nil) panicked with %q; want %q", got, want)
	}
}

// TestNilContextPanics: every call that takes a context panics on a nil
// one, naming the call, even when it would not have waited.
func TestNilContextPanics(t *testing.T) {
	s := scheduler.New(1, scheduler.WithMaxPending(1))
	var none context.Context // a nil context; a nil literal is what staticcheck forbids
	for name, call := range map[string]func(){
		"EnqueueContext": func() { s.EnqueueContext(none, scheduler.Func(func() {})) },
		"ReserveContext": func() { s.ReserveContext(none) },
		"Wait":           func() { s.Wait(none) },
	} {
		if got, want := testkit.PanicMessage(call), "scheduler: "+name+" with a nil context"; got != want {
			t.Errorf("%s with a nil context panicked with %q; want %q", name, got, want)
		}
	}
	if st := s.Stats(); st.Pending != 0 || st.Completed != 0 {
		t.Errorf("Stats() = %+v; want nothing queued or run", st)
	}
}

// TestIDsIncrease: every way of queuing an item gives it an ID above all
// the earlier ones, never zero, and never one given before.
func TestIDsIncrease(t *testing.T) {
	s := scheduler.New(1, scheduler.WithMaxPending(4))
	s.Suspend() // nothing starts: every item stays queued
	var last scheduler.ID
	next := func(how string, id scheduler.ID) {
		t.Helper()
		if id <= last {
			t.Errorf("%s gave ID %d after %d; want more", how, id, last)
		}
		last = id
	}
	for range 2 {
		id, err := s.Enqueue(scheduler.Func(func() {}))
		if err != nil {
			t.Fatal(err)
		}
		next("Enqueue", id)
		if !s.TryDequeue(id) {
			t.Fatalf("TryDequeue(%d) of a queued item = false", id)
		}
		id, err = s.EnqueueContext(t.Context(), scheduler.Func(func() {}))
		if err != nil {
			t.Fatal(err)
		}
		next("EnqueueContext", id)
		next("Requeue", s.Requeue(scheduler.Func(func() {})))
		r, err := s.Reserve()
		if err != nil {
			t.Fatal(err)
		}
		next("Reservation.Enqueue", r.Enqueue(scheduler.Func(func() {})))
		s.DequeueAll()
	}
	s.Resume()
}

// TestBarrierMemory: marking a task as a barrier costs one allocation.
func TestBarrierMemory(t *testing.T) {
	if testkit.RaceEnabled {
		t.Skip("the race detector allocates")
	}
	x, marked := scheduler.Task(scheduler.Func(func() {})), scheduler.Task(nil)
	if allocs := testing.AllocsPerRun(100, func() { marked = scheduler.Barrier(x) }); allocs != 1 || marked == nil {
		t.Errorf("Barrier allocates %v times; want 1", allocs)
	}
}
