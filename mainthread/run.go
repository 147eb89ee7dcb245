package mainthread

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// An Option configures Run.
type Option interface {
	apply(*options)
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	frameInterval time.Duration
	spin          time.Duration
}

// defaultSpin is WithSpin's default.
const defaultSpin = 50 * time.Microsecond

// WithFrameInterval sets how often Run runs frames while coroutines of the
// main loom wait for frames or poll a condition: 1/60 s by default. Posted
// work and due timers run at once, whatever the interval. WithFrameInterval
// panics if d <= 0.
func WithFrameInterval(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("mainthread: WithFrameInterval(%v): interval must be positive", d))
	}
	return optionFunc(func(o *options) { o.frameInterval = d })
}

// WithSpin sets how long the main loop may poll for work after a frame
// before it sleeps, and how long a caller of Call, CallValue or
// taskqueue.RunSyncOnMainThread may poll for its outcome: 50µs by default.
// WithSpin(0) turns polling off, for both. WithSpin panics if d < 0.
//
// Polling trades CPU time for latency. Waking a sleeping thread costs
// microseconds, tens of them on a virtual machine, and a call that finds
// the main thread asleep pays two wake-ups, the main thread's and its
// caller's, as a call to a goroutine locked to its thread that parks does;
// a call made while the loop polls, whose caller polls for the outcome,
// pays none. On a 2-CPU virtual machine, BenchmarkMainThreadCall in the
// module's benchmarks measures about 0.7µs a call so (1.4µs of CPU time,
// both sides polling), against 10 to 35µs for a goroutine locked to its
// thread that parks for its next call and 2µs for one that spins for it;
// back-to-back calls from one goroutine, as a renderer makes, stay on that
// path.
//
// Who burns CPU time, and when:
//   - the main thread polls, after a frame, for up to d, while polling pays:
//     a poll that sees work come keeps it polling; polls in vain, or frames
//     whose callers had to wait, halve its polls and soon stop them, to be
//     tried again after a number of frames that doubles each time, up to
//     1024. An idle program, or one whose CPUs other programs keep busy,
//     so polls rarely.
//   - a caller polls for up to d per call, only while the main thread
//     polls after its frames; a caller that found it asleep first hands
//     its processor to the main thread, as a park would (its post queued
//     the main goroutine there). At most GOMAXPROCS-1 callers poll at
//     once; the others park.
//   - nobody polls when GOMAXPROCS or the number of CPUs is 1 (a poll would
//     keep the other side from running until it ended), nor in a js/wasm
//     page, and a call then costs what one to a locked goroutine that parks
//     costs.
func WithSpin(d time.Duration) Option {
	if d < 0 {
		panic(fmt.Sprintf("mainthread: WithSpin(%v): duration must not be negative", d))
	}
	return optionFunc(func(o *options) { o.spin = d })
}

var (
	// running is set by the first Run, for good; served once it returned.
	running, served atomic.Bool
	// spinFor is the spin of the running Run, in nanoseconds.
	spinFor atomic.Int64
	// loop is what Run's loop does (loopOff, loopBusy, loopPolling or
	// loopAsleep), set by the loop alone, for callers: whether they may be
	// the main goroutine.
	loop atomic.Uint32
)

// The states of Run's loop.
const (
	loopOff     uint32 = iota // Run does not serve the main thread
	loopBusy                  // it runs a frame, or decides what to do after one
	loopPolling               // it polls for work between frames
	loopAsleep                // it sleeps until woken or its next frame is due
)

// Run serves the main thread until app returns. Call it from main; it runs
// app on a new goroutine and uses the main goroutine to run the main loom
// frame by frame, as work arrives: functions posted (by Call, CallValue,
// taskqueue.RunSyncOnMainThread and RunAsyncOnMainThread, or to Loom()) at
// once, timers when they fall due, coroutines at the frame interval. It
// never runs empty frames in a busy loop: between frames it polls briefly
// (WithSpin), then sleeps until woken.
//
// When app returns, Run closes the main loom: functions already posted run,
// timers end with loom.ErrClosed, later calls get an error matching
// taskqueue.ErrClosed. Then Run returns. Run panics if called off the main
// goroutine, or a second time, while it serves or after: the main loop
// serves once per process.
func Run(app func(), opts ...Option) {
	if knownThreads && !IsMain() {
		panic("mainthread: Run called off the main goroutine")
	}
	if !running.CompareAndSwap(false, true) {
		if served.Load() {
			panic("mainthread: Run called again: the main loop it served has stopped for good, and its loom is closed")
		}
		panic("mainthread: Run called while Run serves the main thread: it serves once per process")
	}
	defer served.Store(true)
	o := options{frameInterval: time.Second / 60, spin: defaultSpin}
	for _, opt := range opts {
		opt.apply(&o)
	}
	spinFor.Store(int64(o.spin))
	defer spinFor.Store(0)
	defer loop.Store(loopOff)

	done := make(chan struct{})
	go func() {
		defer close(done)
		app()
	}()
	l := mainLoom
	var timer *time.Timer
	pl := newPoller(o.spin, &spinSlots)
	defer pl.stop()
	for frame := 1; ; frame++ {
		loop.Store(loopBusy)
		frameCalls.Store(0)
		l.Update()
		select {
		case <-done:
			l.Close()
			return
		default:
		}
		if frame%256 == 0 {
			// GOMAXPROCS may change. Reading it takes a lock of the
			// scheduler: not once per frame.
			pl.procs()
		}
		idle := l.Idle()
		if idle.Now {
			continue
		}
		if d := pl.next(frameCalls.Load()); d > 0 {
			came := poll(idle.Wake, done, d)
			pl.polled(came)
			if came {
				continue
			}
		}
		var tick <-chan time.Time
		if d, ok := nextFrame(idle, o.frameInterval); ok {
			if d <= 0 {
				continue
			}
			if timer == nil {
				timer = time.NewTimer(d)
				defer timer.Stop()
			} else {
				timer.Reset(d)
			}
			tick = timer.C
		}
		loop.Store(loopAsleep)
		loopSleeps.Add(1)
		select {
		case <-idle.Wake:
		case <-tick:
		case <-done:
		}
	}
}

// nextFrame returns how long the loop may sleep before the next frame, or
// false if it may sleep until woken.
func nextFrame(idle loom.Idle, interval time.Duration) (time.Duration, bool) {
	switch {
	case idle.Frames && idle.Timed:
		return min(interval, idle.Delay), true
	case idle.Frames:
		return interval, true
	case idle.Timed:
		return idle.Delay, true
	}
	return 0, false
}
