package loom

import (
	"context"
	"runtime/trace"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/panics"
)

// Update runs one frame, its time read from the real clock (time.Now, which
// testing/synctest fakes). In order, it runs: the end phase of the previous
// frame, if the loop did not call EndFrame; the fixed steps (see
// WithFixedStep); the actions posted before the frame began (and those
// carried over from a frame that ran out of budget), in the order they were
// posted; the delayed actions due at the frame's time, in due order and,
// when due together, in the order they were posted (those due on unscaled
// time, then those due on scaled time); then the coroutine pass. Callbacks
// run with no lock held. A panic in one is recovered and given to the panic
// handler, and the frame goes on. With runtime/trace on, the frame is a
// region named "loom frame", followed by the loom's name if it has one (see
// WithName).
//
// The coroutine pass first applies the stops and starts asked since the
// last pass and stops the coroutines whose context is done (see
// StartCoroutineContext), then resumes the coroutines waiting for the next
// frame (in yield order), for a frame count, scaled time and real time (each
// in due order), then those whose polled wait is over (in yield order). A
// coroutine resumes at most once in a pass; the fixed steps and the end
// phase may resume it besides. Only polled waits (see Instruction), and the
// contexts of StartCoroutineContext, cost anything in frames where they do
// not resume; the others wait in heaps and lists.
//
// A frame that runs out of budget (see WithBudget) leaves the rest of each
// phase to the next frame, in order, ahead of newer work: the delayed
// actions it leaves, on either clock, run before any scheduled after it
// began.
//
// Update, UpdateDelta, EndFrame and Close are the loop's calls, made by the
// goroutine that drives l (on a goroutine locked to its OS thread, the same
// one every time: the coroutines it creates can only be resumed there). One
// runs at a time: Update panics when called while a frame runs, from inside
// it or from another goroutine. After Close, Update does nothing.
func (l *Loom) Update() {
	l.mustBeMade()
	if l.manual {
		panic("loom: Update called on a loom with a manual clock; use UpdateDelta")
	}
	l.update("Update", 0)
}

// UpdateDelta is Update for a loom made with ManualClock, whose game drives
// the clock: the frame's time is the previous frame's plus dt, or the end of
// the clock's range (math.MaxInt64 nanoseconds) if that is past it. UpdateDelta
// panics if dt < 0, or if l reads the real clock.
func (l *Loom) UpdateDelta(dt time.Duration) {
	l.mustBeMade()
	if !l.manual {
		panic("loom: UpdateDelta called on a loom with the real clock; make it with ManualClock")
	}
	if dt < 0 {
		panic("loom: UpdateDelta(" + dt.String() + "): negative delta")
	}
	l.update("UpdateDelta", dt)
}

// update runs a frame for the loop call named by name, Update or
// UpdateDelta.
func (l *Loom) update(name string, dt time.Duration) {
	if !l.enter(name) {
		return
	}
	defer l.exit()
	start := time.Now()

	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	now := after(l.clock, int64(dt))
	if !l.manual {
		now = int64(start.Sub(l.epoch))
	}
	l.clock = now
	cfg := l.cfg
	l.takePostedLocked()
	lastSeq := l.seq // delayed actions posted from now on wait for the next frame
	delayed := l.timers.wheel.Len() > 0 || l.scaledTimers.wheel.Len() > 0
	l.signaled = false
	l.mu.Unlock()

	if trace.IsEnabled() {
		defer trace.StartRegion(context.Background(), cfg.region).End()
	}
	l.endOfFrame() // the previous frame's, if the loop did not call EndFrame
	l.advanceTime(now)
	steps := l.fixedSteps(&cfg)
	// Each phase has its own budget, so that a flood of posts cannot starve
	// the timers, nor a flood of timers the posts.
	actions := budget{cfg: cfg, start: start}
	l.runActions(&actions, cfg.onPanic)
	timers := budget{cfg: cfg, start: start}
	if delayed {
		l.runDelayed(&timers, now, lastSeq, cfg.onPanic)
	} else {
		l.cuts = l.cuts[:0] // no delayed action is left of them
	}
	l.runCoroutines()

	if cfg.observe == nil {
		return // no FrameStats to make: a frame costs no second clock reading, nor the lock for Pending
	}
	fs := FrameStats{
		Frame:       l.Frame(),
		FixedSteps:  steps,
		Duration:    time.Since(start),
		Actions:     actions.ran,
		Delayed:     timers.ran,
		CarriedOver: len(l.batch) - l.next,
		Coroutines:  len(l.co.live),
	}
	l.mu.Lock()
	fs.Pending = l.timers.pending() + l.scaledTimers.pending()
	l.mu.Unlock()
	call(func() { cfg.observe(fs) }, cfg.onPanic)
}

// FrameStats describes one frame of a loom, as WithFrameObserver reports
// it.
type FrameStats struct {
	Frame       int64         // the frame's number (Loom.Frame)
	FixedSteps  int           // fixed steps run (see WithFixedStep)
	Duration    time.Duration // how long the frame's work took
	Actions     int           // posted actions run
	Delayed     int           // delayed actions run
	CarriedOver int           // posted actions left for the next frame by the budget
	Coroutines  int           // coroutines alive at the frame's end
	Pending     int           // delayed actions waiting at the frame's end
}

// enter marks a loop call, named call, as running, reporting false if l is
// closed; it panics if another runs.
func (l *Loom) enter(call string) bool {
	l.mustBeMade()
	if !l.updating.CompareAndSwap(false, true) {
		if l.isClosed() {
			return false // Close runs, or closes at the end of the frame
		}
		panic("loom: " + call + " called while a frame runs: from inside the frame, or from two goroutines at once")
	}
	return true
}

// exit ends a loop call, closing l if Close was called during it.
func (l *Loom) exit() {
	l.mu.Lock()
	closing := l.closeAtExit
	l.closeAtExit = false
	if !closing {
		l.updating.Store(false)
	}
	l.mu.Unlock()
	if closing {
		l.closeNow()
		l.updating.Store(false)
	}
}

// advanceTime moves the frame clocks to now (unscaled, ns). Scaled time, as
// the unscaled clock, stops at the end of its range rather than wrap, and
// each delta is what its clock moved.
func (l *Loom) advanceTime(now int64) {
	d := now - l.unscaled.Load()
	ds := d // at the default scale, exact: a float64 holds 53 bits
	if scale := l.TimeScale(); scale != 1 {
		ds = clamp(float64(d) * scale)
	}
	before := l.scaled.Load()
	scaled := after(before, ds)
	l.frame.Add(1)
	l.unscaled.Store(now)
	l.udelta.Store(d)
	l.delta.Store(scaled - before)
	l.scaled.Store(scaled)
}

// takePostedLocked appends the posted actions to the frame's batch, after
// those carried over. With nothing carried over, the two buffers swap, so a
// steady frame copies and allocates nothing. With actions carried over, the
// new ones are appended and the batch is compacted only once the actions
// already run fill half of it, a copy that those actions pay for: a frame
// costs what it runs and what was posted, never the whole backlog.
func (l *Loom) takePostedLocked() {
	l.peak = max(len(l.posted)+len(l.batch)-l.next, l.peak/2)
	if l.next == len(l.batch) {
		spare := l.batch[:0]
		if oversized(cap(spare), l.peak) {
			spare = nil // a flood has passed: let its buffer go
		}
		l.batch, l.posted = l.posted, spare
		l.next = 0
		return
	}
	if l.next >= len(l.batch)/2 {
		n := copy(l.batch, l.batch[l.next:])
		clear(l.batch[n:]) // the moved actions' old slots
		l.batch, l.next = l.batch[:n], 0
	}
	l.batch = append(l.batch, l.posted...)
	clear(l.posted)
	l.posted = l.posted[:0]
	if oversized(cap(l.posted), l.peak) {
		l.posted = nil
	}
}

// oversized reports whether a buffer of capacity c is worth giving back when
// recent frames needed about peak slots: memory follows the work that is
// live, not the largest flood ever seen, and a steady load keeps its buffer.
func oversized(c, peak int) bool {
	return c > minShrink && c > 4*peak
}

// minShrink is the capacity below which action buffers are kept whatever
// the load.
const minShrink = 1024

// budget counts the work of a frame's phase against WithBudget.
type budget struct {
	cfg   config
	start time.Time // the frame's start
	ran   int
}

// spent reports whether the phase may run no more. A phase always runs at
// least one item, so that no kind of work starves.
func (b *budget) spent() bool {
	if b.ran == 0 {
		return false
	}
	if b.cfg.maxActions > 0 && b.ran >= b.cfg.maxActions {
		return true
	}
	return b.cfg.maxTime > 0 && time.Since(b.start) >= b.cfg.maxTime
}

// runActions runs the actions of the batch in order, within the budget; the
// rest waits for the next frame, ahead of newer posts. A panic in an action
// goes to onPanic and the run goes on with the next one.
func (l *Loom) runActions(b *budget, onPanic func(*PanicError)) {
	start := l.next
	// One recover frame covers the whole run rather than one per action,
	// which a frame of small actions would pay for each: a panic leaves
	// the run, l.next already past the action that panicked, and the run is
	// entered again after its report.
	for {
		p := protect(func() { l.runPosted(b) })
		if p == nil {
			break
		}
		onPanic(p)
	}
	clear(l.batch[start:l.next]) // let the closures go
	if l.next == len(l.batch) {
		l.batch, l.next = l.batch[:0], 0
		if oversized(cap(l.batch), l.peak) {
			l.batch = nil
		}
	}
}

// runPosted runs the actions of the batch from l.next on, within the budget,
// with no recover of its own (see runActions). l.next and l.taken count each
// action as taken before it runs.
func (l *Loom) runPosted(b *budget) {
	limited := b.cfg.maxActions > 0 || b.cfg.maxTime > 0
	for l.next < len(l.batch) {
		if limited && b.spent() {
			return
		}
		a := l.batch[l.next]
		l.next++
		l.taken++
		if a.scope != nil && a.scope.closed.Load() {
			continue
		}
		b.ran++
		a.f()
	}
}

// A cut is what a frame's delayed actions were: those due by the frame's
// unscaled time now and its scaled time scaledNow, scheduled before the
// frame began (sequence numbers up to seq).
type cut struct {
	now, scaledNow int64
	seq            uint64
}

// runDelayed runs the delayed actions due in the frame that were scheduled
// before it began (sequence numbers up to lastSeq): those due on unscaled
// time (now), then those due on scaled time, each in due order. A frame
// whose budget runs out leaves its cut, and the next frame runs what is left
// of it before its own, so that the order holds across frames and both
// clocks: the carried-over actions of a frame, unscaled and scaled, run
// ahead of newer ones.
func (l *Loom) runDelayed(b *budget, now int64, lastSeq uint64, onPanic func(*PanicError)) {
	c := cut{now, l.scaledNow(), lastSeq}
	if k := len(l.cuts); k == 0 || l.cuts[k-1] != c {
		l.cuts = append(l.cuts, c)
	}
	for len(l.cuts) > 0 {
		c := l.cuts[0]
		if !l.runDue(&l.timers, b, c.now, c.seq, onPanic) || !l.runDue(&l.scaledTimers, b, c.scaledNow, c.seq, onPanic) {
			return // out of budget: the cuts left wait for the next frame
		}
		l.cuts = l.cuts[:copy(l.cuts, l.cuts[1:])]
	}
}

// runDue runs the timers of ts due at now, within the budget, and reports
// whether it ran them all.
func (l *Loom) runDue(ts *timers, b *budget, now int64, lastSeq uint64, onPanic func(*PanicError)) bool {
	l.mu.Lock()
	ts.wheel.Collect(now)
	l.mu.Unlock()
	for swept := 0; !b.spent(); swept-- {
		l.mu.Lock()
		if swept == 0 {
			ts.readAhead(sweep)
			swept = sweep
		}
		e := ts.front()
		if e == nil || e.Due > now || e.Seq > lastSeq {
			l.mu.Unlock()
			return true
		}
		t := ts.wheel.Pop()
		t.seq = 0
		t.leaveScopeLocked()
		t.settledLocked()
		f := t.f
		l.mu.Unlock()
		b.ran++
		call(f, onPanic)
	}
	return false
}

// sweep is how many due timers runDue reads ahead.
const sweep = 16

// handlePanic gives p to l's panic handler (see WithPanicHandler).
func (l *Loom) handlePanic(p *PanicError) {
	l.mu.Lock()
	h := l.cfg.onPanic
	l.mu.Unlock()
	h(p)
}

// call runs f, giving a panic to onPanic.
func call(f func(), onPanic func(*PanicError)) {
	if p := protect(f); p != nil {
		onPanic(p)
	}
}

// protect runs f and returns its panic, with the stack of the goroutine where
// it happened, or nil if f returned. It is the one way the loom calls code of
// its users (actions, delayed actions, wait predicates, KeepWaiting, the Done
// method of a Waitable, the wake function); coroutine bodies, which run on a
// goroutine of their own, are called the same way in Coroutine.run.
func protect(f func()) *PanicError {
	return panics.Recover("", f, nil)
}
