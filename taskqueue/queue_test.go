package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestTryGoTakesEveryFreeSlot: TryGo back to back on an idle queue of n
// slots starts n tasks and refuses the next, every time. A worker that had
// not yet taken its task used to make the next TryGo see no free slot (in 1
// of 6 runs of a suite: [true true false true]).
func TestTryGoTakesEveryFreeSlot(t *testing.T) {
	rounds := 3000
	if testing.Short() {
		rounds = 300
	}
	for round := range rounds {
		const n = 4
		q := taskqueue.NewConcurrent(n)
		release := make(chan struct{})
		var got [n + 1]bool
		for i := range got {
			got[i] = q.TryGo(func() { <-release })
		}
		close(release)
		if want := [n + 1]bool{true, true, true, true, false}; got != want {
			t.Fatalf("round %d: TryGo %d times on an idle queue of %d slots = %v; want %v", round, n+1, n, got, want)
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGroupTryGo: TryGo starts a member only while it can start at once:
// below the group's limit, with no member waiting, on a free slot of the
// queue. GroupOf's results leave out the members it refused.
func TestGroupTryGo(t *testing.T) {
	q := taskqueue.NewConcurrent(4)
	g := taskqueue.NewGroupOf[int](context.Background(), q, taskqueue.WithGroupLimit(2))
	release := make(chan struct{})
	var got []bool
	for i := range 3 {
		got = append(got, g.TryGo(func(context.Context) (int, error) { <-release; return i, nil }))
	}
	close(release)
	vals, err := g.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[true true false]" || fmt.Sprint(vals) != "[0 1]" {
		t.Errorf("TryGo three times with a group limit of 2 = %v, results %v; want [true true false], [0 1]", got, vals)
	}
	g2 := taskqueue.NewGroup(context.Background(), q)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if g2.TryGo(func(context.Context) error { return nil }) {
		t.Error("TryGo on a group of a closed queue = true; want false")
	}
}

// TestGoexitOfGoCountsAsFailed: a task of Go that calls runtime.Goexit
// counts as Failed, as Stats documents, not as Succeeded.
func TestGoexitOfGoCountsAsFailed(t *testing.T) {
	q := taskqueue.NewSerial()
	q.Go(func() { runtime.Goexit() })
	q.Go(func() {})
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if st := q.Stats(); st.Completed != 2 || st.Failed != 1 || st.Succeeded != 1 {
		t.Errorf("Stats = %+v; want Completed 2, Failed 1, Succeeded 1", st)
	}
}

// TestSubmissionThatWouldWaitForItselfFails: a task that holds the one slot
// of a serial target submits to a full bounded child of it: waiting for
// room could only wait for itself (the child's tasks need that slot), so
// the submission fails with ErrQueueFull instead of hanging.
func TestSubmissionThatWouldWaitForItselfFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewSerial()
		child := taskqueue.NewSerial(taskqueue.WithTarget(target), taskqueue.WithMaxQueued(1))
		err := target.RunSync(t.Context(), func(ctx context.Context) error {
			child.Go(func() {}) // fills the child: it cannot start while the target's slot is held
			return child.RunAsync(ctx, func(context.Context) error { return nil }).Wait(context.Background())
		})
		if !errors.Is(err, taskqueue.ErrQueueFull) {
			t.Errorf("RunAsync on a full child from a task of its serial target: %v; want ErrQueueFull", err)
		}
		target.Close()
	})
}
