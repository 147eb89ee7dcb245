package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// o3Tree is a target of limit 2 with two serial children, a concurrent child
// of limit 2 and a serial grandchild under the first serial child, each with
// a gauge that counts what executes on it and, for the target, on the whole
// tree.
type o3Tree struct {
	t, a, b, c, g           *taskqueue.Queue
	gt, ga, gb, gc, gg      *o3Gauge
	onT, onA, onB, onC, onG o3Gauges
}

func newO3Tree() *o3Tree {
	tr := &o3Tree{}
	tr.t = taskqueue.NewConcurrent(2)
	tr.a = taskqueue.NewSerial(taskqueue.WithTarget(tr.t))
	tr.b = taskqueue.NewSerial(taskqueue.WithTarget(tr.t))
	tr.c = taskqueue.NewConcurrent(2, taskqueue.WithTarget(tr.t))
	tr.g = taskqueue.NewSerial(taskqueue.WithTarget(tr.a))
	tr.gt, tr.ga, tr.gb = newO3Gauge("target", 2), newO3Gauge("serial child A (and its child)", 1), newO3Gauge("serial child B", 1)
	tr.gc, tr.gg = newO3Gauge("concurrent child C", 2), newO3Gauge("grandchild G", 1)
	tr.onT = o3Gauges{tr.gt}
	tr.onA = o3Gauges{tr.ga, tr.gt}
	tr.onB = o3Gauges{tr.gb, tr.gt}
	tr.onC = o3Gauges{tr.gc, tr.gt}
	tr.onG = o3Gauges{tr.gg, tr.ga, tr.gt}
	return tr
}

func (tr *o3Tree) check(t *testing.T) {
	t.Helper()
	for _, g := range []*o3Gauge{tr.gt, tr.ga, tr.gb, tr.gc, tr.gg} {
		g.check(t)
	}
}

// A task of a serial child starts helpers that, with its context and at the
// same time, wait for tasks of a sibling (Handle.Wait, Group.Wait: these lend
// the task's slot of the shared target), run RunSync on the target, on a
// sibling and on its own child in its place, and Map on a concurrent sibling.
// Docs: WithTarget, "target's limit bounds the child, its siblings and
// target's own tasks together"; Handle.Wait "lends its slots of their shared
// targets while it waits, so that waiting tasks cannot hold every slot the
// awaited task needs"; RunSync "a task of a child runs RunSync on its target,
// or on an idle sibling, in its own place". A broken tree lets the lent slot
// be used twice (a waited-for sibling task beside an in-place function of
// the lender: the target's count goes over 2), or does not lend (the waits
// deadlock: the deadline reports it).
func TestOutside3TreeHelpersLendAndRunInPlace(t *testing.T) {
	type job struct {
		name string
		on   func(tr *o3Tree) (*taskqueue.Queue, o3Gauges)
		kind string
	}
	jobs := []job{
		{"RunSync on target", func(tr *o3Tree) (*taskqueue.Queue, o3Gauges) { return tr.t, tr.onT }, "s"},
		{"RunSync on grandchild", func(tr *o3Tree) (*taskqueue.Queue, o3Gauges) { return tr.g, tr.onG }, "s"},
		{"Wait on sibling B", func(tr *o3Tree) (*taskqueue.Queue, o3Gauges) { return tr.b, tr.onB }, "w"},
		{"Group.Wait on sibling C", func(tr *o3Tree) (*taskqueue.Queue, o3Gauges) { return tr.c, tr.onC }, "g"},
		{"Map on sibling C", func(tr *o3Tree) (*taskqueue.Queue, o3Gauges) { return tr.c, tr.onC }, "m"},
		{"Wait on target", func(tr *o3Tree) (*taskqueue.Queue, o3Gauges) { return tr.t, tr.onT }, "w"},
	}
	// every pair of jobs, run by two helpers of one task at once
	for i := range jobs {
		for j := i; j < len(jobs); j++ {
			j1, j2 := jobs[i], jobs[j]
			t.Run(fmt.Sprintf("%s+%s", j1.name, j2.name), func(t *testing.T) {
				for iter := 0; iter < 8 && !t.Failed(); iter++ {
					tr := newO3Tree()
					ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
					var hs []*taskqueue.Handle
					// busy work on the siblings, so that slots are scarce
					for k := 0; k < 3; k++ {
						hs = append(hs, tr.b.RunAsync(ctx, func(context.Context) error {
							tr.onB.enter("B task")
							runtime.Gosched()
							tr.onB.leave()
							return nil
						}))
						hs = append(hs, tr.c.RunAsync(ctx, func(context.Context) error {
							tr.onC.enter("C task")
							runtime.Gosched()
							tr.onC.leave()
							return nil
						}))
					}
					for k := 0; k < 3; k++ {
						hs = append(hs, tr.a.RunAsync(ctx, func(tctx context.Context) error {
							tr.onA.enter("A task")
							runtime.Gosched()
							tr.onA.leave()
							var wg sync.WaitGroup
							for _, jb := range []job{j1, j2} {
								wg.Add(1)
								go func() {
									defer wg.Done()
									q, gs := jb.on(tr)
									o3Mixed(t, tctx, q, gs, jb.kind)
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

type o3TreeOne struct{ t, a, b, c *taskqueue.Queue }

// Helpers on a tree that runs one function at a time: a target of limit 1
// with serial children A and B. Tasks of A and B start helpers that call
// RunSync with the task's context on the target and on their own queue, and
// wait for them once their own part is done, as the docs ask
// of work done in a task's place ("goroutines it starts and waits for").
// Docs: "a task of a child runs RunSync on its target, or on an idle
// sibling, in its own place"; the target's limit bounds the whole tree. A
// broken tree runs a helper's function beside whatever else holds the slot,
// or two helpers' functions at once.
func TestOutside3TreeHelpersRaceTaskReturn(t *testing.T) {
	for iter := 0; iter < 100 && !t.Failed(); iter++ {
		root := taskqueue.NewConcurrent(1)
		a := taskqueue.NewSerial(taskqueue.WithTarget(root))
		b := taskqueue.NewSerial(taskqueue.WithTarget(root))
		qs := []*taskqueue.Queue{root, a, b}
		own := newO3Owners()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var hs []*taskqueue.Handle
		for i := 1; i <= 12; i++ {
			id := i
			q := qs[1+i%2]
			hs = append(hs, q.RunAsync(ctx, func(tctx context.Context) error {
				own.enter(false, id)
				var helpers sync.WaitGroup
				for k := 0; k < o3Helpers; k++ {
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

// How many helpers each task of TestOutside3TreeHelpersRaceTaskReturn starts.
const o3Helpers = 3

// Found by TestOutside3TreeHelpersRaceTaskReturn, without helpers: a task of
// serial child B calls RunSync on its idle sibling A with its context, from
// the task itself, and then goes on running. Docs: "a task of a child runs
// RunSync on its target, or on an idle sibling, in its own place", and
// "target's limit bounds the child, its siblings and target's own tasks
// together". So while B's task runs, no task of A may start on a target of
// limit 1. A broken tree gives the target's slot back when the in-place
// function ends, though B's task still holds it: A's next task then runs
// beside B's task.
func TestOutside3TreeRunSyncOnSiblingKeepsSlot(t *testing.T) {
	// (With A's task queued before B's RunSync, A is busy: B's task waits
	// for A holding the target's one slot, until its context ends; see
	// TestWaitsHoldTheirSlots.)
	for _, when := range []string{"A task queued before"} {
		t.Run(when, func(t *testing.T) {
			root := taskqueue.NewConcurrent(1)
			a := taskqueue.NewSerial(taskqueue.WithTarget(root))
			b := taskqueue.NewSerial(taskqueue.WithTarget(root))
			g := newO3Gauge("target of limit 1", 1)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			release, inB := make(chan struct{}), make(chan struct{})
			hb := b.RunAsync(ctx, func(tctx context.Context) error {
				if err := a.RunSync(tctx, func(context.Context) error {
					g.enter("in place on A")
					g.leave()
					return nil
				}); err != nil {
					return err
				}
				g.enter("B task")
				close(inB)
				<-release
				g.leave()
				return nil
			})
			var ha *taskqueue.Handle
			if when == "A task queued before" {
				<-inB
				ha = a.RunAsync(ctx, func(context.Context) error {
					g.enter("A task")
					g.leave()
					return nil
				})
			} else {
				ha = a.RunAsync(ctx, func(context.Context) error {
					g.enter("A task")
					g.leave()
					return nil
				})
				<-inB
			}
			for i := 0; i < 20000 && !ha.IsDone(); i++ {
				runtime.Gosched()
			}
			close(release)
			if err := hb.Wait(ctx); err != nil {
				t.Errorf("B task: %v", err)
			}
			if err := ha.Wait(ctx); err != nil {
				t.Errorf("A task: %v", err)
			}
			g.check(t)
		})
	}
}
