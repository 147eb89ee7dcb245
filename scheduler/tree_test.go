package scheduler_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// gauge counts the items running on a scheduler and its subtree, and
// remembers the most at once.
type gauge struct {
	now, peak atomic.Int32
}

func (g *gauge) enter() {
	n := g.now.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (g *gauge) leave() { g.now.Add(-1) }

// TestChildrenRunOnTargetSlots: children with limits of their own on a
// target with a smaller limit. Each child's limit holds, the target's bounds
// them all, and the only goroutines are the target's workers.
func TestChildrenRunOnTargetSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(3)
		var rootG gauge
		kids := make([]*scheduler.Scheduler, 4)
		gauges := make([]gauge, 4)
		release := make(chan struct{})
		for k := range kids {
			kids[k] = scheduler.New(2, scheduler.WithTarget(root))
		}
		base := bubbleGoroutines()
		ran := make([]atomic.Int32, 4)
		for range 10 {
			for k, c := range kids {
				c.Enqueue(scheduler.Func(func() {
					rootG.enter()
					gauges[k].enter()
					<-release
					gauges[k].leave()
					rootG.leave()
					ran[k].Add(1)
				}))
			}
		}
		synctest.Wait()
		if got := bubbleGoroutines() - base; got != 3 {
			t.Errorf("%d goroutines run the tree's items; want 3, the target's workers", got)
		}
		close(release)
		for _, c := range kids {
			if err := c.Wait(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		if err := root.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		if p := rootG.peak.Load(); p != 3 {
			t.Errorf("at most %d items ran at once on a target of limit 3; want 3", p)
		}
		for k := range kids {
			if p := gauges[k].peak.Load(); p > 2 {
				t.Errorf("child %d ran %d items at once; its limit is 2", k, p)
			}
			if n := ran[k].Load(); n != 10 {
				t.Errorf("child %d ran %d items; want 10", k, n)
			}
		}
		synctest.Wait()
		if got := bubbleGoroutines() - base; got != 0 {
			t.Errorf("%d goroutines left once the tree is idle; want 0", got)
		}
	})
}

// TestSerialChildOrder: a serial child runs its items one at a time, in
// order, each seeing the last one's writes, whatever runs beside it.
func TestSerialChildOrder(t *testing.T) {
	root := scheduler.New(4)
	child := scheduler.New(1, scheduler.WithTarget(root))
	noise := scheduler.New(3, scheduler.WithTarget(root))
	var got []int // no lock: the child is serial
	for i := range 10000 {
		child.Enqueue(scheduler.Func(func() { got = append(got, i) }))
		noise.Enqueue(scheduler.Func(func() { runtime.Gosched() }))
	}
	if err := root.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("the serial child ran item %d in place %d", v, i)
		}
	}
	if len(got) != 10000 {
		t.Errorf("ran %d items; want 10000", len(got))
	}
}

// TestFairness: a child flooded with items and a sibling that queues one.
// On a target of limit 1, the sibling's item waits at most two quanta of the
// flood: the rest of the one running, and the turn the flood had queued
// before the sibling came. The flood's items each wait for a token, so the
// count is exact.
func TestFairness(t *testing.T) {
	for _, quantum := range []int{1, 4, 16} {
		t.Run(fmt.Sprintf("quantum=%d", quantum), func(t *testing.T) {
			n := waitBehindFlood(t, quantum, scheduler.WithQuantum(quantum))
			if n > 2*quantum {
				t.Errorf("the sibling's item waited for %d items of the flood; want at most two quanta (%d)", n, 2*quantum)
			}
		})
	}
}

// waitBehindFlood floods a child of a target of limit 1, then queues one item
// on a sibling made with opts, and returns how many items of the flood ran
// between the two.
func waitBehindFlood(t *testing.T, quantum int, opts ...scheduler.Option) int {
	var n int
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(1)
		flood := scheduler.New(4, scheduler.WithTarget(root), scheduler.WithQuantum(quantum))
		sibling := scheduler.New(1, append(opts, scheduler.WithTarget(root))...)
		tokens := make(chan struct{})
		for range 100 * quantum {
			flood.Enqueue(scheduler.Func(func() { <-tokens }))
		}
		synctest.Wait() // a flood item holds the only slot
		var ran atomic.Bool
		sibling.Enqueue(scheduler.Func(func() { ran.Store(true) }))
		for !ran.Load() {
			tokens <- struct{}{}
			n++
			synctest.Wait()
		}
		n-- // the item running when the sibling's was queued
		close(tokens)
		root.Wait(t.Context())
	})
	return n
}

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
		if err := root.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
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
	n := waitBehindFlood(t, quantum, scheduler.WithPriority(1))
	if n > quantum {
		t.Errorf("the high-priority item waited for %d items of priority 0; want at most one quantum (%d)", n, quantum)
	}
}

// TestSuspendResume: a suspended scheduler accepts items and starts none;
// suspending a child holds back its subtree only.
func TestSuspendResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(2)
		child := scheduler.New(1, scheduler.WithTarget(root))
		grandchild := scheduler.New(1, scheduler.WithTarget(child))
		other := scheduler.New(1, scheduler.WithTarget(root))
		var ran atomic.Int32
		item := scheduler.Func(func() { ran.Add(1) })
		child.Suspend()
		child.Enqueue(item)
		grandchild.Enqueue(item)
		other.Enqueue(item)
		synctest.Wait()
		if got := ran.Load(); got != 1 {
			t.Errorf("%d items ran with the child suspended; want 1 (the other child's)", got)
		}
		if st := child.Stats(); st.Pending != 1 {
			t.Errorf("suspended child: Pending = %d; want 1", st.Pending)
		}
		child.Resume()
		synctest.Wait()
		if got := ran.Load(); got != 3 {
			t.Errorf("%d items ran after Resume; want 3", got)
		}
		root.Suspend()
		root.Suspend()
		root.Enqueue(item)
		root.Resume()
		synctest.Wait()
		if got := ran.Load(); got != 3 {
			t.Errorf("ran %d after one of two Resumes; want 3", got)
		}
		root.Resume()
		synctest.Wait()
		if got := ran.Load(); got != 4 {
			t.Errorf("ran %d after both Resumes; want 4", got)
		}
		if msg := panicMessage(root.Resume); msg != "scheduler: Resume of a scheduler that is not suspended" {
			t.Errorf("Resume without Suspend panicked with %q", msg)
		}
	})
}

// TestSetLimit: raising the limit starts waiting items at once; lowering it
// lets the running ones finish, after which the new limit holds.
func TestSetLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, tree := range []bool{false, true} {
			var s *scheduler.Scheduler
			if tree {
				s = scheduler.New(1, scheduler.WithTarget(scheduler.New(8)))
			} else {
				s = scheduler.New(1)
			}
			var g gauge
			release := make(chan struct{})
			for range 6 {
				s.Enqueue(scheduler.Func(func() { g.enter(); <-release; g.leave() }))
			}
			synctest.Wait()
			s.SetLimit(4)
			synctest.Wait()
			if now := g.now.Load(); now != 4 {
				t.Errorf("tree %v: %d running after SetLimit(4); want 4", tree, now)
			}
			s.SetLimit(2)
			g.peak.Store(0)
			gate2 := make(chan struct{})
			for range 6 {
				s.Enqueue(scheduler.Func(func() { g.enter(); <-gate2; g.leave() }))
			}
			close(release)
			synctest.Wait()
			if now := g.now.Load(); now != 2 {
				t.Errorf("tree %v: %d running after SetLimit(2); want 2", tree, now)
			}
			close(gate2)
			s.Wait(t.Context())
			if msg := panicMessage(func() { s.SetLimit(0) }); msg != "scheduler: SetLimit(0): limit must be positive" {
				t.Errorf("SetLimit(0) panicked with %q", msg)
			}
		}
	})
}

// TestCloseTargetClosesSubtree: a closed target refuses new items in its
// subtree, and the items accepted before still run.
func TestCloseTargetClosesSubtree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(1)
		child := scheduler.New(1, scheduler.WithTarget(root))
		grandchild := scheduler.New(1, scheduler.WithTarget(child))
		var ran atomic.Int32
		gate := make(chan struct{})
		grandchild.Enqueue(scheduler.Func(func() { <-gate; ran.Add(1) }))
		grandchild.Enqueue(scheduler.Func(func() { ran.Add(1) }))
		res, err := grandchild.Reserve()
		if err != nil {
			t.Fatal(err)
		}
		root.Close()
		if !grandchild.Closed() || !child.Closed() {
			t.Error("the subtree of a closed target does not report Closed")
		}
		if _, err := grandchild.Enqueue(scheduler.Func(func() {})); err != scheduler.ErrClosed {
			t.Errorf("Enqueue on a grandchild of a closed target = %v; want ErrClosed", err)
		}
		if child.TryRun(scheduler.Slot{}, func(scheduler.Slot) {}) {
			t.Error("TryRun on a child of a closed target = true")
		}
		done := make(chan error)
		go func() { done <- root.Wait(context.Background()) }()
		close(gate)
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Wait on the target returned while a reservation below it was pending")
		default:
		}
		res.Enqueue(scheduler.Func(func() { ran.Add(1) }))
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := ran.Load(); got != 3 {
			t.Errorf("%d items ran; want 3, all accepted before Close", got)
		}
	})
}

// TestTryRunOnChild: on an idle child, TryRun runs on the caller, holding a
// slot of the child and of its target; from an item of a sibling it runs on
// the slot of the target the caller holds.
func TestTryRunOnChild(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(1)
		a := scheduler.New(1, scheduler.WithTarget(root))
		b := scheduler.New(1, scheduler.WithTarget(root))
		var holds [2]bool
		if !a.TryRun(scheduler.Slot{}, func(sl scheduler.Slot) { holds = [2]bool{a.Holds(sl), root.Holds(sl)} }) {
			t.Fatal("TryRun on an idle child = false")
		}
		if holds != [2]bool{true, true} {
			t.Errorf("inside TryRun on a child: holds child, target = %v; want both", holds)
		}
		res := make(chan [3]bool)
		a.Enqueue(slotFunc(func(sl scheduler.Slot) {
			var in [3]bool
			ok := b.TryRun(sl, func(sl scheduler.Slot) {
				in = [3]bool{b.Holds(sl), root.Holds(sl), a.Holds(sl)}
				if problem := root.Books(); problem != "" {
					t.Errorf("TryRun on a sibling: %s", problem)
				}
			})
			in[2] = in[2] && ok
			res <- in
		}))
		if got := <-res; got != [3]bool{true, true, true} {
			t.Errorf("TryRun on an idle sibling from an item, holds sibling, target, own child = %v; want all true", got)
		}
		// A busy target: the child cannot run on the caller.
		gate := make(chan struct{})
		root.Enqueue(scheduler.Func(func() { <-gate }))
		synctest.Wait()
		if a.TryRun(scheduler.Slot{}, func(scheduler.Slot) {}) {
			t.Error("TryRun on a child of a busy target = true")
		}
		if st := a.Stats(); st.Running != 0 || st.Pending != 0 {
			t.Errorf("after a refused TryRun the child reports %+v; want nothing", st)
		}
		close(gate)
		root.Wait(t.Context())
	})
}

// TestPanicAndGoexitInChildren: a panic goes to the child's handler and
// its drainer goes on; a Goexit ends the target's worker, whose slots pass
// on; nothing is lost.
func TestPanicAndGoexitInChildren(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(2)
		var panics atomic.Int32
		child := scheduler.New(1, scheduler.WithTarget(root), scheduler.WithPanicHandler(func(*scheduler.PanicError) { panics.Add(1) }))
		grandchild := scheduler.New(2, scheduler.WithTarget(child), scheduler.WithPanicHandler(func(*scheduler.PanicError) {}))
		var ran atomic.Int32
		for i := range 30 {
			s := child
			if i%2 == 1 {
				s = grandchild
			}
			s.Enqueue(scheduler.Func(func() {
				ran.Add(1)
				switch i % 5 {
				case 1:
					panic("boom")
				case 2:
					runtime.Goexit()
				}
			}))
		}
		root.Wait(t.Context())
		if got := ran.Load(); got != 30 {
			t.Errorf("%d items ran; want 30", got)
		}
		if got := panics.Load(); got != 3 {
			t.Errorf("the child's handler saw %d panics; want 3 (those of its own items)", got)
		}
		for _, s := range []*scheduler.Scheduler{root, child, grandchild} {
			if problem := s.Books(); problem != "" || s.Active() != 0 {
				t.Errorf("after the tree went idle: %d slots held, %s", s.Active(), problem)
			}
		}
	})
}

// TestTreeHammer runs random trees under many submitters, with items that
// call TryRun on other members of the tree, panic or call Goexit. Every
// item runs exactly once, no scheduler ever runs more items on its slots than
// its limit, counting its subtree's, and the books stay right.
func TestTreeHammer(t *testing.T) {
	rounds := 40
	if testing.Short() {
		rounds = 8
	}
	for round := range rounds {
		r := rand.New(rand.NewPCG(uint64(round), 99))
		hammerTree(t, r)
	}
}

type treeNode struct {
	s     *scheduler.Scheduler
	up    *treeNode
	limit int32
	g     gauge
}

func hammerTree(t *testing.T, r *rand.Rand) {
	silent := scheduler.WithPanicHandler(func(*scheduler.PanicError) {})
	rootLimit := 1 + r.IntN(3)
	nodes := []*treeNode{{s: scheduler.New(rootLimit, silent), limit: int32(rootLimit)}}
	for range 4 {
		up := nodes[r.IntN(len(nodes))]
		limit := 1 + r.IntN(3)
		s := scheduler.New(limit, scheduler.WithTarget(up.s), silent,
			scheduler.WithPriority(r.IntN(3)-1), scheduler.WithQuantum(1+r.IntN(8)))
		nodes = append(nodes, &treeNode{s: s, up: up, limit: int32(limit)})
	}
	const submitters, perSubmitter = 6, 2000
	runs := make([]atomic.Int32, submitters*perSubmitter)
	var over atomic.Int32
	// enter counts an item on its node and every node above; an item run
	// in the place of another takes no slot and is not counted.
	enter := func(n *treeNode) {
		for a := n; a != nil; a = a.up {
			a.g.enter()
			if a.g.now.Load() > a.limit {
				over.Add(1)
			}
		}
	}
	leave := func(n *treeNode) {
		for a := n; a != nil; a = a.up {
			a.g.leave()
		}
	}
	var wg sync.WaitGroup
	for sub := range submitters {
		seed := r.Uint64()
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(sub), seed))
			for i := range perSubmitter {
				k := sub*perSubmitter + i
				n := nodes[r.IntN(len(nodes))]
				other := nodes[r.IntN(len(nodes))]
				mode := r.IntN(20)
				n.s.Enqueue(slotFunc(func(sl scheduler.Slot) {
					enter(n)
					defer leave(n)
					runs[k].Add(1)
					switch mode {
					case 0:
						other.s.TryRun(sl, func(scheduler.Slot) { runtime.Gosched() })
					case 1:
						panic("hammer")
					case 2:
						defer runtime.Goexit()
					}
				}))
				if mode == 3 {
					n.s.TryRun(scheduler.Slot{}, func(scheduler.Slot) {})
				}
			}
		})
	}
	wg.Wait()
	if err := nodes[0].s.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	for k := range runs {
		if n := runs[k].Load(); n != 1 {
			t.Fatalf("item %d ran %d times", k, n)
		}
	}
	if n := over.Load(); n > 0 {
		t.Errorf("%d times a scheduler ran more items than its limit", n)
	}
	for i, n := range nodes {
		if problem := n.s.Books(); problem != "" || !slotsReturn(n.s) {
			t.Errorf("node %d after the hammer: %s, %s", i, n.s.Counts(), problem)
		}
		if st := n.s.Stats(); st.Pending != 0 || st.Running != 0 {
			t.Errorf("node %d after the hammer: %+v", i, st)
		}
	}
}

// slotsReturn reports whether every slot of s is given back within a few
// seconds. Wait returns once nothing runs; a worker started for an item that
// another took may still be on its way out.
func slotsReturn(s *scheduler.Scheduler) bool {
	deadline := time.Now().Add(5 * time.Second)
	for s.Active() != 0 {
		if time.Now().After(deadline) {
			return false
		}
		runtime.Gosched()
	}
	return true
}
