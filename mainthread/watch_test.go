package mainthread

import (
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
)

// A main thread that nothing serves is reported once its first caller has
// waited notServedAfter; one that runs a frame in time is not.
func TestNotServedIsReported(t *testing.T) {
	var buf testkit.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(prev)

	synctest.Test(t, func(t *testing.T) {
		never := loom.New()
		watch(never, notServedAfter)
		time.Sleep(notServedAfter - time.Millisecond)
		synctest.Wait()
		if buf.Len() != 0 {
			t.Fatalf("warned before notServedAfter: %s", buf.String())
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait() // the timer's function has run
		if !strings.Contains(buf.String(), "nothing serves") || !strings.Contains(buf.String(), "mainthread.Run") {
			t.Fatalf("after notServedAfter, the log holds %q; want the warning", buf.String())
		}
		never.Close()
	})
	buf.Reset()
	synctest.Test(t, func(t *testing.T) {
		served := loom.New()
		watch(served, notServedAfter)
		time.Sleep(time.Second)
		served.Update()
		time.Sleep(notServedAfter)
		synctest.Wait()
		if buf.Len() != 0 {
			t.Fatalf("warned about a loom that ran a frame: %s", buf.String())
		}
		served.Close()
	})
}
