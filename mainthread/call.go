package mainthread

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/handoff"
	"github.com/taskqueue-go/taskqueue/internal/panics"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// runSync is taskqueue.RunSyncOnMainThread, which checks its arguments: it
// runs fn on the main thread and returns when fn has returned; called on the
// main thread, it runs fn at once. A call costs no allocation when ctx cannot
// be done; see BenchmarkRunSyncOnMainThread.
func runSync(ctx context.Context, fn func()) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if onMain() {
		if p := panics.Recover("", fn, nil); p != nil {
			panic(p)
		}
		return nil
	}
	c := calls.Get().(*call)
	c.fn = fn
	c.call.Arm(ctx)
	if mainLoom.Post(c.run) != nil {
		c.recycle()
		return errClosed
	}
	watchServed()
	c.spin()
	if delivered, _ := c.call.Wait(ctx); !delivered {
		return ctx.Err() // c stays with the main thread: it is not reused
	}
	p := c.p
	c.recycle()
	if p != nil {
		panic(p)
	}
	return nil
}

// onMain is IsMain for runSync, without its system call while Run's loop
// spins or sleeps (see Run): the main goroutine, which alone sets those flags,
// is then in Run's own code, not calling runSync, so a caller that sees
// either set runs elsewhere. The system call is about a third of a round
// trip to a spinning loop (see BenchmarkIsMain and
// BenchmarkRunSyncOnMainThread). In a page, every goroutine runs on the main
// thread, and runSync runs each call at once as IsMain says.
func onMain() bool {
	if runtime.GOOS != "js" && (loopSpinning.Load() || loopAsleep.Load()) {
		return false
	}
	return IsMain()
}

// A call is a function that runSync runs on the main thread, pooled with the
// method value it posts, so that a call allocates nothing. Its state machine,
// which settles the races between the main thread and a caller that stops
// waiting, is package handoff's, as RunSync's is.
type call struct {
	fn   func()
	p    *scheduler.PanicError // fn's panic; written before the call is delivered
	call handoff.Call
	run  func() // c.invoke, bound once
}

var calls = sync.Pool{New: func() any {
	c := &call{}
	c.run = c.invoke
	return c
}}

// recycle returns a call that the main thread will not touch again.
func (c *call) recycle() {
	c.fn, c.p = nil, nil
	calls.Put(c)
}

// invoke runs on the main thread, as an action of the main loom.
func (c *call) invoke() {
	if !c.call.Start() {
		return // the caller gave it up before it started
	}
	c.p = panics.Recover("", c.fn, nil)
	if !c.call.Deliver() && c.p != nil {
		reportPanic(c.p) // the caller left: nobody else will see the panic
	}
}

// reportPanic gives p, which no caller will see, to the main loom's panic
// handler: an action that panics with it, which the loom recovers as it
// recovers any action's panic. Once the loom is closed, it goes to
// log/slog's default logger.
func reportPanic(p *scheduler.PanicError) {
	if mainLoom.Post(func() { panic(p) }) != nil {
		slog.Error("mainthread: a call panicked after its caller stopped waiting", "panic", p.Value, "stack", string(p.Stack))
	}
}

// spin waits, if the main loop is spinning (see WithSpin), for the main
// thread to deliver c, for up to the loop's spin, so that neither side pays
// for waking the other.
func (c *call) spin() {
	d := spinFor.Load()
	if d == 0 || !loopSpinning.Load() {
		return
	}
	start := time.Now()
	for i := 1; !c.call.Delivered(); i++ {
		if i%256 == 0 && time.Since(start) > time.Duration(d) {
			return
		}
	}
}
