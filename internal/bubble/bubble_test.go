package bubble_test

import (
	"testing"
	"testing/synctest"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/internal/bubble"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestGoroutines(t *testing.T) {
	outside := make(chan struct{})
	go func() { <-outside }() // not in the bubble: not counted
	defer close(outside)
	synctest.Test(t, func(t *testing.T) {
		base := bubble.Goroutines()
		ch := make(chan struct{})
		for range 3 {
			go func() { <-ch }()
		}
		synctest.Wait()
		if got := bubble.Goroutines() - base; got != 3 {
			t.Fatalf("counted %d new goroutines in the bubble, want 3", got)
		}
		close(ch)
		synctest.Wait()
		if got := bubble.Goroutines() - base; got != 0 {
			t.Fatalf("counted %d goroutines left, want 0", got)
		}
	})
}
