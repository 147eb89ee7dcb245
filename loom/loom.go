package loom

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// ErrClosed is returned for work posted to a closed Loom or Scope, and is the
// error of timers and coroutines that Close ended.
var ErrClosed = errors.New("loom: closed")

// PanicError is a panic recovered from an action, a coroutine or a
// background function, with the stack of the goroutine that panicked. It is
// the same type as scheduler.PanicError.
type PanicError = scheduler.PanicError

// An action is a function posted to run in a frame.
type action struct {
	f     func()
	scope *Scope // nil for the Loom's own actions
}

// A Loom runs posted actions, delayed actions and coroutines once per frame,
// on the goroutine that calls Update: the process's main thread (see package
// mainthread), or a render goroutine locked to its own OS thread.
//
// Posting, starting and stopping coroutines work from any goroutine and
// never block, and never run the program's code on the caller. Update,
// UpdateDelta, EndFrame and Close are the loop's calls: made by the goroutine
// that drives the loom, one at a time. The zero Loom is not usable: its
// methods panic, but for those that read its clocks (Frame, Time and the
// like), which report zeros, TimeScale's too (a made Loom's starts at 1);
// make one with New. A Loom must not be copied.
//
// A function posted before a frame begins happens before it runs in that
// frame; the frame's actions run in the order they were posted.
//
// Built for js/wasm, a loom is driven by the page's animation frames: a
// requestAnimationFrame callback (through syscall/js) calls Update, or
// UpdateDelta with the frame's timestamp on a loom made with ManualClock,
// and asks for the next frame. Posts from goroutines land as elsewhere,
// since every goroutine of a page runs on its one thread; a goroutine that
// computes without pausing holds back the frames (the module's web example
// shows such a page).
type Loom struct {
	epoch  time.Time // loom time zero
	manual bool      // the clock moves only with UpdateDelta (ManualClock)
	made   bool      // set by New: the zero Loom is not usable

	mu           sync.Mutex // guards the fields below
	cfg          config
	posted       []action // posted since the last frame began
	timers       timers   // PostAfter's, keyed by unscaled loom time
	scaledTimers timers   // PostAfterScaled's, keyed by scaled loom time
	seq          uint64   // orders delayed actions and waits that fall due together
	closed       bool
	clock        int64                // unscaled loom time of the latest frame, in ns
	signaled     bool                 // a wake-up went out for work that no frame or Idle call has seen yet
	wakeCh       chan struct{}        // made by Wake
	bg           *scheduler.Scheduler // the background runner, made by the first RunAsync
	incoming     []*Coroutine         // coroutines started and not begun
	stopping     []*Coroutine         // coroutines stopped, to end on the loop
	closing      []*Scope             // scopes closed, whose coroutines end on the loop
	closeAtExit  bool                 // Close was called during a loop call, which closes l as it ends

	updating atomic.Bool // a loop call (a frame, EndFrame, Close) runs
	requests atomic.Bool // starts or stops wait for the loop (see applyRequests)
	posts    postCount   // actions posted so far
	frame    atomic.Int64
	unscaled atomic.Int64  // unscaled time of the current frame, ns
	scaled   atomic.Int64  // scaled time of the current frame, ns
	delta    atomic.Int64  // scaled time since the previous frame, ns
	udelta   atomic.Int64  // unscaled time since the previous frame, ns
	scale    atomic.Uint64 // the time scale, as float64 bits
	// stopFloor is the highest coroutine ID that StopAllCoroutines stops:
	// the coroutines up to it end. It only grows, written under mu.
	stopFloor atomic.Uint64

	// Owned by the goroutine that runs frames:
	batch      []action // the actions of the current frame, and those carried over
	next       int      // index in batch of the first action not yet run
	taken      uint64   // actions taken from batch so far, run or skipped
	peak       int      // about the most actions a recent frame had to run (halves each frame)
	fixedAcc   int64    // scaled time fed to the fixed steps and not used yet, ns
	endedFrame int64    // the last frame whose end phase ran
	stoppedTo  uint64   // the stopFloor up to which the live coroutines were stopped
	cuts       []cut    // the delayed actions left by frames that ran out of budget, oldest first
	co         coroutines
}

// New returns a Loom configured by opts. Its clock starts now.
func New(opts ...Option) *Loom {
	l := &Loom{
		epoch:      time.Now(),
		cfg:        defaultConfig(),
		endedFrame: -1, // frame 0, before the first Update, has an end phase too
	}
	l.posts.mu = &l.mu
	l.scale.Store(math.Float64bits(1))
	for _, o := range opts {
		o.apply(&l.cfg)
	}
	l.cfg.settle()
	l.manual = l.cfg.manual
	l.made = true
	return l
}

// mustBeMade panics if l is the zero Loom, with a message saying how to make
// one, rather than a nil dereference deep inside.
func (l *Loom) mustBeMade() {
	if !l.made {
		panic("loom: use of a zero Loom; make one with New")
	}
}

// mustCtx panics, naming call, if ctx is nil, even when the call would not
// have needed to wait, so that the misuse shows at once.
func mustCtx(call string, ctx context.Context) {
	if ctx == nil {
		panic("loom: " + call + " with a nil context")
	}
}

// name returns the name given with WithName, for the Source of panics.
func (l *Loom) name() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cfg.name
}

// Configure applies opts to l. It is safe to call at any time from any
// goroutine; the options take effect from the next frame (the wake function,
// from the next post). Configure panics if it is given WithBackgroundLimit
// after the first RunAsync.
func (l *Loom) Configure(opts ...Option) {
	l.mustBeMade()
	l.mu.Lock()
	defer l.mu.Unlock()
	bgLimit := l.cfg.bgLimit
	for _, o := range opts {
		o.apply(&l.cfg)
	}
	l.cfg.settle()
	if l.bg != nil && l.cfg.bgLimit != bgLimit {
		l.cfg.bgLimit = bgLimit
		panic("loom: WithBackgroundLimit given to Configure after the first RunAsync")
	}
}

// Post queues f to run in the next frame, after the actions posted before it.
// It never blocks and costs no allocation once the queue has grown
// (TestSteadyFrameAllocatesNothing); the first post after a frame begins,
// or after the loop calls Idle, wakes a sleeping loop (see WithWakeFunc and
// Idle). An action posted during
// a frame runs in the next one. Post returns ErrClosed if l is closed.
func (l *Loom) Post(f func()) error {
	if f == nil {
		panic("loom: Post(nil)")
	}
	return l.post(action{f: f})
}

func (l *Loom) post(a action) error {
	l.mustBeMade()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.posted = append(l.posted, a)
	l.posts.n++
	if l.signaled {
		// A wake-up went out for this batch: the post costs the lock alone.
		l.mu.Unlock()
		return nil
	}
	wake := l.wakeLocked()
	l.mu.Unlock()
	wake.send()
	return nil
}

// postCount is the number of actions posted to a loom so far, counted under
// the loom's lock by the post that queues the action, so that a post pays no
// atomic operation of its own for it. The loop reads it with Load when a
// coroutine's wait on a Waitable is seen over (see postsRan), which takes
// the lock: once per such wait, rather than once per post.
type postCount struct {
	mu *sync.Mutex // the loom's, set by New
	n  uint64      // under *mu
}

// Load returns the number of actions posted so far.
func (c *postCount) Load() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// wakeup is a wake-up to send once the lock is released.
type wakeup struct {
	ch      chan struct{}
	f       func()
	onPanic func(*PanicError)
}

func (w wakeup) send() {
	if w.ch != nil {
		select {
		case w.ch <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
	if w.f != nil {
		call(w.f, w.onPanic) // on the poster's goroutine, which must not see it
	}
}

// wakeLocked returns the wake-up to send for new work, or none if one went
// out since the last frame began or Idle was last called: one wake-up per
// batch.
func (l *Loom) wakeLocked() wakeup {
	if l.signaled {
		return wakeup{}
	}
	l.signaled = true
	return wakeup{ch: l.wakeCh, f: l.cfg.wake, onPanic: l.cfg.onPanic}
}

// wakeChLocked returns Idle's Wake channel, made by the first call.
func (l *Loom) wakeChLocked() <-chan struct{} {
	if l.wakeCh == nil {
		l.wakeCh = make(chan struct{}, 1)
		if l.signaled {
			l.wakeCh <- struct{}{}
		}
	}
	return l.wakeCh
}

// Close ends l: from then on posts return ErrClosed and Update does nothing.
// Close runs the actions already posted (so that nobody waits for them in
// vain), completes pending timers with ErrClosed, stops every coroutine with
// ErrClosed (their defers run; those not begun never run) and closes the
// background runner, whose queued functions still run (see WaitBackground).
// It is idempotent.
//
// Close is a loop call. Called during a frame (from an action or a
// coroutine, or from another goroutine while the frame runs), it takes
// effect when the frame ends, the frame's own work done; posts fail from the
// moment it is called either way. Called between frames, it closes l at once,
// on the caller, which must then be the loop's goroutine if that goroutine
// is locked to its OS thread: the coroutines it created can only be stopped
// there.
func (l *Loom) Close() {
	l.mustBeMade()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	if l.updating.Load() {
		l.closeAtExit = true // the running loop call closes l as it ends
		l.mu.Unlock()
		return
	}
	l.updating.Store(true) // no frame may start while l closes
	l.mu.Unlock()
	l.closeNow()
	l.updating.Store(false)
}

// closeNow does the work of Close, with no loop call running but this one.
func (l *Loom) closeNow() {
	l.mu.Lock()
	cfg := l.cfg
	l.takePostedLocked()
	queued := l.incoming
	l.incoming, l.stopping, l.closing = nil, nil, nil
	l.requests.Store(false)
	l.timers.closeAll()
	l.scaledTimers.closeAll()
	bg := l.bg
	l.mu.Unlock()

	l.runActions(&budget{}, cfg.onPanic) // no limits: everything posted runs now
	for _, c := range queued {
		if !c.isDone() {
			l.end(c, ErrClosed)
		}
	}
	l.stopAllNow(ErrClosed)
	if bg != nil {
		bg.Close()
	}
}

// isClosed reports whether Close was called.
func (l *Loom) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}
