package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestMaxQueuedFailWhenFull: made WithFailWhenFull, a full bounded queue
// refuses every submission at once with ErrQueueFull, delayed tasks taking
// room too and a running task none, until room is made.
func TestMaxQueuedFailWhenFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial(taskqueue.WithMaxQueued(2), taskqueue.WithFailWhenFull())
		release := block(t, q) // running: takes no room
		q.RunAsync(t.Context(), nop)
		q.RunAfter(t.Context(), time.Hour, nop) // delayed tasks take room too
		var ran atomic.Bool
		checkRefused(t, q, taskqueue.ErrQueueFull, func(context.Context) error { ran.Store(true); return nil })
		release()
		synctest.Wait()
		if err := q.Go(func() {}); err != nil {
			t.Errorf("Go once room was made = %v; want nil", err)
		}
		q.Close()
		if ran.Load() {
			t.Error("a refused task ran")
		}
	})
}

// TestMaxQueuedWaitWhenFull: on a full bounded queue, a submission with a
// context waits for room until its context is done (RunAsync and RunSync),
// Go fails at once, room made by a starting task goes to a waiting
// submitter, Close wakes those still waiting, and Stats counts each refusal.
func TestMaxQueuedWaitWhenFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial(taskqueue.WithMaxQueued(1))
		release := block(t, q)
		q.RunAsync(t.Context(), nop)

		// A submission with a context waits for room until the context ends.
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := q.RunAsync(ctx, nop).Err(); err != context.DeadlineExceeded || time.Since(start) != time.Second {
			t.Errorf("RunAsync on a full queue: Err() = %v after %v; want DeadlineExceeded after 1s", err, time.Since(start))
		}
		ctx, cancel = context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := q.RunSync(ctx, nop); err != context.DeadlineExceeded || time.Since(start) != 2*time.Second {
			t.Errorf("RunSync on a full queue = %v after %v; want DeadlineExceeded after another second", err, time.Since(start)-time.Second)
		}
		if err := q.Go(func() {}); err != taskqueue.ErrQueueFull {
			t.Errorf("Go = %v; want ErrQueueFull: Go never waits", err)
		}

		// Room made by a starting task goes to the waiting submitter.
		result := make(chan *taskqueue.Handle)
		go func() { result <- q.RunAsync(t.Context(), nop) }()
		synctest.Wait()
		release()
		if err := (<-result).Wait(t.Context()); err != nil {
			t.Errorf("RunAsync that waited for room: Wait = %v; want nil", err)
		}

		// Close wakes the submitters still waiting.
		release = block(t, q)
		q.RunAsync(t.Context(), nop)
		go func() { result <- q.RunAsync(t.Context(), nop) }()
		synctest.Wait()
		closed := make(chan error)
		go func() { closed <- q.Close() }()
		synctest.Wait()
		if err := (<-result).Err(); err != taskqueue.ErrClosed {
			t.Errorf("RunAsync waiting at Close: Err() = %v; want ErrClosed", err)
		}
		release()
		if err := <-closed; err != nil {
			t.Errorf("Close = %v", err)
		}
		if s := q.Stats(); s.Rejected != 4 {
			t.Errorf("Stats().Rejected = %d; want 4 (two contexts ended, one Go, one Close)", s.Rejected)
		}
	})
}

// TestMaxQueuedOwnTaskNeverWaits: a task that submits to a full queue it
// could be waiting for itself gets ErrQueueFull instead of waiting for room
// it would have to make itself: a task of the queue itself, and a task that
// holds the one slot of the serial target the queue's tasks need. RunSync
// from the queue's own task runs in its place and needs no room.
func TestMaxQueuedOwnTaskNeverWaits(t *testing.T) {
	t.Run("own queue", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := taskqueue.NewSerial(taskqueue.WithMaxQueued(1))
			h := q.RunAsync(t.Context(), func(ctx context.Context) error {
				q.RunAsync(ctx, nop) // fills the queue
				if err := q.RunAsync(ctx, nop).Err(); err != taskqueue.ErrQueueFull {
					t.Errorf("RunAsync from the queue's own task: Err() = %v; want ErrQueueFull", err)
				}
				if err := q.RunAfter(ctx, time.Second, nop).Err(); err != taskqueue.ErrQueueFull {
					t.Errorf("RunAfter from the queue's own task: Err() = %v; want ErrQueueFull", err)
				}
				if err := q.RunSync(ctx, nop); err != nil {
					t.Errorf("RunSync in place on the full queue = %v; want nil", err)
				}
				return nil
			})
			if err := h.Wait(t.Context()); err != nil {
				t.Fatal(err)
			}
			q.Close()
		})
	})
	t.Run("serial target's task", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			target := taskqueue.NewSerial()
			child := taskqueue.NewSerial(taskqueue.WithTarget(target), taskqueue.WithMaxQueued(1))
			err := target.RunSync(t.Context(), func(ctx context.Context) error {
				child.Go(func() {}) // fills the child: it cannot start while the target's slot is held
				return child.RunAsync(ctx, nop).Wait(context.Background())
			})
			if !errors.Is(err, taskqueue.ErrQueueFull) {
				t.Errorf("RunAsync on a full child from a task of its serial target: %v; want ErrQueueFull", err)
			}
			target.Close()
		})
	})
}

// TestRunSyncAcrossTheTree: a task of a child calls RunSync on its target,
// on an idle sibling and on its own queue; each runs in the task's place,
// even with every slot of the target taken.
func TestRunSyncAcrossTheTree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		root := taskqueue.NewConcurrent(2)
		a := taskqueue.NewSerial(taskqueue.WithTarget(root))
		b := taskqueue.NewSerial(taskqueue.WithTarget(root))
		gate := make(chan struct{})
		root.Go(func() { <-gate }) // one of the two slots, taken
		var got []string
		err := a.RunAsync(ctx, func(ctx context.Context) error {
			return root.RunSync(ctx, func(ctx context.Context) error {
				got = append(got, "target")
				return b.RunSync(ctx, func(ctx context.Context) error {
					got = append(got, "sibling")
					return a.RunSync(ctx, func(context.Context) error {
						got = append(got, "own")
						return nil
					})
				})
			})
		}).Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != "[target sibling own]" {
			t.Errorf("ran %v; want [target sibling own]", got)
		}
		close(gate)
		root.Close()
	})
}

// A gaugedTree is a target of limit 2 with two serial children, a concurrent child
// of limit 2 and a serial grandchild under the first serial child, each with
// a gauge that counts what executes on it and, for the target, on the whole
// tree.
type gaugedTree struct {
	t, a, b, c, g           *taskqueue.Queue
	gt, ga, gb, gc, gg      *testkit.Gauge
	onT, onA, onB, onC, onG testkit.Gauges
}

func newGaugedTree() *gaugedTree {
	tr := &gaugedTree{}
	tr.t = taskqueue.NewConcurrent(2)
	tr.a = taskqueue.NewSerial(taskqueue.WithTarget(tr.t))
	tr.b = taskqueue.NewSerial(taskqueue.WithTarget(tr.t))
	tr.c = taskqueue.NewConcurrent(2, taskqueue.WithTarget(tr.t))
	tr.g = taskqueue.NewSerial(taskqueue.WithTarget(tr.a))
	tr.gt, tr.ga, tr.gb = newGauge("target", 2), newGauge("serial child A (and its child)", 1), newGauge("serial child B", 1)
	tr.gc, tr.gg = newGauge("concurrent child C", 2), newGauge("grandchild G", 1)
	tr.onT = testkit.Gauges{tr.gt}
	tr.onA = testkit.Gauges{tr.ga, tr.gt}
	tr.onB = testkit.Gauges{tr.gb, tr.gt}
	tr.onC = testkit.Gauges{tr.gc, tr.gt}
	tr.onG = testkit.Gauges{tr.gg, tr.ga, tr.gt}
	return tr
}

func (tr *gaugedTree) check(t *testing.T) {
	t.Helper()
	checkGauges(t, tr.gt, tr.ga, tr.gb, tr.gc, tr.gg)
}

// TestTreeHelpersWaitAndRunInPlace: a task of a serial child starts two
// helpers that, with its context and at the same time, each do one of: wait
// for tasks of a sibling or of the target (Handle.Wait, Group.Wait), run
// RunSync on the target or on its own child in its place, or Map on a
// concurrent sibling, while the siblings are busy. Docs: WithTarget,
// "target's limit bounds the child, its siblings and target's own tasks
// together", and a task that waits keeps its slots; RunSync "a task of a
// child runs RunSync on its target, or on an idle sibling, in its own
// place". A broken tree runs a sibling's task on the waiting task's slot
// beside one of its in-place functions (the target's count goes over 2), or
// runs an in-place function beside its queue's other task; one whose waits
// deadlock fails the deadline.
func TestTreeHelpersWaitAndRunInPlace(t *testing.T) {
	type job struct {
		name string
		on   func(tr *gaugedTree) (*taskqueue.Queue, testkit.Gauges)
		kind string
	}
	jobs := []job{
		{"RunSync on target", func(tr *gaugedTree) (*taskqueue.Queue, testkit.Gauges) { return tr.t, tr.onT }, "s"},
		{"RunSync on grandchild", func(tr *gaugedTree) (*taskqueue.Queue, testkit.Gauges) { return tr.g, tr.onG }, "s"},
		{"Wait on sibling B", func(tr *gaugedTree) (*taskqueue.Queue, testkit.Gauges) { return tr.b, tr.onB }, "w"},
		{"Group.Wait on sibling C", func(tr *gaugedTree) (*taskqueue.Queue, testkit.Gauges) { return tr.c, tr.onC }, "g"},
		{"Map on sibling C", func(tr *gaugedTree) (*taskqueue.Queue, testkit.Gauges) { return tr.c, tr.onC }, "m"},
		{"Wait on target", func(tr *gaugedTree) (*taskqueue.Queue, testkit.Gauges) { return tr.t, tr.onT }, "w"},
	}
	// every pair of jobs, run by two helpers of one task at once
	for i := range jobs {
		for j := i; j < len(jobs); j++ {
			j1, j2 := jobs[i], jobs[j]
			t.Run(fmt.Sprintf("%s+%s", j1.name, j2.name), func(t *testing.T) {
				for iter := 0; iter < 8 && !t.Failed(); iter++ {
					tr := newGaugedTree()
					ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
					var hs []*taskqueue.Handle
					// busy work on the siblings, so that slots are scarce
					for k := 0; k < 3; k++ {
						hs = append(hs, tr.b.RunAsync(ctx, func(context.Context) error {
							tr.onB.Enter("B task")
							runtime.Gosched()
							tr.onB.Leave()
							return nil
						}))
						hs = append(hs, tr.c.RunAsync(ctx, func(context.Context) error {
							tr.onC.Enter("C task")
							runtime.Gosched()
							tr.onC.Leave()
							return nil
						}))
					}
					for k := 0; k < 3; k++ {
						hs = append(hs, tr.a.RunAsync(ctx, func(tctx context.Context) error {
							tr.onA.Enter("A task")
							runtime.Gosched()
							tr.onA.Leave()
							var wg sync.WaitGroup
							for _, jb := range []job{j1, j2} {
								wg.Add(1)
								go func() {
									defer wg.Done()
									q, gs := jb.on(tr)
									runHelpers(t, tctx, q, gs, jb.kind)
								}()
							}
							wg.Wait()
							return nil
						}))
					}
					for _, h := range hs {
						if err := h.Wait(ctx); err != nil {
							t.Errorf("task: %v", err)
						}
					}
					cancel()
					tr.check(t)
				}
			})
		}
	}
}

// TestTreeInPlaceCallsTakeTurns: helpers on a tree that runs one function
// at a time: a target of limit 1
// with serial children A and B. Tasks of A and B start helpers that call
// RunSync with the task's context on the target and on their own queue, and
// wait for them once their own part is done, as the docs ask
// of work done in a task's place ("goroutines it starts and waits for").
// Docs: "a task of a child runs RunSync on its target, or on an idle
// sibling, in its own place"; the target's limit bounds the whole tree. A
// broken tree runs a helper's function beside whatever else holds the slot,
// or two helpers' functions at once.
func TestTreeInPlaceCallsTakeTurns(t *testing.T) {
	for iter := 0; iter < 100 && !t.Failed(); iter++ {
		root := taskqueue.NewConcurrent(1)
		a := taskqueue.NewSerial(taskqueue.WithTarget(root))
		b := taskqueue.NewSerial(taskqueue.WithTarget(root))
		qs := []*taskqueue.Queue{root, a, b}
		own := newOwners()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var hs []*taskqueue.Handle
		for i := 1; i <= 12; i++ {
			id := i
			q := qs[1+i%2]
			hs = append(hs, q.RunAsync(ctx, func(tctx context.Context) error {
				own.enter(false, id)
				var helpers sync.WaitGroup
				for k := 0; k < treeHelpers; k++ {
					// The target or the task's own queue: a helper waited for that
					// waited for a serial sibling whose task waits for a helper of
					// its own on this queue would deadlock, as two mutexes taken in
					// opposite orders do (see RunSync).
					on := []*taskqueue.Queue{root, q}[k%2]
					helpers.Add(1)
					go func() {
						defer helpers.Done()
						err := on.RunSync(tctx, func(context.Context) error {
							own.enter(true, id)
							runtime.Gosched()
							own.leave(true, id)
							return nil
						})
						if errors.Is(err, context.DeadlineExceeded) {
							t.Errorf("task %d: helper RunSync hung", id)
						}
					}()
				}
				runtime.Gosched()
				own.leave(false, id)
				helpers.Wait()
				return nil
			}))
		}
		for _, h := range hs {
			if err := h.Wait(ctx); err != nil {
				t.Errorf("task: %v", err)
			}
		}
		cancel()
		own.check(t)
	}
}

// How many helpers each task of TestTreeInPlaceCallsTakeTurns starts.
const treeHelpers = 3

// TestTreeRunSyncOnASiblingKeepsTheSlot: a task of serial child B calls
// RunSync on its idle sibling A with its context, from the task itself, and
// then goes on running. Docs: "a task of a child runs RunSync on its target,
// or on an idle sibling, in its own place", and "target's limit bounds the
// child, its siblings and target's own tasks together". So while B's task
// runs, no task of A may start on a target of limit 1. A broken tree gives
// the target's slot back when the in-place function ends, though B's task
// still holds it: A's next task then runs beside B's task. (With A busy
// before B's RunSync, B's task would wait for A holding the target's one
// slot, until its context ends: see TestWaitsHoldTheirSlots.)
func TestTreeRunSyncOnASiblingKeepsTheSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := taskqueue.NewConcurrent(1)
		a := taskqueue.NewSerial(taskqueue.WithTarget(root))
		b := taskqueue.NewSerial(taskqueue.WithTarget(root))
		g := newGauge("target of limit 1", 1)
		release, inB := make(chan struct{}), make(chan struct{})
		hb := b.RunAsync(t.Context(), func(ctx context.Context) error {
			if err := a.RunSync(ctx, func(context.Context) error {
				g.Enter("in place on A")
				g.Leave()
				return nil
			}); err != nil {
				return err
			}
			g.Enter("B's task")
			close(inB)
			<-release
			g.Leave()
			return nil
		})
		<-inB
		ha := a.RunAsync(t.Context(), func(context.Context) error {
			g.Enter("A's task")
			g.Leave()
			return nil
		})
		synctest.Wait()
		if ha.IsDone() {
			t.Error("A's task ran while B's task held the target's one slot")
		}
		close(release)
		if err := hb.Wait(t.Context()); err != nil {
			t.Errorf("B's task: %v", err)
		}
		if err := ha.Wait(t.Context()); err != nil {
			t.Errorf("A's task: %v", err)
		}
		checkGauges(t, g)
		root.Close()
	})
}

// TestTreeRunSyncOnAnIdleSibling: "A task of a child runs RunSync on its
// target, or on an idle sibling, in its own place, on its slot of the
// target, taking turns with the task's other functions run in its place."
// Target T has two slots; A and B are serial children. A's task has three
// helpers that call B.RunSync with its context, and each in-place function
// submits a task of B. The functions that run on B (in place or as B's
// tasks) never overlap (B is serial), those in A's task's place never
// overlap, and T never runs more than two. A broken implementation lets B's
// queued task start on T's free slot beside an in-place function that holds
// B's slot, or runs two in-place functions of A's task at once.
func TestTreeRunSyncOnAnIdleSibling(t *testing.T) {
	for round := 0; round < 30; round++ {
		synctest.Test(t, func(t *testing.T) {
			T := taskqueue.NewConcurrent(2)
			A := taskqueue.NewSerial(taskqueue.WithTarget(T))
			B := taskqueue.NewSerial(taskqueue.WithTarget(T))
			tg := newGauge("target of two slots", 2)
			bg := newGauge("serial sibling B", 1)
			pg := newGauge("functions in the place of A's task", 1)
			var bTasks sync.WaitGroup
			var bRan atomic.Int32
			err := A.RunSync(context.Background(), func(ctx context.Context) error {
				var wg sync.WaitGroup
				for h := 0; h < 3; h++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for j := 0; j < 4; j++ {
							err := B.RunSync(ctx, func(context.Context) error {
								gs := testkit.Gauges{tg, bg, pg}
								gs.Enter("B.RunSync from A's task")
								bTasks.Add(1)
								B.Go(func() {
									gs := testkit.Gauges{tg, bg}
									gs.Enter("B's task")
									bRan.Add(1)
									time.Sleep(time.Millisecond) // fake time: every other goroutine runs meanwhile
									gs.Leave()
									bTasks.Done()
								})
								time.Sleep(time.Millisecond) // fake time: every other goroutine runs meanwhile
								gs.Leave()
								return nil
							})
							if err != nil {
								t.Errorf("B.RunSync: %v", err)
							}
						}
					}()
				}
				wg.Wait()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			bTasks.Wait()
			if err := T.Close(); err != nil {
				t.Fatal(err)
			}
			if bRan.Load() != 12 {
				t.Errorf("B ran %d tasks, want 12", bRan.Load())
			}
			checkGauges(t, tg, bg, pg)
		})
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
}

// TestTreeHammer hammers a tree of queues, children and grandchildren of
// each kind, from many goroutines, with tasks that call RunSync on other
// queues of the tree, cancel each other and panic: every task runs exactly
// once or reports why not, the counts balance, and the tree ends idle.
func TestTreeHammer(t *testing.T) {
	total := hammerSize(20_000, 200_000)
	ctx := context.Background()
	silent := taskqueue.WithPanicHandler(func(*taskqueue.PanicError) {})
	root := taskqueue.NewConcurrent(3, silent)
	mid := taskqueue.NewConcurrent(2, taskqueue.WithTarget(root), silent, taskqueue.WithQuantum(3))
	queues := []*taskqueue.Queue{
		root,
		mid,
		taskqueue.NewSerial(taskqueue.WithTarget(root), silent, taskqueue.WithPriority(1)),
		taskqueue.NewSerial(taskqueue.WithTarget(mid), silent, taskqueue.WithQuantum(1)),
		taskqueue.NewConcurrent(4, taskqueue.WithTarget(mid), silent, taskqueue.WithPriority(-1)),
	}
	// related lists, for each queue, itself and the queues above it.
	related := [][]int{{0}, {1, 0}, {2, 0}, {3, 1, 0}, {4, 1, 0}}
	const submitters = 8
	runs := make([]atomic.Int32, total)
	var wg sync.WaitGroup
	var bad atomic.Int64
	for sub := range submitters {
		wg.Go(func() {
			for i := sub; i < total; i += submitters {
				q := queues[i%len(queues)]
				// A task calls RunSync only on its own queue and the queues
				// above it, in whose place it runs: a task that waited for
				// its subtree would hold a slot that the subtree needs, and
				// with every slot so held, the waits would last until their
				// contexts ended (see TestWaitsHoldTheirSlots).
				reach := related[i%len(queues)]
				other := queues[reach[(i/7)%len(reach)]]
				task := func(ctx context.Context) error {
					runs[i].Add(1)
					switch i % 11 {
					case 0:
						return other.RunSync(ctx, func(context.Context) error { runtime.Gosched(); return nil })
					case 1:
						panic("hammer")
					}
					return nil
				}
				switch i % 3 {
				case 0:
					q.RunSync(ctx, func(ctx context.Context) error {
						defer func() { recover() }()
						return task(ctx)
					})
				case 1:
					h := q.RunAsync(ctx, task)
					if i%5 == 0 && h.Cancel() {
						runs[i].Add(1) // canceled: counts as its one outcome
					}
				default:
					// A task of Go receives no context: its work waits for
					// nothing, which could be its own slot.
					q.Go(func() {
						runs[i].Add(1)
						if i%11 == 1 {
							panic("hammer")
						}
					})
				}
			}
		})
	}
	wg.Wait()
	if err := root.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range runs {
		if n := runs[i].Load(); n != 1 {
			bad.Add(1)
			if bad.Load() < 5 {
				t.Errorf("task %d ran or was canceled %d times; want once", i, n)
			}
		}
	}
	for i, q := range queues {
		if st := q.Stats(); st.Queued != 0 || st.Running != 0 || st.Delayed != 0 {
			t.Errorf("queue %d after the hammer: %+v", i, st)
		}
	}
}

// TestOptionsMisuse: an option given a value it cannot take panics when it
// is made, naming it and the value; so do options that contradict each
// other when the queue is made.
func TestOptionsMisuse(t *testing.T) {
	q, other := taskqueue.NewConcurrent(2), taskqueue.NewConcurrent(1)
	checkMisuses(t, []misuse{
		{"WithMaxQueued(0)", func() { taskqueue.WithMaxQueued(0) }, "taskqueue: WithMaxQueued(0): bound must be positive"},
		{"WithFailWhenFull alone", func() { taskqueue.NewSerial(taskqueue.WithFailWhenFull()) }, "taskqueue: WithFailWhenFull without WithMaxQueued: an unbounded queue is never full"},
		{"WithPanicHandler(nil)", func() { taskqueue.WithPanicHandler(nil) }, "taskqueue: WithPanicHandler(nil)"},
		{"WithObserver(nil)", func() { taskqueue.WithObserver(nil) }, "taskqueue: WithObserver(nil)"},
		{"WithQuantum(0)", func() { taskqueue.WithQuantum(0) }, "taskqueue: WithQuantum(0): quantum must be positive"},
		{"WithTarget(nil)", func() { taskqueue.NewSerial(taskqueue.WithTarget(nil)) }, "taskqueue: WithTarget(nil)"},
		{"WithTarget twice", func() { taskqueue.NewSerial(taskqueue.WithTarget(q), taskqueue.WithTarget(other)) },
			"taskqueue: WithTarget given more than once: a queue has one target"},
	})
}

// TestPriorityOrdersChildrenNotTheTargetsOwnTasks: priorities order a
// target's children among themselves; the target's own tasks keep their
// places in its list, in submission order with the children's turns. On a
// busy serial target, two own tasks, then tasks of a child of priority 0,
// then of a child of priority 1, then a third own task: the own tasks
// queued first start first, whatever the children's priorities; the turn
// the low child asked for goes to the high one, which asked later; the
// third own task comes last.
func TestPriorityOrdersChildrenNotTheTargetsOwnTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := taskqueue.NewSerial()
		low := taskqueue.NewSerial(taskqueue.WithTarget(root))
		high := taskqueue.NewSerial(taskqueue.WithTarget(root), taskqueue.WithPriority(1))
		var log testkit.Log
		release := block(t, root)
		root.Go(func() { log.Add("own 1") })
		root.Go(func() { log.Add("own 2") })
		for i := range 3 {
			low.Go(func() { log.Add(fmt.Sprint("low ", i)) })
		}
		for i := range 3 {
			high.Go(func() { log.Add(fmt.Sprint("high ", i)) })
		}
		root.Go(func() { log.Add("own 3") })
		release()
		root.Close()
		want := []string{"own 1", "own 2", "high 0", "high 1", "high 2", "low 0", "low 1", "low 2", "own 3"}
		if got := log.Take(); !slices.Equal(got, want) {
			t.Errorf("started %q; want %q", got, want)
		}
	})
}
