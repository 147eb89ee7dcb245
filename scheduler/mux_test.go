package scheduler_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// TestPriority: on a saturated target of limit 1, a child of higher priority
// starts within one quantum, and children of lower priority still get at
// least one start in eight while a higher one is flooded.
func TestPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(1)
		low := scheduler.New(1, scheduler.WithTarget(root), scheduler.WithPriority(-1), scheduler.WithQuantum(1))
		mid := scheduler.New(1, scheduler.WithTarget(root), scheduler.WithQuantum(1))
		high := scheduler.New(1, scheduler.WithTarget(root), scheduler.WithPriority(5), scheduler.WithQuantum(1))
		var mu sync.Mutex
		var order []string
		gate := make(chan struct{})
		root.Enqueue(scheduler.Func(func() { <-gate })) // holds the only slot
		synctest.Wait()
		add := func(c *scheduler.Scheduler, name string, n int) {
			for range n {
				c.Enqueue(scheduler.Func(func() {
					mu.Lock()
					order = append(order, name)
					mu.Unlock()
				}))
			}
		}
		add(low, "low", 40)
		add(mid, "mid", 40)
		add(high, "high", 40)
		close(gate)
		mustWait(t, root)
		if order[0] != "high" {
			t.Errorf("first start: %s; want high", order[0])
		}
		// While high is flooded, one start in eight goes to the longest
		// waiting of the lower priorities: low, queued before mid, then mid.
		firstLow := slices.Index(order, "low")
		firstMid := slices.Index(order, "mid")
		if firstLow != 7 {
			t.Errorf("low first started at %d; want 7, the first shared start", firstLow)
		}
		if firstMid != 15 {
			t.Errorf("mid first started at %d; want 15, the second shared start", firstMid)
		}
		lastHigh := slices.Index(order, "high")
		for i, name := range order {
			if name == "high" {
				lastHigh = i
			}
		}
		if highs := lastHigh + 1; highs > 40+40/7+1 {
			t.Errorf("high's 40 items took %d starts; want them served first, with one start in eight shared", highs)
		}
		t.Logf("order: %v", order)
	})
}

// TestPriorityPreempts: on a target saturated by a child of priority 0, a
// child of higher priority starts within one quantum.
func TestPriorityPreempts(t *testing.T) {
	const quantum = 8
	n := waitBehindFlood(t, quantum, []scheduler.Option{scheduler.WithQuantum(quantum)}, scheduler.WithPriority(1))
	if n > quantum {
		t.Errorf("the high-priority item waited for %d items of priority 0; want at most one quantum (%d)", n, quantum)
	}
}

// TestPriorityOrdersChildrenNotTheTargetsOwnItems: priorities order a
// target's children among themselves; the target's own items keep their
// places in its list, in the order they were queued with the children's
// turns. On a busy target of limit 1: two own items, then items of a child
// of priority 0, then of a child of priority 1, then a third own item. The
// own items queued first start first; the turn the low child asked for goes
// to the high one; the third own item comes last.
func TestPriorityOrdersChildrenNotTheTargetsOwnItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(1)
		low := scheduler.New(1, scheduler.WithTarget(root))
		high := scheduler.New(1, scheduler.WithTarget(root), scheduler.WithPriority(1))
		var log testkit.Log
		release := make(chan struct{})
		root.Enqueue(scheduler.Func(func() { <-release }))
		synctest.Wait()
		root.Enqueue(scheduler.Func(func() { log.Add("own 1") }))
		root.Enqueue(scheduler.Func(func() { log.Add("own 2") }))
		for i := range 3 {
			low.Enqueue(scheduler.Func(func() { log.Add(fmt.Sprint("low ", i)) }))
		}
		for i := range 3 {
			high.Enqueue(scheduler.Func(func() { log.Add(fmt.Sprint("high ", i)) }))
		}
		root.Enqueue(scheduler.Func(func() { log.Add("own 3") }))
		close(release)
		mustWait(t, root)
		expect(t, "in the end", log.Take(), "own 1", "own 2", "high 0", "high 1", "high 2", "low 0", "low 1", "low 2", "own 3")
	})
}
