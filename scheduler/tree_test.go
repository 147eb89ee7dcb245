package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// TestChildrenRunOnTargetSlots: children with limits of their own on a
// target with a smaller limit. Each child's limit holds, the target's bounds
// them all, and the only goroutines are the target's workers.
func TestChildrenRunOnTargetSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(3)
		var rootG testkit.Gauge
		kids := make([]*scheduler.Scheduler, 4)
		gauges := make([]testkit.Gauge, 4)
		release := make(chan struct{})
		for k := range kids {
			kids[k] = scheduler.New(2, scheduler.WithTarget(root))
		}
		ran := make([]atomic.Int32, 4)
		for range 10 {
			for k, c := range kids {
				c.Enqueue(scheduler.Func(func() {
					rootG.Enter("item")
					gauges[k].Enter("item")
					<-release
					gauges[k].Leave()
					rootG.Leave()
					ran[k].Add(1)
				}))
			}
		}
		synctest.Wait()
		if got := root.Active(); got != 3 {
			t.Errorf("%d workers of the target run the tree's items; want 3, its limit (the children start none)", got)
		}
		close(release)
		for _, c := range kids {
			mustWait(t, c)
		}
		mustWait(t, root)
		if p := rootG.Peak(); p != 3 {
			t.Errorf("at most %d items ran at once on a target of limit 3; want 3", p)
		}
		for k := range kids {
			if p := gauges[k].Peak(); p > 2 {
				t.Errorf("child %d ran %d items at once; its limit is 2", k, p)
			}
			if n := ran[k].Load(); n != 10 {
				t.Errorf("child %d ran %d items; want 10", k, n)
			}
		}
		synctest.Wait()
		if got := root.Active(); got != 0 {
			t.Errorf("%d workers left once the tree is idle; want 0", got)
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
	for _, c := range []struct {
		quantum int
		opts    []scheduler.Option
	}{
		{1, []scheduler.Option{scheduler.WithQuantum(1)}},
		{4, []scheduler.Option{scheduler.WithQuantum(4)}},
		{16, nil}, // the default
	} {
		t.Run(fmt.Sprintf("quantum=%d", c.quantum), func(t *testing.T) {
			n := waitBehindFlood(t, c.quantum, c.opts)
			if n > 2*c.quantum {
				t.Errorf("the sibling's item waited for %d items of the flood; want at most two quanta (%d)", n, 2*c.quantum)
			}
		})
	}
}

// waitBehindFlood floods a child of a target of limit 1, made with
// floodOpts, with a hundred quanta of items, then queues one item on a
// sibling made with opts, and returns how many items of the flood ran
// between the two.
func waitBehindFlood(t *testing.T, quantum int, floodOpts []scheduler.Option, opts ...scheduler.Option) int {
	var n int
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(1)
		flood := scheduler.New(4, append(floodOpts, scheduler.WithTarget(root))...)
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
// call TryRun on other members of the tree, panic, call Goexit or read the
// books of every scheduler as they run. Every item runs exactly once,
// no scheduler ever runs more on its slots than its limit, counting its
// subtree's items and the functions TryRun runs on new slots, the books
// stay right, and once the tree is idle no slot is held and no goroutine
// is left. Each round runs in a synctest bubble, which sees that at once.
func TestTreeHammer(t *testing.T) {
	rounds, items := 40, 2000
	if testing.Short() || testkit.RaceEnabled {
		rounds, items = 10, 500
	}
	for round := range rounds {
		synctest.Test(t, func(t *testing.T) {
			hammerTree(t, rand.New(rand.NewPCG(uint64(round), 99)), items)
		})
	}
}

type treeNode struct {
	s  *scheduler.Scheduler
	up *treeNode
	g  testkit.Gauge // what runs on the node's slots, against its limit
}

// path returns the nodes from n up to, and without, the first that holder
// is or is below, or to the root if holder is nil: those of which TryRun on
// n, for work of an item of holder, takes new slots.
func (n *treeNode) path(holder *treeNode) []*treeNode {
	var p []*treeNode
	for a := n; a != nil; a = a.up {
		for h := holder; h != nil; h = h.up {
			if h == a {
				return p
			}
		}
		p = append(p, a)
	}
	return p
}

func enter(nodes []*treeNode) {
	for _, a := range nodes {
		a.g.Enter("item")
	}
}

func leave(nodes []*treeNode) {
	for _, a := range nodes {
		a.g.Leave()
	}
}

func hammerTree(t *testing.T, r *rand.Rand, perSubmitter int) {
	silent := scheduler.WithPanicHandler(func(*scheduler.PanicError) {})
	rootLimit := 1 + r.IntN(3)
	nodes := []*treeNode{{s: scheduler.New(rootLimit, silent), g: testkit.Gauge{Name: "node 0", Limit: int64(rootLimit)}}}
	for range 4 {
		up := nodes[r.IntN(len(nodes))]
		limit := 1 + r.IntN(3)
		s := scheduler.New(limit, scheduler.WithTarget(up.s), silent,
			scheduler.WithPriority(r.IntN(3)-1), scheduler.WithQuantum(1+r.IntN(8)))
		nodes = append(nodes, &treeNode{s: s, up: up, g: testkit.Gauge{Name: fmt.Sprint("node ", len(nodes)), Limit: int64(limit)}})
	}
	var books atomic.Pointer[string] // the first problem an item saw
	const submitters = 6
	runs := make([]atomic.Int32, submitters*perSubmitter)
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
					mine := n.path(nil)
					enter(mine)
					defer leave(mine)
					runs[k].Add(1)
					switch mode {
					case 0:
						other.s.TryRun(sl, func(scheduler.Slot) {
							taken := other.path(n) // none if it runs in the item's place
							enter(taken)
							defer leave(taken)
							runtime.Gosched()
						})
					case 1:
						panic("hammer")
					case 2:
						defer runtime.Goexit()
					case 4:
						for _, a := range nodes {
							if problem := a.s.Books(); problem != "" {
								books.CompareAndSwap(nil, &problem)
							}
						}
					}
				}))
				if mode == 3 {
					n.s.TryRun(scheduler.Slot{}, func(scheduler.Slot) {
						mine := n.path(nil)
						enter(mine)
						leave(mine)
					})
				}
			}
		})
	}
	wg.Wait()
	if err := nodes[0].s.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	synctest.Wait() // a worker started for an item that another took may be on its way out
	if p := books.Load(); p != nil {
		t.Errorf("during the hammer: %s", *p)
	}
	for k := range runs {
		if n := runs[k].Load(); n != 1 {
			t.Fatalf("item %d ran %d times", k, n)
		}
	}
	for i, n := range nodes {
		if over := n.g.Over(); over != "" {
			t.Error(over)
		}
		if problem := n.s.Books(); problem != "" || n.s.Active() != 0 {
			t.Errorf("node %d after the hammer: %s, %s", i, n.s.Counts(), problem)
		}
		if st := n.s.Stats(); st.Pending != 0 || st.Running != 0 {
			t.Errorf("node %d after the hammer: %+v", i, st)
		}
	}
}

// TestWithdrawnTurn: a child's turn that no item needs any more (its items
// were removed while the target was busy) is taken back out of the target's
// list: the subtree is idle at once, and a Wait for it, from an item of the
// target that holds its one slot, returns. The turn used to stay queued,
// keeping the target busy until it ran, which the waiting item stopped.
func TestWithdrawnTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := scheduler.New(1)
		mid := scheduler.New(1, scheduler.WithTarget(root))
		leaf := scheduler.New(1, scheduler.WithTarget(mid))
		var err error
		root.Enqueue(scheduler.Func(func() {
			id, _ := leaf.Enqueue(scheduler.Func(func() { t.Error("the removed item ran") }))
			leaf.TryDequeue(id)
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			err = mid.Wait(ctx)
		}))
		mustWait(t, root)
		if err != nil {
			t.Errorf("Wait for a subtree whose only item was removed = %v; want nil at once", err)
		}
		for _, s := range []*scheduler.Scheduler{root, mid, leaf} {
			if problem := s.Books(); problem != "" {
				t.Error(problem)
			}
		}
	})
}

// TestSuspendedChildHoldsItsTargets: a suspended child with items queued
// requests no turn, but its targets still count them as work of their
// subtree: their Wait waits, and their idle function does not run, until
// the items have run. The targets used to look idle.
func TestSuspendedChildHoldsItsTargets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var idles atomic.Int32
		root := scheduler.New(2, scheduler.WithIdleFunc(func() { idles.Add(1) }))
		mid := scheduler.New(1, scheduler.WithTarget(root))
		leaf := scheduler.New(1, scheduler.WithTarget(mid))
		leaf.Suspend()
		var ran atomic.Bool
		leaf.Enqueue(scheduler.Func(func() { ran.Store(true) }))
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		if err := root.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Wait for a subtree with a suspended child's item = %v; want it to last until its context ends", err)
		}
		if n := idles.Load(); n != 0 {
			t.Errorf("the target's idle function ran %d times while the child's item waited", n)
		}
		leaf.Resume()
		mustWait(t, root)
		if !ran.Load() || idles.Load() != 1 {
			t.Errorf("after Resume: item ran %v, idle function ran %d times; want true, 1", ran.Load(), idles.Load())
		}
	})
}
