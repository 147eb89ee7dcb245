package taskqueue_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestWaitsShowsACycle builds the cross-queue deadlock the RunSync
// documentation describes, around three serial queues, with contexts that
// end it: a task of each calls RunSync on the next. Waits shows each waiting
// call, oldest first, holding the queue whose task made it, which the
// previous call waits for; a Waits of some of the queues shows only their
// waits and holds; RunSync calls that run on their caller, on an idle queue
// or in a task's place, never show; once the contexts end, nothing waits.
func TestWaitsShowsACycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		ctx, cancel := context.WithCancel(context.Background())
		qs := []*taskqueue.Queue{taskqueue.NewSerial(), taskqueue.NewSerial(), taskqueue.NewSerial()}
		var running sync.WaitGroup
		running.Add(len(qs))
		noWaits := func(context.Context) error {
			if ws := taskqueue.Waits(qs...); len(ws) != 0 {
				t.Errorf("Waits = %v from a RunSync that runs on its caller; want none", ws)
			}
			return nil
		}
		qs[0].RunSync(ctx, noWaits) // on the caller of an idle queue
		var hs []*taskqueue.Handle
		for i, q := range qs {
			next := qs[(i+1)%len(qs)]
			hs = append(hs, q.RunAsync(ctx, func(ctx context.Context) error {
				q.RunSync(ctx, noWaits) // in the task's place
				running.Done()
				running.Wait()                             // every queue is busy before any call waits
				time.Sleep(time.Duration(i) * time.Second) // wait in the order of the queues
				return next.RunSync(ctx, nop)
			}))
		}
		time.Sleep(time.Duration(len(qs)) * time.Second)
		synctest.Wait()
		ws := taskqueue.Waits(qs...)
		if len(ws) != len(qs) {
			t.Fatalf("Waits = %v; want %d waits", ws, len(qs))
		}
		for i, w := range ws {
			if w.Queue != qs[(i+1)%len(qs)] || len(w.Holds) != 1 || w.Holds[0] != qs[i] {
				t.Errorf("wait %d is for queue %d and holds %v; want a wait for queue %d holding queue %d", i, slices.Index(qs, w.Queue), w.Holds, (i+1)%len(qs), i)
			}
		}
		for i, w := range ws {
			if since := w.Since.Sub(start); since != time.Duration(i)*time.Second {
				t.Errorf("wait %d began %v in; want %ds: oldest first", i, since, i)
			}
		}
		// Of queues 0 and 1: the call waiting for 1 holds 0; the one waiting
		// for 0 holds nothing of them (it holds queue 2, not given).
		part := taskqueue.Waits(qs[0], qs[1])
		if len(part) != 2 || part[0].Queue != qs[1] || len(part[0].Holds) != 1 || part[0].Holds[0] != qs[0] ||
			part[1].Queue != qs[0] || len(part[1].Holds) != 0 {
			t.Errorf("Waits of queues 0 and 1 = %v; want the wait for 1 holding 0, then the wait for 0 holding none of them", part)
		}
		// A queue given twice counts once.
		if twice := taskqueue.Waits(qs[0], qs[1], qs[0], qs[1]); !slices.EqualFunc(twice, part, func(a, b taskqueue.Wait) bool {
			return a.Queue == b.Queue && a.Since.Equal(b.Since) && slices.Equal(a.Holds, b.Holds)
		}) {
			t.Errorf("Waits of queues 0, 1, 0 and 1 = %v; want %v, those of 0 and 1", twice, part)
		}
		cancel()
		for i, h := range hs {
			if err := h.Wait(context.Background()); err != context.Canceled {
				t.Errorf("task of queue %d in the cycle ended with %v; want Canceled", i, err)
			}
		}
		if ws := taskqueue.Waits(qs...); len(ws) != 0 {
			t.Errorf("Waits after the cycle ended = %v; want none", ws)
		}
	})
}

// TestRunSyncFromAnOutsiderWarns checks what RunSync does when called from
// inside a serial queue's task without the task's context: it waits behind
// the task, which here waits for it, until its context ends; meanwhile it
// warns through log/slog that it may be waiting for itself.
func TestRunSyncFromAnOutsiderWarns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logged strings.Builder
		old := slog.Default()
		slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
		defer slog.SetDefault(old)
		q := taskqueue.NewSerial(taskqueue.WithName("ui"))
		done := make(chan error)
		q.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*5*time.Second)
			defer cancel()
			done <- q.RunSync(ctx, func(context.Context) error { return nil })
		})
		if err := <-done; err != context.DeadlineExceeded {
			t.Errorf("RunSync from a Go task of a serial queue = %v; want DeadlineExceeded", err)
		}
		if got := logged.String(); !strings.Contains(got, "may be its caller") || !strings.Contains(got, "queue=ui") {
			t.Errorf("logged %q; want the warning that the call may wait for itself", got)
		}
	})
}
