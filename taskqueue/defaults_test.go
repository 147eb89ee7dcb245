package taskqueue_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestDefaultQueuesAcrossBubbles uses the default queues in one synctest
// bubble after another, which works only if they keep no channel, timer or
// goroutine between uses.
func TestDefaultQueuesAcrossBubbles(t *testing.T) {
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				for _, q := range []*taskqueue.Queue{taskqueue.DefaultSerial(), taskqueue.DefaultConcurrent()} {
					h := q.RunAfter(t.Context(), time.Second, func(context.Context) error { return nil })
					v, err := taskqueue.RunSync(t.Context(), q, func(context.Context) (int, error) { return i, nil })
					if v != i || err != nil {
						t.Errorf("RunSync = %v, %v; want %d, nil", v, err, i)
					}
					if err := h.Wait(t.Context()); err != nil {
						t.Errorf("Wait = %v", err)
					}
					q.Go(func() {})
					canceled := q.RunAfter(t.Context(), time.Hour, func(context.Context) error { return nil })
					canceled.Cancel()
				}
				synctest.Wait()
			})
		})
	}
}

// TestDefaultQueues: concurrent first use makes one DefaultSerial and one
// DefaultConcurrent, of limits 1 and GOMAXPROCS; closing either panics, and
// they still work after.
func TestDefaultQueues(t *testing.T) {
	var wg sync.WaitGroup
	got := make([]*taskqueue.Queue, 16)
	for i := range got {
		wg.Go(func() {
			if i%2 == 0 {
				got[i] = taskqueue.DefaultSerial()
			} else {
				got[i] = taskqueue.DefaultConcurrent()
			}
		})
	}
	wg.Wait()
	for i, q := range got {
		if q != got[i%2] {
			t.Fatalf("concurrent first use made two default queues")
		}
	}
	if got[0].Stats().Limit != 1 || got[1].Stats().Limit != runtime.GOMAXPROCS(0) {
		t.Errorf("limits %d, %d; want 1, GOMAXPROCS", got[0].Stats().Limit, got[1].Stats().Limit)
	}
	var refused []misuse
	for _, d := range []struct {
		name string
		q    *taskqueue.Queue
	}{{"DefaultSerial", taskqueue.DefaultSerial()}, {"DefaultConcurrent", taskqueue.DefaultConcurrent()}} {
		refused = append(refused,
			misuse{d.name + ".Close", func() { d.q.Close() }, "taskqueue: Shutdown of a default queue, which is shared"},
			misuse{d.name + ".Shutdown", func() { d.q.Shutdown(context.Background()) }, "taskqueue: Shutdown of a default queue, which is shared"},
			misuse{d.name + ".CloseNow", func() { d.q.CloseNow() }, "taskqueue: CloseNow of a default queue, which is shared"})
	}
	checkMisuses(t, refused)
	// They still work after the refused calls.
	for _, q := range got[:2] {
		if err := q.RunSync(context.Background(), nop); err != nil {
			t.Errorf("RunSync on a default queue after a refused Close = %v", err)
		}
	}
}
