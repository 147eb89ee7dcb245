package loom

import (
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
// Posting works from any goroutine and never blocks. Update, Close and the
// coroutine methods that act at once belong to the Loom's owner: the
// goroutine that calls Update (or New, with OwnedByCaller). The zero Loom is
// not usable; call New. A Loom must not be copied.
//
// A function posted before a frame begins happens before it runs in that
// frame; the frame's actions run in the order they were posted.
type Loom struct {
	epoch  time.Time            // loom time zero
	manual bool                 // the clock moves only with UpdateDelta (ManualClock)
	owner  *scheduler.Scheduler // a single slot, held for good by the owner (see bind)

	mu       sync.Mutex // guards the fields below
	cfg      config
	posted   []action          // posted since the last frame began
	delayed  delayHeap[*Timer] // keyed by unscaled loom time
	stale    int               // entries of delayed left by stopped or rescheduled timers
	seq      uint64            // orders delayed actions and waits that fall due together
	closed   bool
	clock    int64                // unscaled loom time of the latest frame, in ns
	signaled bool                 // a wake-up went out for posts no frame has taken yet
	wakeCh   chan struct{}        // made by Wake
	bg       *scheduler.Scheduler // the background runner, made by the first RunAsync

	updating atomic.Bool // a frame is running
	frame    atomic.Int64
	unscaled atomic.Int64  // unscaled time of the current frame, ns
	scaled   atomic.Int64  // scaled time of the current frame, ns
	delta    atomic.Int64  // scaled time since the previous frame, ns
	udelta   atomic.Int64  // unscaled time since the previous frame, ns
	scale    atomic.Uint64 // the time scale, as float64 bits

	// Owned by the goroutine that runs frames:
	batch []action // the actions of the current frame, and those carried over
	next  int      // index in batch of the first action not yet run
}

// New returns a Loom configured by opts. Its clock starts now.
func New(opts ...Option) *Loom {
	l := &Loom{
		epoch: time.Now(),
		owner: scheduler.New(1),
		cfg:   defaultConfig(),
	}
	l.scale.Store(math.Float64bits(1))
	for _, o := range opts {
		o.apply(&l.cfg)
	}
	l.manual = l.cfg.manual
	if l.cfg.ownedByNew {
		l.bind()
	}
	return l
}

// Configure applies opts to l. It is safe to call at any time from any
// goroutine; the options take effect from the next frame (the wake function,
// from the next post). Configure panics if it is given WithBackgroundLimit
// after the first RunAsync.
func (l *Loom) Configure(opts ...Option) {
	l.mu.Lock()
	defer l.mu.Unlock()
	bgLimit := l.cfg.bgLimit
	for _, o := range opts {
		o.apply(&l.cfg)
	}
	if l.bg != nil && l.cfg.bgLimit != bgLimit {
		l.cfg.bgLimit = bgLimit
		panic("loom: WithBackgroundLimit given to Configure after the first RunAsync")
	}
}

// bind makes the calling goroutine the owner of l, reporting whether it is.
//
// Go has no cheap goroutine identity, but a scheduler keeps one for its slot
// holders (see scheduler.Holds). The owner takes the only slot of a one-slot
// scheduler and never gives it back, so "does the caller hold it" is the
// owner test.
func (l *Loom) bind() bool {
	return l.owner.Holds() || l.owner.TryAcquire()
}

// OnLoop reports whether the calling goroutine is l's owner: the goroutine
// that runs its frames. It costs a lock and no allocation.
func (l *Loom) OnLoop() bool {
	return l.owner.Holds()
}

// Post queues f to run in the next frame, after the actions posted before it.
// It never blocks and costs no allocation once the queue has grown; the first
// post after a frame begins wakes a sleeping loop (see WithWakeFunc and Wake).
// An action posted during a frame runs in the next one. Post returns
// ErrClosed if l is closed.
func (l *Loom) Post(f func()) error {
	if f == nil {
		panic("loom: Post(nil)")
	}
	return l.post(action{f: f})
}

func (l *Loom) post(a action) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.posted = append(l.posted, a)
	wake := l.wakeLocked()
	l.mu.Unlock()
	wake.send()
	return nil
}

// wakeup is a wake-up to send once the lock is released.
type wakeup struct {
	ch chan struct{}
	f  func()
}

func (w wakeup) send() {
	if w.ch != nil {
		select {
		case w.ch <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
	if w.f != nil {
		w.f()
	}
}

// wakeLocked returns the wake-up to send for new work, or none if one went
// out since the last frame began: one wake-up per batch.
func (l *Loom) wakeLocked() wakeup {
	if l.signaled {
		return wakeup{}
	}
	l.signaled = true
	return wakeup{ch: l.wakeCh, f: l.cfg.wake}
}

// Wake returns a channel that receives a value when work arrives for l, at
// most once per batch of posts (see WithWakeFunc). A loop that sleeps
// between frames selects on it. The channel is made by the first call.
func (l *Loom) Wake() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wakeCh == nil {
		l.wakeCh = make(chan struct{}, 1)
		if l.signaled {
			l.wakeCh <- struct{}{}
		}
	}
	return l.wakeCh
}

// Update runs one frame, its time read from the real clock (time.Now, which
// testing/synctest fakes). In order, it runs: the actions posted before the
// frame began (and those carried over from a frame that ran out of budget),
// in the order they were posted; the delayed actions due at the frame's
// time, in due order and, when due together, in the order they were posted;
// Callbacks run with no lock held. A panic in one is
// recovered and given to the panic handler, and the frame goes on.
//
// A frame that runs out of budget (see WithBudget) leaves the rest to the
// next frame, which runs it first: the remaining actions, then the delayed
// actions due, then the new actions.
//
// The first goroutine to call Update becomes l's owner, unless New was given
// OwnedByCaller; Update panics when called from another goroutine, from two
// at once, or from inside a frame. After Close, Update does nothing.
func (l *Loom) Update() {
	if l.manual {
		panic("loom: Update called on a loom with a manual clock; use UpdateDelta")
	}
	l.update(0)
}

// UpdateDelta is Update for a loom made with ManualClock, whose game drives
// the clock: the frame's time is the previous frame's plus dt. UpdateDelta
// panics if dt < 0, or if l reads the real clock.
func (l *Loom) UpdateDelta(dt time.Duration) {
	if !l.manual {
		panic("loom: UpdateDelta called on a loom with the real clock; make it with ManualClock")
	}
	if dt < 0 {
		panic("loom: UpdateDelta(" + dt.String() + "): negative delta")
	}
	l.update(dt)
}

func (l *Loom) update(dt time.Duration) {
	l.enter()
	defer l.updating.Store(false)
	start := time.Now()

	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	now := l.clock + int64(dt)
	if !l.manual {
		now = int64(start.Sub(l.epoch))
	}
	l.clock = now
	cfg := l.cfg
	carried := l.takePostedLocked()
	lastSeq := l.seq // delayed actions posted from now on wait for the next frame
	delayed := l.delayed.len() > 0
	l.signaled = false
	l.mu.Unlock()

	l.advanceTime(now)
	b := budget{cfg: cfg, start: start}
	if carried == 0 {
		l.runActions(&b, -1, cfg.onPanic)
		if delayed {
			l.runDelayed(&b, now, lastSeq, cfg.onPanic)
		}
	} else if l.runActions(&b, carried, cfg.onPanic) {
		// Work left by a frame that ran out of budget goes first: its
		// actions, then the delayed actions that were due, then new work.
		if delayed {
			l.runDelayed(&b, now, lastSeq, cfg.onPanic)
		}
		l.runActions(&b, -1, cfg.onPanic)
	}
}

// enter checks that the calling goroutine may run a frame and marks one as
// running.
func (l *Loom) enter() {
	if !l.updating.CompareAndSwap(false, true) {
		if l.owner.Holds() {
			panic("loom: Update called from inside a frame")
		}
		panic("loom: Update called concurrently from two goroutines")
	}
	if !l.bind() {
		l.updating.Store(false)
		panic("loom: Update called from a goroutine other than the loom's owner")
	}
}

// advanceTime moves the frame clocks to now (unscaled, ns).
func (l *Loom) advanceTime(now int64) {
	d := now - l.unscaled.Load()
	scaled := int64(float64(d) * l.TimeScale())
	l.frame.Add(1)
	l.unscaled.Store(now)
	l.udelta.Store(d)
	l.delta.Store(scaled)
	l.scaled.Add(scaled)
}

// takePostedLocked appends the posted actions to the frame's batch, after
// those carried over, and returns how many were carried over. With nothing
// carried over, the two buffers swap, so a steady frame copies and allocates
// nothing.
func (l *Loom) takePostedLocked() (carried int) {
	if l.next == len(l.batch) {
		l.batch, l.posted = l.posted, l.batch[:0]
		l.next = 0
		return 0
	}
	n := copy(l.batch, l.batch[l.next:])
	clear(l.batch[n:])
	l.batch = append(l.batch[:n], l.posted...)
	clear(l.posted)
	l.posted = l.posted[:0]
	l.next = 0
	return n
}

// budget counts the work of a frame against WithBudget.
type budget struct {
	cfg   config
	start time.Time
	ran   int
}

// spent reports whether the frame may run no more actions.
func (b *budget) spent() bool {
	if b.cfg.maxActions > 0 && b.ran >= b.cfg.maxActions {
		return true
	}
	return b.cfg.maxTime > 0 && time.Since(b.start) >= b.cfg.maxTime
}

// runActions runs up to n actions of the batch (all of them if n < 0) within
// the budget, and reports whether it ran all it was asked to.
func (l *Loom) runActions(b *budget, n int, onPanic func(*PanicError)) bool {
	end := len(l.batch)
	if n >= 0 {
		end = l.next + n
	}
	for l.next < end {
		if b.spent() {
			return false
		}
		a := l.batch[l.next]
		l.batch[l.next] = action{} // let the closure go
		l.next++
		if a.scope != nil && a.scope.closed.Load() {
			continue
		}
		b.ran++
		call(a.f, onPanic)
	}
	if l.next == len(l.batch) {
		l.batch, l.next = l.batch[:0], 0
	}
	return true
}

// runDelayed runs the delayed actions due at now that were scheduled before
// the frame began (sequence numbers up to lastSeq).
func (l *Loom) runDelayed(b *budget, now int64, lastSeq uint64, onPanic func(*PanicError)) {
	for !b.spent() {
		l.mu.Lock()
		e := l.topLocked()
		if e == nil || e.due > now || e.seq > lastSeq {
			l.mu.Unlock()
			return
		}
		t := l.delayed.pop()
		t.seq = 0
		t.leaveScopeLocked()
		f := t.f
		l.mu.Unlock()
		b.ran++
		call(f, onPanic)
	}
}

// HandlePanic gives p to l's panic handler (see WithPanicHandler). It is for
// code built on a Loom that recovers panics itself and must report one that
// nobody else will see, as package mainthread does for a call whose caller
// stopped waiting.
func (l *Loom) HandlePanic(p *PanicError) {
	l.mu.Lock()
	h := l.cfg.onPanic
	l.mu.Unlock()
	h(p)
}

// call runs f, giving a panic to onPanic.
func call(f func(), onPanic func(*PanicError)) {
	defer func() {
		if v := recover(); v != nil {
			onPanic(scheduler.NewPanicError(v))
		}
	}()
	f()
}

// now returns l's clock: the real clock, or the clock that UpdateDelta drives.
func (l *Loom) nowLocked() int64 {
	if l.manual {
		return l.clock
	}
	return int64(time.Since(l.epoch))
}

// Now returns the current instant on l's clock: the real time, or, for a
// loom made with ManualClock, the time of the latest frame (the time at New
// plus the deltas so far). Delays count from it.
func (l *Loom) Now() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch.Add(time.Duration(l.nowLocked()))
}

// Frame returns the number of frames run so far; during a frame, that frame's
// number, counting from 1.
func (l *Loom) Frame() int64 { return l.frame.Load() }

// Time returns the scaled time of the current frame: the sum of the frames'
// deltas, each multiplied by the time scale in force (Unity's Time.time).
func (l *Loom) Time() time.Duration { return time.Duration(l.scaled.Load()) }

// UnscaledTime returns the time of the current frame since New, unaffected
// by the time scale (Unity's Time.unscaledTime).
func (l *Loom) UnscaledTime() time.Duration { return time.Duration(l.unscaled.Load()) }

// DeltaTime returns the scaled time between the previous frame and the
// current one (Unity's Time.deltaTime).
func (l *Loom) DeltaTime() time.Duration { return time.Duration(l.delta.Load()) }

// UnscaledDeltaTime returns the time between the previous frame and the
// current one, unaffected by the time scale.
func (l *Loom) UnscaledDeltaTime() time.Duration { return time.Duration(l.udelta.Load()) }

// TimeScale returns the rate at which scaled time passes: 1 by default, 0
// when paused.
func (l *Loom) TimeScale() float64 { return math.Float64frombits(l.scale.Load()) }

// SetTimeScale sets the rate at which scaled time passes from the next frame
// on: 0 pauses it, and with it the coroutines waiting with WaitForSeconds.
// Delayed actions and WaitForSecondsRealtime use unscaled time and go on.
// SetTimeScale panics if s is negative, infinite or NaN.
func (l *Loom) SetTimeScale(s float64) {
	if s < 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		panic("loom: SetTimeScale: the scale must be a finite number >= 0")
	}
	l.scale.Store(math.Float64bits(s))
}

// Close ends l: from then on posts return ErrClosed and Update does nothing.
// Close runs the actions already posted (so that nobody waits for them in
// vain), completes pending timers with ErrClosed and closes the background
// runner, whose queued functions still
// run (see WaitBackground). Close must be called by l's owner, outside a
// frame; it panics otherwise. It is idempotent.
func (l *Loom) Close() {
	if l.updating.Load() && l.owner.Holds() {
		panic("loom: Close called from inside a frame")
	}
	if !l.bind() {
		panic("loom: Close called from a goroutine other than the loom's owner")
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	cfg := l.cfg
	l.takePostedLocked()
	for l.delayed.len() > 0 {
		if e := l.delayed.top(); live(e) {
			e.v.seq, e.v.err = 0, ErrClosed
			e.v.leaveScopeLocked()
		}
		l.delayed.pop()
	}
	l.stale = 0
	bg := l.bg
	l.mu.Unlock()

	var b budget // no limits: everything posted runs now
	l.runActions(&b, -1, cfg.onPanic)
	if bg != nil {
		bg.Close()
	}
}
