package scheduler_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// A scheduler with a limit of one runs its items one after the other, in the
// order they were queued.
func Example() {
	s := scheduler.New(1)
	var out []string
	for _, word := range []string{"one", "two", "three"} {
		s.Enqueue(scheduler.Func(func() { out = append(out, word) }))
	}
	s.Wait(context.Background())
	fmt.Println(out)
	// Output: [one two three]
}

func ExampleScheduler_TryDequeue() {
	s := scheduler.New(1)
	release := make(chan struct{})
	s.Enqueue(scheduler.Func(func() { <-release })) // keeps the only slot busy
	id, _ := s.Enqueue(scheduler.Func(func() { fmt.Println("never printed") }))

	fmt.Println("removed:", s.TryDequeue(id))
	fmt.Println("removed again:", s.TryDequeue(id))
	close(release)
	s.Wait(context.Background())
	// Output:
	// removed: true
	// removed again: false
}

// A barrier waits for the items queued before it and runs alone.
func ExampleBarrier() {
	s := scheduler.New(4)
	var mu sync.Mutex
	sum := 0
	for i := 1; i <= 10; i++ {
		s.Enqueue(scheduler.Func(func() {
			mu.Lock()
			defer mu.Unlock()
			sum += i
		}))
	}
	s.Enqueue(scheduler.Barrier(scheduler.Func(func() {
		fmt.Println("sum before the barrier:", sum) // no lock: nothing else runs
	})))
	s.Wait(context.Background())
	// Output: sum before the barrier: 55
}

// TryRun runs an item on the caller when the scheduler is idle, which saves
// the hand-off to a worker goroutine.
func ExampleScheduler_TryRun() {
	s := scheduler.New(1)
	ran := s.TryRun(scheduler.Slot{}, func(scheduler.Slot) { fmt.Println("on the caller") })
	fmt.Println("ran:", ran)
	// Output:
	// on the caller
	// ran: true
}

// runsOn is a Task that receives the Slot it runs on.
type runsOn func(scheduler.Slot)

func (f runsOn) Run(sl scheduler.Slot) { f(sl) }

// An item of a serial scheduler that must wait for more work of its own
// scheduler runs it in its own place with TryRun and its Slot, instead of
// queuing it behind itself and waiting for a slot it holds.
func ExampleScheduler_TryRun_inPlace() {
	s := scheduler.New(1)
	s.Enqueue(runsOn(func(sl scheduler.Slot) {
		s.TryRun(sl, func(scheduler.Slot) { fmt.Println("inner") })
		fmt.Println("outer done")
	}))
	s.Wait(context.Background())
	// Output:
	// inner
	// outer done
}

func ExampleWithMaxPending() {
	s := scheduler.New(1, scheduler.WithMaxPending(1))
	started, release := make(chan struct{}), make(chan struct{})
	s.Enqueue(scheduler.Func(func() { close(started); <-release }))
	<-started                            // a running item holds no room
	s.Enqueue(scheduler.Func(func() {})) // a waiting one fills the list
	_, err := s.Enqueue(scheduler.Func(func() {}))
	fmt.Println(err)
	close(release)
	s.Wait(context.Background())
	// Output: scheduler: list full
}

func ExampleWithPanicHandler() {
	s := scheduler.New(1, scheduler.WithPanicHandler(func(p *scheduler.PanicError) {
		fmt.Println("recovered:", p.Value)
	}))
	s.Enqueue(scheduler.Func(func() { panic("oops") }))
	s.Enqueue(scheduler.Func(func() { fmt.Println("next item runs") }))
	s.Wait(context.Background())
	// Output:
	// recovered: oops
	// next item runs
}

// Children run on their target's slots, with no goroutine of their own:
// here two serial children share a target that runs one item at a time, and
// take turns by a quantum of one item.
func ExampleWithTarget() {
	target := scheduler.New(1)
	a := scheduler.New(1, scheduler.WithTarget(target), scheduler.WithQuantum(1))
	b := scheduler.New(1, scheduler.WithTarget(target), scheduler.WithQuantum(1))
	var out []string
	target.Suspend() // queue everything first, to show the order
	for i := range 2 {
		a.Enqueue(scheduler.Func(func() { out = append(out, fmt.Sprint("a", i)) }))
		b.Enqueue(scheduler.Func(func() { out = append(out, fmt.Sprint("b", i)) }))
	}
	target.Resume()
	target.Wait(context.Background())
	fmt.Println(out)
	// Output: [a0 b0 a1 b1]
}

// A child of higher priority goes first on its target.
func ExampleWithPriority() {
	target := scheduler.New(1)
	low := scheduler.New(1, scheduler.WithTarget(target))
	high := scheduler.New(1, scheduler.WithTarget(target), scheduler.WithPriority(1))
	var out []string
	target.Suspend()
	low.Enqueue(scheduler.Func(func() { out = append(out, "low") }))
	high.Enqueue(scheduler.Func(func() { out = append(out, "high") }))
	target.Resume()
	target.Wait(context.Background())
	fmt.Println(out)
	// Output: [high low]
}

// A reservation takes room now for an item queued later.
func ExampleReservation() {
	s := scheduler.New(1, scheduler.WithMaxPending(1))
	r, err := s.Reserve()
	fmt.Println(err)
	_, err = s.Enqueue(scheduler.Func(func() {}))
	fmt.Println(err) // the reservation holds the only room
	r.Enqueue(scheduler.Func(func() { fmt.Println("queued on the reserved room") }))
	s.Wait(context.Background())
	// Output:
	// <nil>
	// scheduler: list full
	// queued on the reserved room
}

func ExampleScheduler_SetLimit() {
	s := scheduler.New(1)
	s.SetLimit(4)
	fmt.Println(s.Limit())
	// Output: 4
}

func ExampleScheduler_TryEnqueue() {
	s := scheduler.New(1)
	release := make(chan struct{})
	fmt.Println(s.TryEnqueue(scheduler.Func(func() { <-release })))
	fmt.Println(s.TryEnqueue(scheduler.Func(func() {}))) // the only slot is taken
	close(release)
	s.Wait(context.Background())
	// Output:
	// true
	// false
}
