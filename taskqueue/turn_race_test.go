package taskqueue_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

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
