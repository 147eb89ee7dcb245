package scheduler_test

import (
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// TestHolds: a Slot holds its scheduler's slot while its item runs, on
// whatever goroutine carries it (a goroutine the item starts, say), and
// nothing once the item has returned; the zero Slot holds nothing.
func TestHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(2)
		other := scheduler.New(1)
		if s.Holds(scheduler.Slot{}) {
			t.Error("Holds(zero Slot) = true")
		}
		inItem := make(chan bool, 3)
		kept := make(chan scheduler.Slot, 1)
		s.Enqueue(slotFunc(func(sl scheduler.Slot) {
			inItem <- s.Holds(sl)
			helper := make(chan bool)
			go func() { helper <- s.Holds(sl) }() // work for the item, on another goroutine
			inItem <- <-helper
			inItem <- other.Holds(sl)
			kept <- sl
		}))
		if !<-inItem {
			t.Error("Holds(its Slot) = false in a running item")
		}
		if !<-inItem {
			t.Error("Holds(the item's Slot) = false on a goroutine the item started")
		}
		if <-inItem {
			t.Error("another scheduler's Holds(the item's Slot) = true")
		}
		sl := <-kept
		synctest.Wait()
		if s.Holds(sl) {
			t.Error("Holds(Slot of an item that returned) = true")
		}
		s.TryRun(scheduler.Slot{}, func(in scheduler.Slot) {
			if !s.Holds(in) {
				t.Error("Holds = false for the Slot TryRun gives")
			}
			// The Slot of TryRun carries the caller's on: a function run by
			// other inside it holds both.
			other.TryRun(in, func(in2 scheduler.Slot) {
				if !s.Holds(in2) || !other.Holds(in2) {
					t.Error("a Slot of a nested TryRun does not hold both slots")
				}
			})
		})
		mustWait(t, s)
	})
}
