package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/mainthread"
)

// The main thread cannot be faked: the tests run under mainthread.Run, as a
// program does.
func TestMain(m *testing.M) {
	code := 0
	mainthread.Run(func() {
		defer func() {
			if err := goleak.Find(goleak.IgnoreCurrent()); err != nil && code == 0 {
				os.Stderr.WriteString(err.Error() + "\n")
				code = 1
			}
		}()
		code = m.Run()
	})
	os.Exit(code)
}

// TestRun: every asset reaches the main thread before the coroutine uses
// them, whatever the number of workers, and the digest is the same.
func TestRun(t *testing.T) {
	var first string
	for _, workers := range []int{1, 3, 8} {
		var out bytes.Buffer
		if err := run(context.Background(), &out, 12, workers); err != nil {
			t.Fatalf("%d workers: %v", workers, err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		last := lines[len(lines)-1]
		if !strings.HasPrefix(last, "loaded 12 assets, digest ") {
			t.Fatalf("%d workers: last line %q", workers, last)
		}
		if first == "" {
			first = last
		} else if last != first {
			t.Errorf("%d workers: %q; want %q as with 1 worker", workers, last, first)
		}
		if !strings.HasPrefix(lines[0], "loading:") || lines[len(lines)-2] != "loading: 100%" {
			t.Errorf("%d workers: progress lines %q; want them first, ending at 100%%", workers, lines[:len(lines)-1])
		}
	}
}
