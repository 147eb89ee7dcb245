package testkit_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
)

// TestBuffer: writes from several goroutines at once all land, whole, and
// Reset empties the buffer (run with -race, it also proves the locking).
func TestBuffer(t *testing.T) {
	var buf testkit.Buffer
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for range 100 {
				fmt.Fprintf(&buf, "%d\n", i)
				_ = buf.Len()
			}
		})
	}
	wg.Wait()
	if got := strings.Count(buf.String(), "\n"); got != 400 || buf.Len() != 800 {
		t.Errorf("%d lines, %d bytes after 400 writes of 2 bytes; want 400, 800", got, buf.Len())
	}
	buf.Reset()
	if buf.Len() != 0 || buf.String() != "" {
		t.Errorf("after Reset: Len %d, String %q; want 0, \"\"", buf.Len(), buf.String())
	}
}
