package mainthread

import (
	"log/slog"
	"sync"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// NotServedAfter is how long work may wait for a main thread that has never
// run a frame before this package says so. A program that imports mainthread
// must serve the main thread: call Run from main, or update Loom() once per
// frame from the loop of the main thread (GLFW, SDL). One that forgets, or
// whose engine owns the main thread and never updates Loom() (Ebitengine),
// would otherwise wait forever without a word: once the first Call, CallContext
// or Go has waited this long with no frame run, a warning goes to log/slog's
// default logger, once per process. The work goes on waiting; a frame, when
// one comes, runs it.
const NotServedAfter = 5 * time.Second

var (
	notServedAfter = NotServedAfter // changed by tests only
	watchOnce      sync.Once
)

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
