package main

import (
	"testing"
	"testing/synctest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestRun runs the tour in a synctest bubble: its delayed progress report
// falls due on the fake clock, at the same point of every run, and a hang
// is reported as a deadlock of the bubble.
func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		if err := run(16, 1<<10, 4); err != nil {
			t.Fatal(err)
		}
	})
}
