package taskqueue_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestRunAfterCompaction cancels most of many delayed tasks in random order
// and checks that the rest run, in due order, and nothing canceled does.
func TestRunAfterCompaction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		r := rand.New(rand.NewPCG(7, 8))
		var mu sync.Mutex
		var order []time.Duration
		handles := map[int]*taskqueue.Handle{}
		delays := map[int]time.Duration{}
		for i := range 2000 {
			d := time.Duration(r.IntN(100000)+1) * time.Millisecond
			delays[i] = d
			handles[i] = q.RunAfter(t.Context(), d, func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				order = append(order, d)
				return nil
			})
		}
		var kept []time.Duration
		for i := range 2000 {
			if r.IntN(10) < 8 {
				if !handles[i].Cancel() {
					t.Fatalf("Cancel(%d) = false", i)
				}
			} else {
				kept = append(kept, delays[i])
			}
		}
		if s := q.Stats(); s.Delayed != len(kept) {
			t.Errorf("Stats().Delayed = %d; want %d", s.Delayed, len(kept))
		}
		q.Close()
		slices.Sort(kept)
		if !slices.Equal(order, kept) {
			t.Errorf("ran %d tasks; want the %d kept ones, in due order", len(order), len(kept))
		}
	})
}
