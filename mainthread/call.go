package mainthread

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/handoff"
	"github.com/taskqueue-go/taskqueue/internal/panics"
)

// Call runs fn on the main thread and returns when it has returned. Called
// on the main thread, it runs fn at once, where a queue of calls would wait
// for itself. If ctx is done before fn has run, Call returns ctx.Err(): fn
// does not run if it had not started (a done context runs nothing, even on
// the main thread, as Queue.RunSync does), and runs on if it had, a panic in
// it then going to the main loom's panic handler. Call returns ErrClosed
// once the main loop has stopped, rather than wait forever. If fn panics,
// Call panics in its caller with a *PanicError holding the panic value and
// fn's stack, and the main loop goes on serving. While nothing serves the
// main thread yet, Call waits, and says so (see NotServedAfter).
//
// taskqueue.RunSyncOnMainThread is the seed's name for Call. A call costs no
// allocation when ctx cannot be done; see BenchmarkCall.
func Call(ctx context.Context, fn func()) error {
	if fn == nil {
		panic("mainthread: Call with a nil function")
	}
	if ctx == nil {
		panic("mainthread: Call with a nil context")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if IsMain() {
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
		return ErrClosed
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

// A call is a function that Call runs on the main thread, pooled with the
// method value it posts, so that a Call allocates nothing. Its state machine,
// which settles the races between the main thread and a caller that stops
// waiting, is package handoff's, as RunSync's is.
type call struct {
	fn   func()
	p    *PanicError // fn's panic; written before the call is delivered
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
func reportPanic(p *PanicError) {
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
