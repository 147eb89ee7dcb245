package scheduler_test

import (
	"math"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// TestOptionsPanicOnBadValues: an option given a value it cannot take
// panics, naming itself and the value, when it is made.
func TestOptionsPanicOnBadValues(t *testing.T) {
	cases := []struct {
		f    func()
		want string
	}{
		{func() { scheduler.WithMaxPending(0) }, "scheduler: WithMaxPending(0): bound must be positive"},
		{func() { scheduler.WithMaxPending(-3) }, "scheduler: WithMaxPending(-3): bound must be positive"},
		{func() { scheduler.WithQuantum(0) }, "scheduler: WithQuantum(0): quantum must be positive"},
		{func() { scheduler.WithPanicHandler(nil) }, "scheduler: WithPanicHandler(nil)"},
		{func() { scheduler.WithGoexitFunc(nil) }, "scheduler: WithGoexitFunc(nil)"},
		{func() { scheduler.WithTarget(nil) }, "scheduler: WithTarget(nil)"},
		{func() { scheduler.WithIdleFunc(nil) }, "scheduler: WithIdleFunc(nil)"},
	}
	for _, c := range cases {
		if got := testkit.PanicMessage(c.f); got != c.want {
			t.Errorf("panicked with %q; want %q", got, c.want)
		}
	}
}

// TestOptionsTakeExtremeValues: priorities and quanta as large as an int
// holds are cut to what a Scheduler keeps, and keep their meaning: the
// highest priority goes first and the lowest last, and a child with the
// largest quantum runs its items.
func TestOptionsTakeExtremeValues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(1)
		var log testkit.Log
		release := make(chan struct{})
		root.Enqueue(scheduler.Func(func() { <-release })) // holds the only slot
		synctest.Wait()
		for _, c := range []struct {
			name string
			opts []scheduler.Option
		}{
			{"lowest", []scheduler.Option{scheduler.WithPriority(math.MinInt)}},
			{"zero", []scheduler.Option{scheduler.WithQuantum(math.MaxInt)}},
			{"highest", []scheduler.Option{scheduler.WithPriority(math.MaxInt)}},
		} {
			child := scheduler.New(1, append(c.opts, scheduler.WithTarget(root))...)
			child.Enqueue(scheduler.Func(func() { log.Add(c.name) }))
		}
		close(release)
		mustWait(t, root)
		expect(t, "in the end", log.Take(), "highest", "zero", "lowest")
	})
}
