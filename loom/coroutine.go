package loom

import (
	"context"
	"iter"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/taskqueue-go/taskqueue/internal/panics"
)

// A Coroutine is a function that runs across frames: a Go iterator function,
// func(yield func(Instruction) bool), whose yields say when to resume it
// (see Instruction). The loom resumes it with iter.Pull on the loom's
// goroutine, at most once in a frame's coroutine pass (the fixed steps and
// the end phase may resume it besides; see Update).
//
// The body must return once yield reports false: that is how Stop ends it,
// after which its deferred calls run (Unity skips finally blocks; a Go
// coroutine's defers always run). Stop, Loom.StopAllCoroutines, closing its
// Scope or its loom, and the end of the context of
// Loom.StartCoroutineContext end a coroutine so, from any goroutine, and it
// never resumes after. A body that panics, its first part included, ends:
// its panic goes to the loom's panic handler with its stack and to Err, and
// the coroutines waiting for it resume. A body must not call runtime.Goexit,
// which would end the loom's goroutine.
//
// A Coroutine handle is safe for use by multiple goroutines. Only a loom or a
// Scope makes one: the methods of the zero Coroutine panic.
type Coroutine struct {
	// The fields a resume reads come first, side by side, so that a frame
	// that resumes a thousand coroutines out of a hundred thousand misses
	// the cache once or twice for each, not once for each field.

	// stopReq is set by Stop, from any goroutine: the loop resumes c no
	// more, and ends it.
	stopReq atomic.Bool
	// done is set, under mu, when c has ended; the loop reads it without
	// the lock.
	done atomic.Bool

	// Owned by the loom's goroutine:
	started bool
	running bool   // its body runs now
	refused bool   // its yield has reported false: the body must return
	waitSeq uint64 // its entry in one of the wait heaps or wheels; 0 if none
	next    func() (Instruction, bool)

	// Set before the loop sees c, and read by each resume (see stopAsked):
	id      uint64
	scope   *Scope          // nil for the Loom's own coroutines
	ctxDone <-chan struct{} // the Done channel of StartCoroutineContext's context; nil if none or never done

	// Owned by the loom's goroutine:
	postsDue uint64 // 1 + the actions posted when its Waitable wait was seen over; 0 if not yet
	panicked *PanicError
	stopWith error
	yielded  int64 // the frame in which it last yielded
	wait     Instruction
	postsFor int // for a WaitAny, the member FirstDone named when postsDue was counted

	l       *Loom
	body    func(yield func(Instruction) bool)
	stop    func()
	waitCh  <-chan struct{} // the channel of a WaitFor on a foreign Waitable
	waiters []*Coroutine    // coroutines waiting for it
	frame   int64           // the frame in which it was started
	unwatch func() bool     // stops the watch of its context (StartCoroutineContext)
	liveIdx int             // its index in the loom's live list while it runs
	bound   *contextWatch   // the watch of its context while it runs; nil if none
	boundIx int             // its index in bound.cs

	mu  sync.Mutex // guards the fields below, which any goroutine reads
	err error
	ch  chan struct{} // made by Done
}

// coroutine makes WaitFor(c) wait as for a coroutine of the same loom.
func (c *Coroutine) coroutine() *Coroutine { return c }

// ofLoom is what WaitFor needs of a coroutine or a Task: the coroutine
// itself, or nil for a nil one.
type ofLoom interface{ coroutine() *Coroutine }

// Done returns a channel that is closed when c has ended, which makes a
// Coroutine a Waitable.
func (c *Coroutine) Done() <-chan struct{} {
	c.mustBeMade("Done")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
		if c.done.Load() {
			close(c.ch)
		}
	}
	return c.ch
}

// Err returns nil while c runs or if its body returned, a *PanicError if it
// panicked, ErrStopped if it was stopped, and ErrClosed if its loom or scope
// closed first. A stop ends c on the loop, at the next step of a coroutine
// pass (see Stop): a Close of the loom or scope before then ends c with
// ErrClosed.
func (c *Coroutine) Err() error {
	c.mustBeMade("Err")
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// IsDone reports, without blocking, whether c has ended: its body returned
// or panicked, or it was stopped or closed. Err then tells which.
func (c *Coroutine) IsDone() bool {
	c.mustBeMade("IsDone")
	return c.isDone()
}

// mustBeMade panics, naming call, on a Coroutine that no loom started: the
// zero Coroutine would never end.
func (c *Coroutine) mustBeMade(call string) {
	if c == nil || c.l == nil {
		panic("loom: Coroutine." + call + " of a Coroutine not started by StartCoroutine")
	}
}

func (c *Coroutine) isDone() bool { return c.done.Load() }

// complete records c's end and wakes those waiting on Done.
func (c *Coroutine) complete(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = err
	c.done.Store(true)
	if c.ch != nil {
		close(c.ch)
	}
}

// StartCoroutine starts body as a coroutine of l and returns its handle. It
// is safe from any goroutine and never runs body on the caller: the loop
// begins the coroutine, running it up to its first yield, in the frame that
// is running, if one is (in its coroutine pass, or right after the
// coroutine that is running yields, if the pass has begun and that
// coroutine is resuming; a coroutine that is beginning in the pass lets the
// others queued before its child begin first), or else in the
// next frame. A coroutine that yields WaitFor on one that has not begun
// begins it at once, so Unity's yield return StartCoroutine(inner()) keeps
// its timing: yield(WaitFor(l.StartCoroutine(inner))) runs inner up to its
// first yield in the same pass, and resumes the waiter in the pass in which
// inner ends.
//
// The body does not run inside StartCoroutine, as it would in Unity, because
// only the loop may create and resume the iter.Pull coroutine of a body (on
// a goroutine locked to its OS thread, a mismatch is a fatal error of the
// runtime), and the loom does not ask which goroutine calls. After Close, the
// returned coroutine has ended with ErrClosed without running.
func (l *Loom) StartCoroutine(body func(yield func(Instruction) bool)) *Coroutine {
	return l.startCoroutine("StartCoroutine(nil)", nil, body, nil)
}

// StartCoroutineContext starts body as StartCoroutine does, bound to ctx:
// once ctx is done, the coroutine never resumes, but for a resume under way
// at that moment, and it is stopped as by Stop: its yield reports false, its
// defers run and its Err is ErrStopped. It is stopped, whatever it waits
// for, no later than the first coroutine pass that begins after ctx is done:
// the running frame's, if ctx ends before that frame's pass does (in an
// action, say), or else the next frame's. A context that is done already
// stops it before it begins.
//
// Each pass looks once at each context that coroutines are bound to:
// coroutines that share one (or contexts that share its Done channel, as
// those of context.WithValue do) cost a frame one look, and each context
// about 9 ns a frame (BenchmarkCoroutineContexts, 10,000 coroutines).
func (l *Loom) StartCoroutineContext(ctx context.Context, body func(yield func(Instruction) bool)) *Coroutine {
	mustCtx("StartCoroutineContext", ctx)
	return l.startCoroutine("StartCoroutineContext(ctx, nil)", nil, body, ctx)
}

// startCoroutine starts body, in scope s if not nil, bound to ctx if not
// nil; nilBody is the call with a nil body, for the misuse's panic.
func (l *Loom) startCoroutine(nilBody string, s *Scope, body func(yield func(Instruction) bool), ctx context.Context) *Coroutine {
	if body == nil {
		panic("loom: " + nilBody)
	}
	l.mustBeMade()
	c := &Coroutine{l: l, scope: s, id: l.co.ids.Add(1), body: body}
	if s != nil && s.closed.Load() {
		c.complete(ErrClosed)
		return c
	}
	if ctx != nil {
		if ctx.Err() != nil {
			c.complete(ErrStopped)
			return c
		}
		// Each coroutine pass looks at the context (see stopCanceled),
		// which makes the frame of the stop certain; the watch, whose
		// goroutine runs whenever the runtime gets to it, wakes a loop
		// that sleeps between frames.
		c.ctxDone = ctx.Done()
		c.unwatch = context.AfterFunc(ctx, func() { l.stopCoroutine(c, ErrStopped) })
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		c.complete(ErrClosed)
		return c
	}
	l.incoming = append(l.incoming, c)
	wake := l.requestLocked()
	l.mu.Unlock()
	wake.send()
	return c
}

// requestLocked notes a start or stop for the loop to apply, and returns the
// wake-up to send for it.
func (l *Loom) requestLocked() wakeup {
	l.requests.Store(true)
	return l.wakeLocked()
}

// applyRequests applies, on the loop, the starts and stops asked since it
// last did: the scopes closed and StopAllCoroutines first, then the stops,
// then the starts, which begin here (or end, if a stop was asked for them).
// It runs at the start of each coroutine pass and after each resume, so a
// request made during a frame takes effect in that frame.
func (l *Loom) applyRequests() {
	if !l.requests.Load() {
		return
	}
	l.mu.Lock()
	starts, stops, scopes := l.incoming, l.stopping, l.closing
	l.incoming, l.stopping, l.closing = nil, nil, nil
	l.requests.Store(false)
	l.mu.Unlock()
	for _, s := range scopes {
		s.stopCoroutines()
	}
	if floor := l.stopFloor.Load(); floor > l.stoppedTo {
		l.stoppedTo = floor
		for _, c := range slices.Clone(l.co.live) {
			if c.id <= floor {
				l.stopNow(c, ErrStopped)
			}
		}
	}
	for _, c := range stops {
		if c.started {
			l.stopNow(c, ErrStopped)
		}
	}
	// The starts yet to begin stay in sight of Coroutines, as queued.
	for l.co.starting = starts; len(l.co.starting) > 0; {
		c := l.co.starting[0]
		l.co.starting = l.co.starting[1:]
		if !c.isDone() {
			l.begin(c)
		}
	}
}

// beginNow begins w, a coroutine that has not begun, at once, for a
// coroutine that waits for it: it takes w out of the starts to apply.
func (l *Loom) beginNow(w *Coroutine) {
	l.mu.Lock()
	i := slices.Index(l.incoming, w)
	if i >= 0 {
		l.incoming = slices.Delete(l.incoming, i, i+1)
	}
	l.mu.Unlock()
	if i < 0 || w.isDone() {
		return // applied meanwhile, or ended before it began
	}
	l.begin(w)
}

// begin starts c on the loop and runs it to its first yield, or ends it if
// it was stopped before it began.
func (l *Loom) begin(c *Coroutine) {
	if err := l.stopAsked(c); err != nil {
		l.end(c, err)
		return
	}
	if c.scope != nil {
		c.scope.coroutines[c] = struct{}{}
	}
	if c.ctxDone != nil {
		l.co.bind(c)
	}
	c.started = true
	c.frame = l.Frame()
	c.next, c.stop = iter.Pull(c.run)
	c.liveIdx = len(l.co.live)
	l.co.live = append(l.co.live, c)
	l.resume(c)
}

// run is the iterator function given to iter.Pull: the body, with its panic
// recovered where it happened, so that the stack shows it (iter.Pull would
// re-panic on the loom's goroutine, far from the cause).
func (c *Coroutine) run(yield func(Instruction) bool) {
	c.panicked = panics.Recover(c.l.name(), func() { c.body(c.yield(yield)) }, nil)
}

// resume runs c up to its next yield, or its end; if a stop of c was asked,
// it ends c instead, its yield reporting false.
func (l *Loom) resume(c *Coroutine) {
	if err := l.stopAsked(c); err != nil {
		// The loop may not have applied the stop yet: the watch of a
		// context runs on a goroutine of its own, and StopAllCoroutines
		// and Scope.Close take effect at the next step of the pass.
		c.stopReq.Store(true)
		l.stopNow(c, err)
		return
	}
	co := &l.co
	outer := co.current
	co.current = c
	c.running = true
	in, ok := c.next()
	c.running = false
	co.current = outer
	switch {
	case c.panicked != nil:
		l.handlePanic(c.panicked)
		l.end(c, c.panicked)
	case !ok:
		l.end(c, nil)
	case c.stopWith != nil:
		l.stopNow(c, c.stopWith)
	default:
		if err := l.stopAsked(c); err != nil {
			l.stopNow(c, err) // it stopped itself, or was stopped as it ran
			return
		}
		c.yielded = l.Frame()
		co.schedule(l, c, in)
	}
}

// end records c's end, releases it and wakes the coroutines waiting for it.
func (l *Loom) end(c *Coroutine, err error) {
	co := &l.co
	if c.started {
		c.stop() // no-op once the body has returned; releases the iterator
		last := len(co.live) - 1
		moved := co.live[last]
		co.live[c.liveIdx], moved.liveIdx = moved, c.liveIdx
		co.live[last] = nil
		co.live = co.live[:last]
	}
	if c.scope != nil {
		delete(c.scope.coroutines, c)
	}
	if c.unwatch != nil {
		c.unwatch()
		c.unwatch = nil
	}
	if c.bound != nil {
		co.unbind(c)
	}
	c.next, c.stop, c.waitCh = nil, nil, nil
	c.wait = Instruction{}
	c.complete(err)
	for _, w := range c.waiters {
		l.wake(w)
	}
	c.waiters = nil
}
