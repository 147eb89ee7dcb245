package mainthread

import (
	"log/slog"
	"sync"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// notServedAfter is how long work may wait for a main thread that has never
// run a frame before this package says so (see the package documentation).
const notServedAfter = 5 * time.Second

var watchOnce sync.Once

// watchServed arms, once, the check that reports a main thread that nothing
// serves. It costs one atomic load once a frame has run.
func watchServed() {
	if mainLoom.Frame() > 0 {
		return
	}
	watchOnce.Do(func() { watch(mainLoom, notServedAfter) })
}

// watch warns after d if l has run no frame by then.
func watch(l *loom.Loom, d time.Duration) {
	time.AfterFunc(d, func() {
		if l.Frame() > 0 {
			return
		}
		slog.Warn("mainthread: work has waited for the main thread, which nothing serves: "+
			"call mainthread.Run from main, or call mainthread.Loom().Update() once per frame from the main thread's loop",
			"waited", d)
	})
}
