package scheduler_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// TestWorkersStartOnDemandAndExit: a root starts a worker goroutine for
// each item that may start, up to its limit, and each worker exits once the
// list is empty: an idle scheduler holds no goroutine. A root's workers are
// its slots, each held by one worker goroutine from its start to its end:
// once synctest.Wait returns, a worker that gave its slot back has ended,
// and the bubble's end shows that none is left blocked.
func TestWorkersStartOnDemandAndExit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(3)
		var log testkit.Log
		var gates []*gate
		for i := range 5 {
			gates = append(gates, newGate(fmt.Sprint(i), &log))
			s.Enqueue(gates[i])
			synctest.Wait()
			if got, want := s.Active(), min(i+1, 3); got != want {
				t.Errorf("%d items queued: %d workers; want %d", i+1, got, want)
			}
		}
		release(gates...)
		synctest.Wait()
		if got := s.Active(); got != 0 {
			t.Errorf("%d workers left once the list is empty; want 0", got)
		}
		if got := log.TakeSorted(); len(got) != 5 {
			t.Errorf("ran %v; want the 5 items", got)
		}
	})
}

// TestPanicReachesHandlerAndWorkerGoesOn: a panic in an item goes, as a
// *PanicError with the stack of the panic and the scheduler's name, to the
// panic handler, on the worker, before it takes its next item; the items
// after it run, and it counts as completed.
func TestPanicReachesHandlerAndWorkerGoesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log testkit.Log
		var panics testkit.Panics[*scheduler.PanicError]
		s := scheduler.New(1, scheduler.WithName("loader"), scheduler.WithPanicHandler(func(p *scheduler.PanicError) {
			log.Add(fmt.Sprint("handler: ", p.Value))
			panics.Add(p)
		}))
		errBoom := errors.New("boom")
		s.Enqueue(scheduler.Func(func() { panicWithError(errBoom) }))
		s.Enqueue(scheduler.Func(func() { log.Add("a") }))
		s.Enqueue(scheduler.Func(func() { panic("second") }))
		s.Enqueue(scheduler.Func(func() { log.Add("b") }))
		mustWait(t, s)
		expect(t, "in the end", log.Take(), "handler: boom", "a", "handler: second", "b")
		got := panics.Take()
		if len(got) != 2 {
			t.Fatalf("the handler got %d panics; want 2", len(got))
		}
		if p := got[0]; !errors.Is(p, errBoom) || p.Source != "loader" {
			t.Errorf("first panic = %v from %q; want errBoom from \"loader\"", p.Value, p.Source)
		}
		if !strings.Contains(string(got[0].Stack), "panicWithError") {
			t.Errorf("the stack does not show the panicking function:\n%s", got[0].Stack)
		}
		if got := s.Stats().Completed; got != 4 {
			t.Errorf("Completed = %d; want 4", got)
		}
	})
}

func panicWithError(err error) { panic(err) }

// TestGoexit: an item that calls runtime.Goexit ends its worker; its slot
// passes to a new one, the items behind it run, and it counts as completed.
// The Goexit function runs for it, on the worker, before the slot is given
// back.
func TestGoexit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s *scheduler.Scheduler
		var goexits, runningThen atomic.Int32
		s = scheduler.New(1, scheduler.WithGoexitFunc(func() {
			goexits.Add(1)
			runningThen.Add(int32(s.Stats().Running))
		}))
		var ran atomic.Int32
		s.Enqueue(scheduler.Func(runtime.Goexit))
		s.Enqueue(scheduler.Func(func() { ran.Add(1) }))
		s.Enqueue(scheduler.Func(runtime.Goexit))
		s.Enqueue(scheduler.Func(func() { ran.Add(1) }))
		mustWait(t, s)
		synctest.Wait()
		if got := ran.Load(); got != 2 {
			t.Errorf("%d items ran around Goexits; want 2", got)
		}
		if got := goexits.Load(); got != 2 {
			t.Errorf("the Goexit function ran %d times; want 2", got)
		}
		if got := runningThen.Load(); got != 2 {
			t.Errorf("the Goexit functions saw %d items running in all; want 2, their own", got)
		}
		if got := s.Stats().Completed; got != 4 {
			t.Errorf("Completed = %d; want 4", got)
		}
		if got := s.Active(); got != 0 {
			t.Errorf("%d slots left, each a worker; want none", got)
		}
	})
}

// TestPanicHandlerGoexitPassesTheSlotOn: a panic handler that calls
// runtime.Goexit (as testing.T.FailNow does) ends its worker as an item's
// Goexit would: the slot passes to a new worker, the items after run, and
// Wait returns.
func TestPanicHandlerGoexitPassesTheSlotOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log testkit.Log
		s := scheduler.New(1, scheduler.WithPanicHandler(func(p *scheduler.PanicError) {
			log.Add(fmt.Sprint("handler: ", p.Value))
			runtime.Goexit()
		}))
		s.Enqueue(scheduler.Func(func() { panic("boom") }))
		s.Enqueue(scheduler.Func(func() { log.Add("after") }))
		synctest.Wait()
		expect(t, "once the bubble is at rest", log.Take(), "handler: boom", "after")
		if st := s.Stats(); st.Running != 0 || st.Pending != 0 {
			s.CloseNow()
			t.Fatalf("Stats() = %+v once the bubble is at rest; want nothing running or pending", st)
		}
		mustWait(t, s)
	})
}
