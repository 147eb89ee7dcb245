package scheduler_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// TestHammerNoLostWakeup hunts the lost wake-up: an item queued at the
// instant the last worker decides to exit must still run. Producers queue
// items one or a few at a time and wait for them to run, so that the list
// keeps emptying and workers keep exiting while new items arrive. A monitor
// checks, under the scheduler's lock, that no item ever waits with no worker
// to take it (a state that, seen under the lock, is a lost wake-up), and at
// the end every item must have run exactly once.
func TestHammerNoLostWakeup(t *testing.T) {
	total := 1 << 20
	if testing.Short() || raceEnabled {
		total = 1 << 16
	}
	for _, limit := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			hammer(t, limit, total)
		})
	}
}

func hammer(t *testing.T, limit, total int) {
	const producers = 8
	s := scheduler.New(limit)
	var ran atomic.Int64
	stop := make(chan struct{})
	var violations atomic.Int64
	var monitor sync.WaitGroup
	monitor.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if pending, active := s.Snapshot(); pending > 0 && active == 0 {
				violations.Add(1)
			}
			runtime.Gosched()
		}
	})

	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			var mine atomic.Int64
			item := scheduler.Func(func() {
				mine.Add(1)
				ran.Add(1)
			})
			n := int64(total / producers)
			burst := int64(p%3 + 1) // producers queue 1, 2 or 3 items between waits
			for sent := int64(0); sent < n; {
				for range min(burst, n-sent) {
					if _, err := s.Enqueue(item); err != nil {
						t.Errorf("Enqueue: %v", err)
						return
					}
					sent++
				}
				for spins := 1; mine.Load() < sent; spins++ {
					if spins%64 == 0 {
						if pending, active := s.Snapshot(); pending > 0 && active == 0 {
							violations.Add(1)
							return // the item is stranded; waiting would hang
						}
					}
					runtime.Gosched()
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	monitor.Wait()
	if v := violations.Load(); v > 0 {
		t.Fatalf("saw %d times an item queued with no worker to take it", v)
	}
	if err := s.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, want := ran.Load(), int64(total/producers*producers); got != want {
		t.Errorf("%d items ran; want %d", got, want)
	}
	if got := s.Stats().Completed; got != uint64(ran.Load()) {
		t.Errorf("Completed() = %d; want %d", got, ran.Load())
	}
	if pending, active := s.Snapshot(); pending != 0 || active != 0 {
		t.Errorf("after the hammer: %d pending, %d workers; want 0, 0", pending, active)
	}
}
