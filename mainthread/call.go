package mainthread

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/handoff"
	"github.com/taskqueue-go/taskqueue/internal/panics"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// Call runs fn on the main OS thread and returns what it returns, blocking
// until fn has returned. Called on the main thread (from a function that
// runs there, or a coroutine of the main loom), it runs fn at once, where a
// queue of calls would wait for itself.
//
// The error is fn's, or one of these, in which case fn ran not, or not to
// its end for this caller:
//   - ctx.Err(), if ctx is done before fn has run: fn does not run if it had
//     not started (a done context runs nothing, even on the main thread);
//     if ctx ends while fn runs, Call returns at once and fn runs on, what
//     it returns then dropped and a panic in it going to the main loom's
//     panic handler;
//   - an error matching taskqueue.ErrClosed once the main loop has stopped
//     (Run returned, or the program closed Loom()), rather than wait
//     forever.
//
// If fn panics, Call panics in its caller with a *taskqueue.PanicError (the
// same type as loom.PanicError) holding the panic value and fn's stack, and
// the main loop goes on serving. fn must not call runtime.Goexit, which
// would end the main goroutine.
//
// The main thread must be served, by Run or by a frame loop that updates
// Loom(); while nothing serves it yet, Call waits, and after five seconds
// says so through log/slog. A call costs no allocation; made while Run's
// loop polls for work, as back-to-back calls are, it costs about 0.7µs on a
// 2-CPU virtual machine (BenchmarkMainThreadCall in the module's
// benchmarks), its caller polling for the outcome; one that finds the loop
// asleep costs two threads' wake-ups, as a call to a goroutine locked to
// its thread that parks does (WithSpin says when a caller burns CPU time).
// Call panics if ctx or fn is nil.
//
// Call is taskqueue.RunSyncOnMainThread for a function that returns an
// error; CallValue is Call for a function that returns a value too.
func Call(ctx context.Context, fn func() error) error {
	if fn == nil {
		panic("mainthread: Call with a nil function")
	}
	if ctx == nil {
		panic("mainthread: Call with a nil context")
	}
	_, err := do(ctx, errFunc(fn))
	return err
}

// CallValue runs fn on the main OS thread, as Call does, and returns what fn
// returns: the value and fn's error once fn has run, or the zero value and
// Call's own error (ctx.Err(), or one matching taskqueue.ErrClosed) when it
// has not, or not to its end for this caller. Blocking, cancellation, panics
// and costs are Call's; CallValue allocates the one place where the main
// thread leaves the value. It panics if ctx or fn is nil.
func CallValue[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	if fn == nil {
		panic("mainthread: CallValue with a nil function")
	}
	if ctx == nil {
		panic("mainthread: CallValue with a nil context")
	}
	f := &valueFunc[T]{fn: fn}
	ran, err := do(ctx, f)
	if !ran {
		var zero T
		return zero, err
	}
	return f.v, err
}

// runSync is taskqueue.RunSyncOnMainThread, which checks its arguments.
func runSync(ctx context.Context, fn func()) error {
	_, err := do(ctx, plainFunc(fn))
	return err
}

// A body is the function of a call: RunSyncOnMainThread's, Call's or
// CallValue's, behind one method, so that the call's pooled record holds any
// of them and a function value becomes one without an allocation.
type body interface{ run() error }

type plainFunc func()

func (f plainFunc) run() error { f(); return nil }

type errFunc func() error

func (f errFunc) run() error { return f() }

// valueFunc is CallValue's body, and the place where the main thread leaves
// the value, which the caller reads once the call is delivered.
type valueFunc[T any] struct {
	fn func() (T, error)
	v  T
}

func (f *valueFunc[T]) run() (err error) {
	f.v, err = f.fn()
	return err
}

// do runs b on the main thread and returns b's error, with ran true, once b
// has returned; or, with ran false, ctx.Err() or errClosed if b did not run,
// or ran on after its caller stopped waiting. A panic in b is re-panicked.
func do(ctx context.Context, b body) (ran bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if onMain() {
		if p := panics.Recover(loomName, func() { err = b.run() }, nil); p != nil {
			panic(p)
		}
		return true, err
	}
	c := calls.Get().(*call)
	c.body = b
	c.call.Arm(ctx)
	if mainLoom.Post(c.run) != nil {
		c.recycle()
		return false, errClosed
	}
	watchServed()
	if !c.await(ctx) {
		return false, ctx.Err() // c is the main thread's now, to recycle
	}
	p, err := c.p, c.err
	c.recycle()
	if p != nil {
		panic(p)
	}
	return true, err
}

// onMain is IsMain for do, without its system call while Run's loop polls
// or sleeps: the main goroutine, which alone sets those states, is then in
// Run's own code, not calling do, so a caller that sees either runs
// elsewhere. The system call, about 180ns on a Linux virtual machine, is a
// third of a whole call through a polling loop (BenchmarkIsMain and
// BenchmarkRunSyncOnMainThread in this package's benchmarks). In a page,
// every goroutine runs on the main thread, and do runs each call at once as
// IsMain says.
func onMain() bool {
	if s := loop.Load(); runtime.GOOS != "js" && (s == loopPolling || s == loopAsleep) {
		return false
	}
	return IsMain()
}

// A call is a function that do runs on the main thread, pooled with the
// method value it posts, so that a call allocates nothing. Its state machine,
// which settles the races between the main thread and a caller that stops
// waiting, and lets the caller poll for the outcome without the main thread
// waking it, is package handoff's, as RunSync's is.
type call struct {
	body  body
	err   error                 // body's error; written before the call is delivered
	p     *scheduler.PanicError // body's panic; written before the call is delivered
	call  handoff.Call
	polls atomic.Bool // the caller polls for the outcome (see await)
	run   func()      // c.invoke, bound once
	exec  func()      // c.execute, bound once
}

// calls pools call records. Its New is set in init: a record's methods
// put it back in the pool, which an initializer of the pool could not name.
var calls sync.Pool

func init() {
	calls.New = func() any {
		c := &call{}
		c.run, c.exec = c.invoke, c.execute
		c.call.KeepChannel() // no caller in a testing/synctest bubble (see the package documentation)
		return c
	}
}

// recycle returns a call to the pool: by its caller once the call was
// delivered, or by the main thread once its caller gave it up.
func (c *call) recycle() {
	c.body, c.err, c.p = nil, nil, nil
	c.polls.Store(false)
	calls.Put(c)
}

// invoke runs on the main thread, as an action of the main loom.
func (c *call) invoke() {
	if !c.call.Start() {
		c.recycle() // the caller gave it up before it started, and left it here
		return
	}
	c.p = panics.Recover(loomName, c.exec, nil)
	polls := c.polls.Load() // before the delivery, after which c is the caller's
	delivered, woke := c.call.DeliverWoke()
	switch {
	case !delivered:
		if c.p != nil {
			reportPanic(c.p) // the caller left: nobody else will see the panic
		}
		c.recycle() // the caller left it here
	case woke:
		noteCall(callWoke)
	case !polls:
		noteCall(callIdle)
	}
}

func (c *call) execute() { c.err = c.body.run() }

// What the calls of a frame found of their callers, which rules polling out
// after the frame (see poller.next): callWoke, a caller that slept, woken,
// which now waits to run on the main thread's processor, and would wait as
// long as the loop polled (unless another processor takes it); callIdle, a
// caller neither asleep nor polling, which waits for a processor and may
// need the main thread's. A caller that polled runs on a processor of its
// own, and its next call is likely to come within the loop's poll. Set by
// the main goroutine as it runs a frame, read by Run after it.
var frameCalls atomic.Uint32

const (
	callWoke uint32 = 1 << iota
	callIdle
)

// noteCall adds what a call found to frameCalls. The main goroutine alone
// writes it, one frame at a time, so a load and a store do.
func noteCall(found uint32) { frameCalls.Store(frameCalls.Load() | found) }

// await waits for the main thread to deliver c, reporting false if ctx
// ended first.
//
// With Run serving and able to poll (spinSlots > 0), the caller polls for
// the outcome for up to the loop's spin (WithSpin), holding one of
// spinSlots, so that callers that poll leave a processor to the main thread.
// While Run's loop is awake, running a frame or polling for work, the main
// thread runs c soon, and neither side pays for waking the other. If the
// loop sleeps, the caller's post woke it, and the runtime queued the main
// goroutine on the caller's processor: the caller yields that processor to
// the main thread first (Gosched), and polls once the runtime runs it again
// on another, so that both are running when c is delivered and the next
// call finds the loop polling. Without a slot, or once the poll ends in
// vain, the caller parks until the delivery wakes it.
func (c *call) await(ctx context.Context) bool {
	if slots := spinSlots.Load(); slots > 0 {
		s := loop.Load()
		if spinners.Add(1) <= slots {
			if s == loopAsleep {
				runtime.Gosched()
			}
			c.polls.Store(true)
			ok := c.call.Spin(time.Duration(spinFor.Load()))
			spinners.Add(-1)
			if ok {
				return true
			}
		} else {
			spinners.Add(-1)
		}
	}
	callerWaits.Add(1)
	delivered, _ := c.call.Wait(ctx)
	return delivered
}

// callerWaits counts the calls whose caller went to wait (and, unless the
// outcome came meanwhile, parked) rather than see the outcome while it
// polled, for the benchmarks.
var callerWaits atomic.Int64

// reportPanic gives p, which no caller will see, to the main loom's panic
// handler: an action that panics with it, which the loom recovers as it
// recovers any action's panic. Once the loom is closed, it goes to
// log/slog's default logger.
func reportPanic(p *scheduler.PanicError) {
	if mainLoom.Post(func() { panic(p) }) != nil {
		slog.Error("mainthread: a call panicked after its caller stopped waiting", "panic", p.Value, "stack", string(p.Stack))
	}
}
