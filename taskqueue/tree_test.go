package taskqueue_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

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

// TestCloseTargetClosesChildren: closing a target closes its subtree to new
// tasks; Shutdown of the target waits for the tasks its children accepted,
// delayed ones included.
func TestCloseTargetClosesChildren(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		root := taskqueue.NewConcurrent(2)
		child := taskqueue.NewSerial(taskqueue.WithTarget(root))
		var ran atomic.Int32
		child.RunAfter(ctx, time.Hour, func(context.Context) error { ran.Add(1); return nil })
		child.Go(func() { ran.Add(1) })
		closed := make(chan error)
		go func() { closed <- root.Close() }()
		synctest.Wait()
		if err := child.Go(func() {}); err != taskqueue.ErrClosed {
			t.Errorf("Go on a child of a closed target = %v; want ErrClosed", err)
		}
		if h := child.RunAfter(ctx, time.Second, func(context.Context) error { return nil }); h.Err() != taskqueue.ErrClosed {
			t.Errorf("RunAfter on a child of a closed target: %v; want ErrClosed", h.Err())
		}
		select {
		case <-closed:
			t.Fatal("Close of the target returned before the child's delayed task ran")
		default:
		}
		time.Sleep(time.Hour)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		if got := ran.Load(); got != 2 {
			t.Errorf("%d of the child's accepted tasks ran; want 2", got)
		}
	})
}

// TestSuspendAndSetLimit: a suspended queue accepts tasks and starts none
// until Resume; SetLimit raises and lowers a concurrent queue's limit.
func TestSuspendAndSetLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q := taskqueue.NewConcurrent(1)
		q.Suspend()
		var ran atomic.Int32
		h := q.RunAsync(ctx, func(context.Context) error { ran.Add(1); return nil })
		synctest.Wait()
		if ran.Load() != 0 || h.IsDone() {
			t.Fatal("a suspended queue ran a task")
		}
		if st := q.Stats(); st.Queued != 1 {
			t.Errorf("Queued = %d on a suspended queue; want 1", st.Queued)
		}
		q.Resume()
		if err := h.Wait(ctx); err != nil || ran.Load() != 1 {
			t.Fatalf("after Resume: %v, ran %d", err, ran.Load())
		}

		var now, peak atomic.Int32
		gate := make(chan struct{})
		for range 8 {
			q.Go(func() {
				n := now.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				<-gate
				now.Add(-1)
			})
		}
		synctest.Wait()
		q.SetLimit(3)
		synctest.Wait()
		if n := now.Load(); n != 3 {
			t.Errorf("%d tasks running after SetLimit(3); want 3", n)
		}
		if q.Stats().Limit != 3 {
			t.Errorf("Stats().Limit = %d; want 3", q.Stats().Limit)
		}
		close(gate)
		q.Close()
		if p := peak.Load(); p != 3 {
			t.Errorf("at most %d ran at once; want 3", p)
		}
		msg := fmt.Sprint(panicValue(func() { taskqueue.NewSerial().SetLimit(2) }))
		if msg != "taskqueue: SetLimit(2) on a serial queue" {
			t.Errorf("SetLimit on a serial queue panicked with %q", msg)
		}
	})
}

// TestTreeHammer hammers a tree of queues, children and grandchildren of
// each kind, from many goroutines, with tasks that call RunSync on other
// queues of the tree, cancel each other and panic: every task runs exactly
// once or reports why not, the counts balance, and the tree ends idle.
func TestTreeHammer(t *testing.T) {
	total := 200_000
	if testing.Short() {
		total = 20_000
	}
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
