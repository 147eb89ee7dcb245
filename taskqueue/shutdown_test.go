package taskqueue_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestCloseNowCountsWhatNeverRan: Stats().Running counts only tasks that
// have started, so that once it reaches the limit, CloseNow cancels exactly
// the tasks that never ran, and says how many. A worker used to count as
// running before it took its task, and CloseNow then canceled that task too:
// its count was one higher than the tasks that never ran.
func TestCloseNowCountsWhatNeverRan(t *testing.T) {
	rounds := 2000
	if testing.Short() {
		rounds = 200
	}
	for round := range rounds {
		const limit, total = 2, 10
		q := taskqueue.NewConcurrent(limit)
		release := make(chan struct{})
		var ran atomic.Int32
		for range total {
			q.Go(func() {
				ran.Add(1)
				<-release
			})
		}
		for q.Stats().Running < limit {
			runtime.Gosched()
		}
		n := q.CloseNow()
		close(release)
		if err := q.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := int(ran.Load()); got != limit || n != total-limit {
			t.Fatalf("round %d: CloseNow = %d and %d tasks ran, once Running reached %d; want %d and %d", round, n, got, limit, total-limit, limit)
		}
		if st := q.Stats(); st.Canceled != uint64(n) || st.Completed != limit {
			t.Fatalf("round %d: %+v; want Canceled %d, Completed %d", round, st, n, limit)
		}
	}
}

// TestCloseNowCountsMembersOfGroups: CloseNow on a queue whose group's
// members wait behind the group's queued task cancels them and counts them
// in what it returns, as Stats counts them. It used to return 0 while
// Stats.Canceled said 10.
func TestCloseNowCountsMembersOfGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		block := make(chan struct{})
		q.Go(func() { <-block }) // the group's task waits behind it
		g := taskqueue.NewGroup(context.Background(), q)
		for range 10 {
			g.Go(func(context.Context) error { return nil })
		}
		synctest.Wait()
		n := q.CloseNow()
		close(block)
		if err := g.Wait(context.Background()); !errors.Is(err, taskqueue.ErrClosed) {
			t.Errorf("Wait = %v; want ErrClosed", err)
		}
		if st := q.Stats(); n != 10 || st.Canceled != 10 {
			t.Errorf("CloseNow = %d, Stats.Canceled = %d; want 10 and 10", n, st.Canceled)
		}
		if err := q.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
