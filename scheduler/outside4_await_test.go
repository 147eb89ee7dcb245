package scheduler_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// o4Task adapts a function that wants its Slot to a scheduler.Task.
type o4Task func(scheduler.Slot)

func (f o4Task) Run(sl scheduler.Slot) { f(sl) }

// o4Gauge counts functions running at once on a Scheduler's slots and keeps
// the first breach of the limit.
type o4Gauge struct {
	limit int32
	cur   atomic.Int32
	mu    sync.Mutex
	first string
}

func (g *o4Gauge) in(what string) {
	if n := g.cur.Add(1); n > g.limit {
		g.mu.Lock()
		if g.first == "" {
			g.first = fmt.Sprintf("%d running at once (limit %d), on entry of %s", n, g.limit, what)
		}
		g.mu.Unlock()
	}
}

func (g *o4Gauge) out() { g.cur.Add(-1) }

func (g *o4Gauge) check(t *testing.T) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.first != "" {
		t.Errorf("limit broken: %s", g.first)
	}
}

func o4Enqueue(t *testing.T, s *scheduler.Scheduler, f func(scheduler.Slot)) {
	t.Helper()
	if _, err := s.Enqueue(o4Task(f)); err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
}

// "Several goroutines may wait for one item at once: its slot is lent once,
// while any of them waits ... A function that TryRun runs in the item's place
// meanwhile takes the slot back for its run: a slot is lent only while nothing
// runs on it."
//
// Root s has one slot; an item of child a holds it and starts four goroutines
// that Await items of sibling b (limit 4), and one that calls s.TryRun with
// the item's Slot in a loop. Everything that runs on s's slot enters a gauge
// of limit 1. Lending once per waiter runs several of b's items at once;
// not taking the slot back runs a TryRun function beside a b item; TryRun
// must succeed, since the Slot holds a slot of s (Holds).
func TestOutside4AwaitLendOnce(t *testing.T) {
	for round := 0; round < 200; round++ {
		s := scheduler.New(1)
		a := scheduler.New(1, scheduler.WithTarget(s))
		b := scheduler.New(4, scheduler.WithTarget(s))
		g := &o4Gauge{limit: 1}
		spin := func() {
			for i := 0; i < 100; i++ {
				_ = i * i
			}
		}
		var bRan, tryRan atomic.Int32
		itemDone := make(chan struct{})
		o4Enqueue(t, a, func(sl scheduler.Slot) {
			defer close(itemDone)
			g.in("a's item")
			if !s.Holds(sl) || !a.Holds(sl) {
				t.Errorf("Holds: s %v, a %v, want both true for a's running item", s.Holds(sl), a.Holds(sl))
			}
			g.out()
			var wg sync.WaitGroup
			for w := 0; w < 4; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := 0; j < 3; j++ {
						done := make(chan struct{})
						o4Enqueue(t, b, func(scheduler.Slot) {
							g.in("b's item")
							spin()
							bRan.Add(1)
							g.out()
							close(done)
						})
						b.Await(sl, func() { <-done })
					}
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < 20; j++ {
					if !s.TryRun(sl, func(scheduler.Slot) { g.in("TryRun in the item's place"); spin(); tryRan.Add(1); g.out() }) {
						t.Errorf("TryRun in the place of a running item reported false")
						return
					}
				}
			}()
			wg.Wait()
		})
		<-itemDone
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		g.check(t)
		if bRan.Load() != 12 || tryRan.Load() != 20 {
			t.Errorf("b ran %d items (want 12), TryRun %d functions (want 20)", bRan.Load(), tryRan.Load())
		}
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
}

// "If the item's run ends while a wait goes on (the wait of a goroutine that
// it started and did not wait for), its slots come back at once, and the wait
// goes on as an outsider's, lending nothing."
//
// a's item starts a goroutine that Awaits b's item X, which blocks; X runs on
// the lent slot of s (limit 1); then a's item returns. An item R of s queued
// afterwards must not run while X does: the one slot is X's, and nothing is
// lent any more (synctest.Wait gives it every chance). When X is released, the wait ends, Await returns, and R
// runs. A broken implementation gives the slot back to s while X still runs
// on it (R beside X), or never returns from Await.
func TestOutside4AwaitOutlivesItem(t *testing.T) {
	for round := 0; round < 50 && !t.Failed(); round++ {
		synctest.Test(t, func(t *testing.T) {
			s := scheduler.New(1)
			a := scheduler.New(1, scheduler.WithTarget(s))
			b := scheduler.New(1, scheduler.WithTarget(s))
			g := &o4Gauge{limit: 1}
			xStarted := make(chan struct{})
			xRelease := make(chan struct{})
			xDone := make(chan struct{})
			awaitDone := make(chan struct{})
			itemDone := make(chan struct{})
			o4Enqueue(t, a, func(sl scheduler.Slot) {
				defer close(itemDone)
				o4Enqueue(t, b, func(scheduler.Slot) {
					g.in("b's item X")
					close(xStarted)
					<-xRelease
					g.out()
					close(xDone)
				})
				go func() {
					defer close(awaitDone)
					b.Await(sl, func() { <-xDone })
				}()
				<-xStarted
			})
			<-itemDone
			rDone := make(chan struct{})
			o4Enqueue(t, s, func(scheduler.Slot) {
				g.in("s's item R")
				g.out()
				close(rDone)
			})
			// R gets every chance to start beside X, if the implementation lets it.
			synctest.Wait()
			select {
			case <-rDone:
				t.Errorf("s's item R ran while b's item X still ran on the slot of a's returned item")
			default:
			}
			select {
			case <-awaitDone:
				t.Errorf("Await returned while its wait went on")
			default:
			}
			close(xRelease)
			<-awaitDone
			<-rDone
			if err := s.Wait(t.Context()); err != nil {
				t.Fatal(err)
			}
			g.check(t)
		})
	}
}

// The same case where the item returns before the awaited item starts: the
// wait then goes on as an outsider's, and b's item runs on s's free slot, so
// Await returns. A broken implementation that keeps lending a slot the item
// no longer holds runs b's item beside R; one that loses the wake-up hangs.
func TestOutside4AwaitAfterItemReturned(t *testing.T) {
	for round := 0; round < 200; round++ {
		s := scheduler.New(1)
		a := scheduler.New(1, scheduler.WithTarget(s))
		b := scheduler.New(2, scheduler.WithTarget(s))
		g := &o4Gauge{limit: 1}
		gate := make(chan struct{})
		awaitDone := make(chan struct{})
		itemDone := make(chan struct{})
		var bDone sync.WaitGroup
		o4Enqueue(t, a, func(sl scheduler.Slot) {
			defer close(itemDone)
			go func() {
				defer close(awaitDone)
				<-gate
				bDone.Add(2)
				for i := 0; i < 2; i++ {
					o4Enqueue(t, b, func(scheduler.Slot) { g.in("b's item"); g.out(); bDone.Done() })
				}
				b.Await(sl, bDone.Wait)
			}()
		})
		<-itemDone
		for i := 0; i < 3; i++ {
			o4Enqueue(t, s, func(scheduler.Slot) { g.in("s's item"); runtimeGosched(); g.out() })
		}
		close(gate)
		<-awaitDone
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		g.check(t)
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
}

// "the zero Slot lends nothing": a's item holds s's one slot and Awaits, with
// the zero Slot, an item of sibling b under a fake-time bound. b's item must
// not start before the bound ends the wait and a's item returns. A broken
// implementation lends a slot it was given no right to.
func TestOutside4AwaitZeroSlotLendsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(1)
		a := scheduler.New(1, scheduler.WithTarget(s))
		b := scheduler.New(1, scheduler.WithTarget(s))
		var aRunning atomic.Bool
		var overlap atomic.Bool
		done := make(chan struct{})
		o4Enqueue(t, a, func(scheduler.Slot) {
			aRunning.Store(true)
			defer aRunning.Store(false)
			bDone := make(chan struct{})
			o4Enqueue(t, b, func(scheduler.Slot) {
				if aRunning.Load() {
					overlap.Store(true)
				}
				close(done)
				close(bDone)
			})
			b.Await(scheduler.Slot{}, func() {
				select {
				case <-bDone:
				case <-time.After(time.Second):
				}
			})
		})
		<-done
		if overlap.Load() {
			t.Errorf("b's item ran on the slot of a's item, lent with the zero Slot")
		}
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// "A Slot is valid while its item runs; once the item has returned it holds
// nothing, whoever kept a copy." A serial Scheduler's first item keeps its
// Slot and returns; a second item runs and blocks. Holds reports false for
// the kept Slot, and TryRun with it reports false without running f (the
// Scheduler is busy, and the kept Slot is no longer an item's). A broken
// implementation runs f in the place of an item that has returned, beside
// the running one.
func TestOutside4StaleSlotHoldsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(1)
		kept := make(chan scheduler.Slot, 1)
		o4Enqueue(t, s, func(sl scheduler.Slot) { kept <- sl })
		sl := <-kept
		release := make(chan struct{})
		o4Enqueue(t, s, func(scheduler.Slot) { <-release })
		synctest.Wait()
		if s.Holds(sl) {
			t.Errorf("Holds reports true for the Slot of an item that has returned")
		}
		ran := false
		if s.TryRun(sl, func(scheduler.Slot) { ran = true }) || ran {
			t.Errorf("TryRun with a returned item's Slot ran f (%v) while another item ran", ran)
		}
		close(release)
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// "the zero Slot lends nothing, as does an item of a root": an item of a
// serial root Awaits another item of the same root under a fake-time bound;
// the other item must not start before the bound ends the wait and the
// first item returns. A broken implementation lends a root's own slot.
func TestOutside4AwaitRootLendsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scheduler.New(1)
		var firstRunning, overlap atomic.Bool
		secondDone := make(chan struct{})
		o4Enqueue(t, s, func(sl scheduler.Slot) {
			firstRunning.Store(true)
			defer firstRunning.Store(false)
			o4Enqueue(t, s, func(scheduler.Slot) {
				if firstRunning.Load() {
					overlap.Store(true)
				}
				close(secondDone)
			})
			s.Await(sl, func() {
				select {
				case <-secondDone:
				case <-time.After(time.Second):
				}
			})
		})
		<-secondDone
		if overlap.Load() {
			t.Errorf("a root's item lent its own slot to the item it awaited")
		}
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}
