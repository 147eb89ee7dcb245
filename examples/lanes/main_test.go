package main

import (
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/mainthread"
)

// TestMain serves the main thread, as the program does, and runs the tests
// beside it; goleak ignores the main goroutine, which serves.
func TestMain(m *testing.M) {
	mainthread.Run(func() {
		goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
	})
}

// TestLanes plays the game from many senders; run itself checks that each
// player's moves applied in order, on its lane and on the main thread.
func TestLanes(t *testing.T) {
	for _, senders := range []int{1, 8} {
		summary, err := run(5000, 8, senders)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(summary, "0 lanes left") {
			t.Errorf("summary %q: lanes left behind", summary)
		}
	}
}
