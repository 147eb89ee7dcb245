package loom

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/taskqueue-go/taskqueue/internal/goid"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// ErrStopped is the error of a coroutine ended by Stop, StopCoroutine or
// StopAllCoroutines.
var ErrStopped = errors.New("loom: coroutine stopped")

// A Coroutine is a function that runs across frames: a Go iterator function
// whose yields say when to resume it (see Instruction). The loom resumes it
// with iter.Pull on the loom's goroutine.
//
// The body must return once yield reports false: that is how Stop ends it,
// after which its deferred calls run (Unity skips finally blocks; a Go
// coroutine's defers always run). A body that panics ends, its panic goes to
// the loom's panic handler and to Err, and the coroutines waiting for it
// resume. A body must not call runtime.Goexit, which would end the loom's
// goroutine.
//
// A Coroutine handle is safe for use by multiple goroutines.
type Coroutine struct {
	l     *Loom
	scope *Scope // nil for the Loom's own coroutines
	id    uint64
	body  func(yield func(Instruction) bool)
	g     atomic.Uint64 // the ID of the goroutine its body runs on; set when it starts

	// Owned by the loom's goroutine:
	next     func() (Instruction, bool)
	stop     func()
	started  bool
	running  bool // its body runs now
	stopWith error
	wait     Instruction
	waitSeq  uint64          // its entry in one of the wait heaps; 0 if none
	yielded  int64           // the frame in which it last yielded
	waitCh   <-chan struct{} // the channel of a WaitFor on a foreign Waitable
	waiters  []*Coroutine    // coroutines waiting for it
	panicked *PanicError
	frame    int64       // the frame in which it was started
	refused  bool        // its yield has reported false: the body must return
	unwatch  func() bool // stops the watch of its context (StartCoroutineContext)
	liveIdx  int         // its index in the loom's live list while it runs

	mu   sync.Mutex // guards the fields below, which any goroutine reads
	done bool
	err  error
	ch   chan struct{} // made by Done
}

// coroutine makes WaitFor(c) wait as for a coroutine of the same loom.
func (c *Coroutine) coroutine() *Coroutine { return c }

// ID returns a number that names c among the coroutines of its loom.
func (c *Coroutine) ID() uint64 { return c.id }

// Done returns a channel that is closed when c has ended, which makes a
// Coroutine a Waitable.
func (c *Coroutine) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
		if c.done {
			close(c.ch)
		}
	}
	return c.ch
}

// Err returns nil while c runs or if its body returned, a *PanicError if it
// panicked, ErrStopped if it was stopped, and ErrClosed if its loom or scope
// closed first.
func (c *Coroutine) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// IsDone reports, without blocking, whether c has ended: its body returned
// or panicked, or it was stopped or closed. Err then tells which.
func (c *Coroutine) IsDone() bool { return c.isDone() }

func (c *Coroutine) isDone() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done
}

// complete records c's end and wakes those waiting on Done.
func (c *Coroutine) complete(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done, c.err = true, err
	if c.ch != nil {
		close(c.ch)
	}
}

// Stop ends c, reporting whether it had not ended yet. On the loom's
// goroutine, c ends at once: its yield reports false, its body returns and
// its defers run before Stop returns (if c is the coroutine that calls Stop,
// when it next yields). From any other goroutine, the stop happens at the
// start of the next frame. Err then reports ErrStopped.
func (c *Coroutine) Stop() bool {
	return c.l.stopCoroutine(c, ErrStopped)
}

// StartCoroutine starts body as a coroutine of l and returns its handle.
// Called on l's goroutine (from an action, a coroutine, or the loop between
// frames), it runs body at once up to its first yield, as Unity's
// StartCoroutine does. Called from any other goroutine, it queues body to
// start in the next frame: an iter.Pull coroutine must be created and resumed
// on one goroutine, and on one OS thread when that goroutine is locked.
// After Close, the returned coroutine has ended with ErrClosed without running.
func (l *Loom) StartCoroutine(body func(yield func(Instruction) bool)) *Coroutine {
	return l.startCoroutine(nil, body, nil)
}

// StartCoroutineContext starts body as StartCoroutine does, bound to ctx:
// once ctx is done, the coroutine is stopped as by Stop (at the start of the
// next frame, unless it ends first), its yield reports false and its defers
// run; its Err is then ErrStopped. A context that is done already stops it
// before it begins.
func (l *Loom) StartCoroutineContext(ctx context.Context, body func(yield func(Instruction) bool)) *Coroutine {
	return l.startCoroutine(nil, body, ctx)
}

// StopCoroutine is c.Stop under Unity's name.
func (l *Loom) StopCoroutine(c *Coroutine) bool {
	if c.l != l {
		panic("loom: StopCoroutine of a coroutine of another loom")
	}
	return c.Stop()
}

// StopAllCoroutines stops every coroutine of l started before it returns,
// as Stop does for each: those running or waiting, and those started from
// other goroutines that have not begun yet, which then never begin. Called
// on l's goroutine, they end before it returns; from another goroutine, at
// the start of the next frame.
func (l *Loom) StopAllCoroutines() {
	l.mu.Lock()
	queued := l.incoming // started elsewhere, not begun: they never will
	l.incoming = nil
	if !l.OnLoop() {
		l.stopping = append(l.stopping, queued...)
		l.stopAll = true
		wake := l.wakeLocked()
		l.mu.Unlock()
		wake.send()
		return
	}
	l.mu.Unlock()
	for _, c := range queued {
		l.stopNow(c, ErrStopped)
	}
	l.stopAllNow(ErrStopped)
}

func (l *Loom) startCoroutine(s *Scope, body func(yield func(Instruction) bool), ctx context.Context) *Coroutine {
	if body == nil {
		panic("loom: StartCoroutine(nil)")
	}
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
		c.unwatch = context.AfterFunc(ctx, func() { l.stopCoroutine(c, ErrStopped) })
	}
	if l.OnLoop() && !l.isClosed() {
		l.begin(c)
		return c
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		c.complete(ErrClosed)
		return c
	}
	l.incoming = append(l.incoming, c)
	wake := l.wakeLocked()
	l.mu.Unlock()
	wake.send()
	return c
}

func (l *Loom) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// stopCoroutine ends c with err, at once on the loom's goroutine, at the next
// frame otherwise.
func (l *Loom) stopCoroutine(c *Coroutine, err error) bool {
	if c.isDone() {
		return false
	}
	if !l.OnLoop() {
		l.mu.Lock()
		l.stopping = append(l.stopping, c)
		wake := l.wakeLocked()
		l.mu.Unlock()
		wake.send()
		return true
	}
	return l.stopNow(c, err)
}

// begin starts c on the loom's goroutine and runs it to its first yield.
func (l *Loom) begin(c *Coroutine) {
	if c.scope != nil {
		if c.scope.closed.Load() {
			c.complete(ErrClosed)
			return
		}
		c.scope.coroutines[c] = struct{}{}
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
	c.g.Store(goid.Current())
	normal := false
	defer func() {
		if !normal {
			if v := recover(); v != nil {
				c.panicked = scheduler.NewPanicError(v)
			}
		}
	}()
	c.body(func(in Instruction) bool {
		if c.refused {
			// Without this, Stop would wait forever for a body that
			// ignores the false it was given.
			panic(fmt.Sprintf("loom: coroutine %d yielded after its yield reported false; a body must return once yield reports false", c.id))
		}
		if !yield(in) {
			c.refused = true
			return false
		}
		return true
	})
	normal = true
}

// resume runs c up to its next yield, or its end.
func (l *Loom) resume(c *Coroutine) {
	co := &l.co
	outer := co.current.Load()
	co.current.Store(c)
	c.running = true
	in, ok := c.next()
	c.running = false
	co.current.Store(outer)
	switch {
	case c.panicked != nil:
		l.HandlePanic(c.panicked)
		l.end(c, c.panicked)
	case !ok:
		l.end(c, nil)
	case c.stopWith != nil:
		l.stopNow(c, c.stopWith)
	default:
		c.yielded = l.Frame()
		co.schedule(l, c, in)
	}
}

// stopNow ends c with err on the loom's goroutine, reporting whether it had
// not ended.
func (l *Loom) stopNow(c *Coroutine, err error) bool {
	if c.isDone() {
		return false
	}
	if c.running { // c stops itself, or a coroutine it runs stops it: at its next yield
		if c.stopWith == nil {
			c.stopWith = err
		}
		return true
	}
	if c.started {
		c.waitSeq = 0 // leaves its heap, if in one; lists skip ended coroutines
		c.stop()      // yield reports false: the body returns, its defers run
		if c.panicked != nil {
			l.HandlePanic(c.panicked)
			err = c.panicked
		}
	}
	l.end(c, err)
	return true
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
	c.next, c.stop, c.waitCh = nil, nil, nil
	c.wait = Instruction{}
	c.complete(err)
	for _, w := range c.waiters {
		l.wake(w)
	}
	c.waiters = nil
}

// stopAllNow ends every coroutine of l with err.
func (l *Loom) stopAllNow(err error) {
	for _, c := range slices.Clone(l.co.live) {
		l.stopNow(c, err)
	}
}
