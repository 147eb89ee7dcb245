package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestGroupHammer runs many groups at once, each on a queue of its own under
// one shared target, with first-error cancel: a member fails with an error or
// a panic, or cancels the group's context, at a random place. Each group's
// members are all added before any may start, so that the instant of the
// cancel splits them exactly: the checker proves that
//
//   - every member ran at most once, and the failing one ran;
//   - the members that ran are exactly those that had started when the group
//     was canceled: none started after it, however the queue reached the
//     others later;
//   - the queue's Stats count the others as canceled;
//   - Wait returned the failure, or the context's error exactly when a member
//     was kept from running;
//   - no member runs after Wait has returned, and no goroutine is left
//     (goleak, in TestMain).
func TestGroupHammer(t *testing.T) {
	groups, submitters := 10000, 8
	if raceEnabled || testing.Short() {
		groups = 2000
	}
	root := taskqueue.NewConcurrent(4)
	var wg sync.WaitGroup
	var canceledGroups, lostMembers atomic.Int64
	for s := range submitters {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(s), 14))
			for range groups / submitters {
				c, l := hammerGroup(t, root, rng)
				canceledGroups.Add(int64(c))
				lostMembers.Add(int64(l))
			}
		})
	}
	wg.Wait()
	root.Close()
	t.Logf("%d groups, %d canceled, %d members never ran", groups, canceledGroups.Load(), lostMembers.Load())
	if canceledGroups.Load() == 0 || lostMembers.Load() == 0 {
		t.Error("the hammer canceled no group or kept no member from running: it tested nothing")
	}
}

// hammerGroup runs and checks one group, returning 1 if it was canceled
// and the number of members that never ran.
func hammerGroup(t *testing.T, root *taskqueue.Queue, rng *rand.Rand) (canceled, lost int) {
	var panics atomic.Int32
	handler := taskqueue.WithPanicHandler(func(*taskqueue.PanicError) { panics.Add(1) })
	var q *taskqueue.Queue
	if rng.IntN(3) == 0 {
		q = taskqueue.NewSerial(taskqueue.WithTarget(root), handler)
	} else {
		q = taskqueue.NewConcurrent(1+rng.IntN(4), taskqueue.WithTarget(root), handler)
	}
	n := 1 + rng.IntN(64)
	at := rng.IntN(n + n/4) // no failure when at >= n
	how := rng.IntN(3)      // 0: an error, 1: a panic, 2: the parent context canceled
	opts := []taskqueue.GroupOption{taskqueue.WithCancelOnError()}
	limited := rng.IntN(4) == 0
	if limited {
		opts = append(opts, taskqueue.WithGroupLimit(1+rng.IntN(3)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errBoom := errors.New("boom")
	ran := make([]atomic.Int32, n)
	var total atomic.Int32
	q.Suspend() // nothing starts until every member is in
	g := taskqueue.NewGroup(ctx, q, opts...)
	for i := range n {
		g.Go(func(ctx context.Context) error {
			ran[i].Add(1)
			total.Add(1)
			if rng := i * 7919 % 5; rng == 0 {
				runtime.Gosched()
			}
			if i != at {
				return nil
			}
			switch how {
			case 0:
				return errBoom
			case 1:
				panic(errBoom)
			}
			cancel()
			return nil
		})
	}
	q.Resume()
	err := g.Wait(context.Background())
	atWait := total.Load()
	q.Close() // the queue reaches the members that never start, and skips them
	report := func(format string, args ...any) {
		t.Helper()
		t.Errorf("group of %d members, failing at %d by %d, limited %v: %s", n, at, how, limited, fmt.Sprintf(format, args...))
	}
	if got := total.Load(); got != atWait {
		report("%d members ran after Wait returned", got-atWait)
	}
	for i := range ran {
		if r := ran[i].Load(); r > 1 {
			report("member %d ran %d times", i, r)
		}
	}
	if at >= n {
		if err != nil || int(atWait) != n {
			report("Wait() = %v after %d members; want nil after all", err, atWait)
		}
		return 0, 0
	}
	queued := g.QueuedAtCancel()
	if ran[at].Load() != 1 {
		report("the failing member did not run")
	}
	if int(atWait) != n-queued {
		report("%d members ran; want the %d that had started when the group was canceled", atWait, n-queued)
	}
	s := q.Stats()
	if int(s.Canceled) != queued {
		report("Stats().Canceled = %d; want %d", s.Canceled, queued)
	}
	if int(s.Completed) != int(atWait) {
		report("Stats().Completed = %d; want %d", s.Completed, atWait)
	}
	var pe *taskqueue.PanicError
	switch {
	case how == 0 && err != errBoom:
		report("Wait() = %v; want boom", err)
	case how == 1 && (!errors.As(err, &pe) || panics.Load() != 0):
		report("Wait() = %v, %d panics reported; want the member's panic from Wait, and none reported", err, panics.Load())
	case how == 2 && (err == context.Canceled) != (queued > 0):
		report("Wait() = %v with %d members kept from running; want context.Canceled exactly when some were", err, queued)
	case how == 2 && err != nil && err != context.Canceled:
		report("Wait() = %v; want nil or context.Canceled", err)
	}
	return 1, queued
}
