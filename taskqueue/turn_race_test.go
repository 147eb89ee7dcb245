package taskqueue_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestNestedCallsRaceTheTaskEnd races RunSync calls made with a task's
// context, from goroutines the task starts and does not wait for, against
// the task's return and the start of the next task of the serial queue. A
// call that comes while the task runs runs in its place (beside the task's
// own code, which does not wait for it: the task's business); one that comes
// after is an outsider and waits its turn. Either way the nested calls never
// overlap one another nor the queue's other tasks, and every call runs
// exactly once.
func TestNestedCallsRaceTheTaskEnd(t *testing.T) {
	q := taskqueue.NewSerial()
	ctx := context.Background()
	var ex exclusive
	var calls, ran atomic.Int64
	var wg sync.WaitGroup
	body := func(context.Context) error {
		ex.enter()
		ran.Add(1)
		for range 3 {
			runtime.Gosched() // stay a while, so that other work could come in
		}
		ex.leave()
		return nil
	}
	const tasks, helpers = 400, 3
	wg.Add(tasks * helpers) // before any task starts, so that Wait waits for all
	for range tasks {
		q.Go(func() { body(ctx) }) // a task of its own between the nesting ones
		q.RunAsync(ctx, func(tctx context.Context) error {
			for range helpers {
				calls.Add(1)
				go func() {
					defer wg.Done()
					runtime.Gosched() // land anywhere around the task's end
					if err := q.RunSync(tctx, body); err != nil {
						t.Errorf("RunSync: %v", err)
					}
				}()
			}
			return nil
		})
	}
	wg.Wait()
	q.Close()
	if n := ex.overlap.Load(); n != 0 {
		t.Errorf("%d functions of a serial queue overlapped", n)
	}
	if got, want := ran.Load(), calls.Load()+tasks; got != want {
		t.Errorf("%d functions ran; want %d", got, want)
	}
}

// TestHelpersLendTheTaskSlotOnce has two goroutines of one task wait, with
// the task's context, for work of sibling queues of a target of one slot,
// while the task waits for them: the task's slot of the target is lent while
// they wait, once, however many of its goroutines wait. A third sibling with
// work queued must not run beside the work they wait for: the target runs one
// function at a time.
func TestHelpersLendTheTaskSlotOnce(t *testing.T) {
	for range 50 {
		target := taskqueue.NewSerial()
		var ex exclusive
		body := func(context.Context) error {
			ex.enter()
			for range 3 {
				runtime.Gosched()
			}
			ex.leave()
			return nil
		}
		a := taskqueue.NewSerial(taskqueue.WithTarget(target))
		b := taskqueue.NewSerial(taskqueue.WithTarget(target))
		c := taskqueue.NewSerial(taskqueue.WithTarget(target))
		d := taskqueue.NewSerial(taskqueue.WithTarget(target))
		ctx := context.Background()
		h := a.RunAsync(ctx, func(tctx context.Context) error {
			var wg sync.WaitGroup
			wg.Go(func() { b.RunSync(tctx, body) })
			wg.Go(func() { c.RunAsync(ctx, body).Wait(tctx) })
			for range 4 {
				d.Go(func() { body(ctx) })
			}
			wg.Wait()
			return nil
		})
		if err := h.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		d.Shutdown(ctx)
		target.Shutdown(ctx)
		if n := ex.overlap.Load(); n != 0 {
			t.Fatalf("%d functions overlapped on a target of one slot", n)
		}
	}
}

// TestInPlaceTakesTheLentSlotBack has one goroutine of a task wait, with the
// task's context, for work of a sibling queue, which lends the task's slot of
// their target of one slot, while another runs functions in the task's place:
// those run on that slot, which must not be lent while they do. A third
// sibling with work queued must never run beside them.
func TestInPlaceTakesTheLentSlotBack(t *testing.T) {
	for range 50 {
		target := taskqueue.NewSerial()
		var ex exclusive
		body := func(context.Context) error {
			ex.enter()
			for range 3 {
				runtime.Gosched()
			}
			ex.leave()
			return nil
		}
		a := taskqueue.NewSerial(taskqueue.WithTarget(target))
		b := taskqueue.NewSerial(taskqueue.WithTarget(target))
		d := taskqueue.NewSerial(taskqueue.WithTarget(target))
		ctx := context.Background()
		h := a.RunAsync(ctx, func(tctx context.Context) error {
			var wg sync.WaitGroup
			for range 6 {
				d.Go(func() { body(ctx) })
			}
			wg.Go(func() {
				for range 3 {
					b.Go(func() { body(ctx) }) // so that the call below waits, lending
					b.RunSync(tctx, body)
				}
			})
			wg.Go(func() {
				for range 6 {
					a.RunSync(tctx, body) // in the task's place
				}
			})
			wg.Wait()
			return nil
		})
		if err := h.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		d.Shutdown(ctx)
		target.Shutdown(ctx)
		if n := ex.overlap.Load(); n != 0 {
			t.Fatalf("%d functions overlapped on a target of one slot", n)
		}
	}
}

// TestInPlaceWaitsForTheLentSlot is the step by step case of the test above:
// the task's slot of a target of one slot is lent (a goroutine of the task
// waits for a sibling whose task is running on it, blocked); a function run
// in the task's place now must wait for the slot to come back, not run
// beside the sibling's task.
func TestInPlaceWaitsForTheLentSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewSerial()
		a := taskqueue.NewSerial(taskqueue.WithTarget(target))
		b := taskqueue.NewSerial(taskqueue.WithTarget(target))
		ctx := context.Background()
		var ex exclusive
		started, release := make(chan struct{}), make(chan struct{})
		h := a.RunAsync(ctx, func(tctx context.Context) error {
			var wg sync.WaitGroup
			b.Go(func() {
				ex.enter()
				close(started)
				<-release
				ex.leave()
			})
			wg.Go(func() { b.RunSync(tctx, func(context.Context) error { return nil }) })
			<-started // b's task runs on the slot the wait above lent
			inPlace := make(chan struct{})
			wg.Go(func() {
				a.RunSync(tctx, func(context.Context) error {
					ex.enter()
					ex.leave()
					return nil
				})
				close(inPlace)
			})
			synctest.Wait()
			select {
			case <-inPlace:
				t.Error("a function ran in the task's place while its slot was lent")
			default:
			}
			close(release)
			wg.Wait()
			return nil
		})
		if err := h.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		target.Shutdown(ctx)
		if n := ex.overlap.Load(); n != 0 {
			t.Errorf("%d functions overlapped on a target of one slot", n)
		}
	})
}

// TestAWaitThatOutlivesItsTaskStopsLending has a goroutine of a task wait,
// with the task's context, for a sibling whose task runs blocked on the slot
// the wait lent, and the task return without waiting for it: from then on
// the goroutine is an outsider, which lends nothing. The slot goes back to
// the task's queue, whose next task must not run beside the sibling's on a
// target of one slot.
func TestAWaitThatOutlivesItsTaskStopsLending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewSerial()
		a := taskqueue.NewSerial(taskqueue.WithTarget(target))
		b := taskqueue.NewSerial(taskqueue.WithTarget(target))
		ctx := context.Background()
		var ex exclusive
		started, release := make(chan struct{}), make(chan struct{})
		waited := make(chan error, 1)
		h := a.RunAsync(ctx, func(tctx context.Context) error {
			b.Go(func() {
				ex.enter()
				close(started)
				<-release
				ex.leave()
			})
			go func() { waited <- b.RunSync(tctx, func(context.Context) error { return nil }) }()
			<-started // b's task runs on the slot the wait above lent
			return nil
		})
		next := a.RunAsync(ctx, func(context.Context) error {
			ex.enter()
			ex.leave()
			return nil
		})
		if err := h.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if next.IsDone() {
			t.Error("the queue's next task ran while the slot was still lent to a sibling")
		}
		close(release)
		if err := next.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-waited; err != nil {
			t.Fatal(err)
		}
		target.Shutdown(ctx)
		if n := ex.overlap.Load(); n != 0 {
			t.Errorf("%d functions overlapped on a target of one slot", n)
		}
	})
}
