package scheduler_test

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

func TestPanicReachesHandlerAndWorkerGoesOn(t *testing.T) {
	var mu sync.Mutex
	var panics []*scheduler.PanicError
	s := scheduler.New(1, scheduler.WithPanicHandler(func(p *scheduler.PanicError) {
		mu.Lock()
		defer mu.Unlock()
		panics = append(panics, p)
	}))
	errBoom := errors.New("boom")
	var ran atomic.Int32
	s.Enqueue(scheduler.Func(func() { panicWithError(errBoom) }))
	s.Enqueue(scheduler.Func(func() { ran.Add(1) }))
	s.Enqueue(scheduler.Func(func() { panic("second") }))
	s.Enqueue(scheduler.Func(func() { ran.Add(1) }))
	if err := s.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := ran.Load(); got != 2 {
		t.Errorf("%d items ran after panics; want 2", got)
	}
	if len(panics) != 2 {
		t.Fatalf("handler got %d panics; want 2", len(panics))
	}
	p := panics[0]
	if !errors.Is(p, errBoom) {
		t.Errorf("errors.Is(%v, errBoom) = false; want true", p.Value)
	}
	if !strings.Contains(string(p.Stack), "panicWithError") {
		t.Errorf("stack does not show the panicking function:\n%s", p.Stack)
	}
	if panics[1].Value != "second" || panics[1].Unwrap() != nil {
		t.Errorf("second panic = %v (Unwrap %v); want \"second\" (nil)", panics[1].Value, panics[1].Unwrap())
	}
	if got := s.Stats().Completed; got != 4 {
		t.Errorf("Completed() = %d; want 4", got)
	}
}

func panicWithError(err error) { panic(err) }

func TestGoexitKeepsSlotAndItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(1)
		var ran atomic.Int32
		s.Enqueue(scheduler.Func(runtime.Goexit))
		s.Enqueue(scheduler.Func(func() { ran.Add(1) }))
		s.Enqueue(scheduler.Func(runtime.Goexit))
		s.Enqueue(scheduler.Func(func() { ran.Add(1) }))
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := ran.Load(); got != 2 {
			t.Errorf("%d items ran around Goexits; want 2", got)
		}
		if got := s.Active(); got != 0 {
			t.Errorf("Active() = %d; want 0", got)
		}
		if got := s.Stats().Completed; got != 4 {
			t.Errorf("Completed() = %d; want 4", got)
		}
	})
}
