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

// WithSpin sets how long the main thread spins after a frame before it parks,
// and how long callers of taskqueue.RunSyncOnMainThread spin for their
// result while it does: 50µs by default. Waking a parked thread costs
// microseconds; a spinning one sees new work within a fraction of one.
// Spinning trades CPU time for latency: a round trip through a
// spinning loop takes about a microsecond, through a parked one tens (see
// BenchmarkRunSyncOnMainThread, which reports both, with the CPU time each call costs).
// WithSpin(0) turns spinning off. WithSpin panics if d < 0.
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
	// loopSpinning is true while Run spins for work, so callers know that
	// spinning for their result is worth it.
	loopSpinning atomic.Bool
	// loopAsleep is true while Run sleeps until it is woken or its next
	// frame is due.
	loopAsleep atomic.Bool
)

// Run serves the main thread until app returns. Call it from main; it runs
// app on a new goroutine and uses the main goroutine to run the main loom
// frame by frame, as work arrives: functions posted (by
// taskqueue.RunSyncOnMainThread and RunAsyncOnMainThread, or to Loom()) at
// once, timers when they fall due, coroutines at the frame interval. It never runs empty
// frames in a busy loop: between frames it spins briefly (WithSpin), then
// sleeps until woken.
//
// When app returns, Run closes the main loom: functions already posted run,
// timers end with loom.ErrClosed, later calls get taskqueue.ErrClosed. Then Run
// returns. Run panics if called off the main goroutine, or a second time,
// while it serves or after: the main loop serves once per process.
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

	done := make(chan struct{})
	go func() {
		defer close(done)
		app()
	}()
	l := mainLoom
	var timer *time.Timer
	for {
		l.Update()
		select {
		case <-done:
			l.Close()
			return
		default:
		}
		idle := l.Idle()
		if idle.Now || (o.spin > 0 && spin(idle.Wake, done, o.spin)) {
			continue
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
		loopAsleep.Store(true)
		select {
		case <-idle.Wake:
		case <-tick:
		case <-done:
		}
		loopAsleep.Store(false)
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

// spin watches for work for up to d, reporting whether some arrived.
func spin(wake <-chan struct{}, done <-chan struct{}, d time.Duration) bool {
	loopSpinning.Store(true)
	defer loopSpinning.Store(false)
	start := time.Now()
	for i := 1; ; i++ {
		// A receive on one channel, with a default, reads an empty channel
		// without taking its lock; a select of two channels would take both
		// locks on every turn, and a poster's wake-up would wait for them.
		select {
		case <-wake:
			return true
		default:
		}
		if i%64 == 0 {
			select {
			case <-done:
				return true
			default:
			}
			if time.Since(start) > d {
				return false
			}
		}
	}
}
