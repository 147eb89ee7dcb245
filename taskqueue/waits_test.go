package taskqueue_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestWaitsShowsACycle builds the cross-queue deadlock the RunSync
// documentation describes, with contexts that end it, and checks that Waits
// shows each waiting goroutine holding the queue the other waits for.
func TestWaitsShowsACycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		a, b := taskqueue.NewSerial(), taskqueue.NewSerial()
		inA, inB := make(chan struct{}), make(chan struct{})
		ha := a.RunAsync(ctx, func(ctx context.Context) error {
			close(inA)
			<-inB
			return b.RunSync(ctx, func(context.Context) error { return nil })
		})
		hb := b.RunAsync(ctx, func(ctx context.Context) error {
			close(inB)
			<-inA
			return a.RunSync(ctx, func(context.Context) error { return nil })
		})
		synctest.Wait()
		ws := taskqueue.Waits(a, b)
		if len(ws) != 2 {
			t.Fatalf("Waits = %v; want two waits", ws)
		}
		for _, w := range ws {
			other := a
			if w.Queue == a {
				other = b
			}
			if len(w.Holds) != 1 || w.Holds[0] != other {
				t.Errorf("a wait for %s holds %v; want the other queue", name(a, b, w.Queue), w.Holds)
			}
		}
		cancel()
		for _, h := range []*taskqueue.Handle{ha, hb} {
			if err := h.Wait(context.Background()); err != context.Canceled {
				t.Errorf("task in the cycle ended with %v; want Canceled", err)
			}
		}
		if ws := taskqueue.Waits(a, b); len(ws) != 0 {
			t.Errorf("Waits after the cycle ended = %v; want none", ws)
		}
	})
}

func name(a, b, q *taskqueue.Queue) string {
	switch q {
	case a:
		return "a"
	case b:
		return "b"
	}
	return fmt.Sprint(q)
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
