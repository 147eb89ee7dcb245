package loom

import (
	"reflect"
	"sync/atomic"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/delayheap"
)

// coroutines is a loom's coroutine engine. Apart from ids, it is owned by the
// loom's goroutine.
//
// A coroutine waits in exactly one place, by what it waits for:
//
//	next frame                  ready, a list in yield order
//	frames                      frames, a heap keyed by frame number
//	scaled / real time          scaled, real: timing wheels keyed by nanoseconds
//	a coroutine of this loom    the waiters list of that coroutine
//	until, while, custom,       polled, a list in yield order, the only
//	a foreign Waitable          waits that cost something every frame
//	the next fixed step         fixed, a list in yield order
//	the end of the frame        endOfFrame, a list in yield order
//
// Ended coroutines are skipped where they are found: a heap or wheel entry is live
// only while its sequence number is its coroutine's waitSeq, and the lists
// check. A coroutine resumes at most once per frame, and never in the frame
// in which it yielded (each remembers that frame), but for the waits of a
// fixed step or of the end of the frame, which are phases of their own.
type coroutines struct {
	ids atomic.Uint64

	live       []*Coroutine // started and not ended
	starting   []*Coroutine // the starts that applyRequests took and has yet to begin
	watches    contextWatches
	ready      []*Coroutine
	frames     delayheap.Heap[*Coroutine]
	scaled     delayheap.Wheel[*Coroutine]
	real       delayheap.Wheel[*Coroutine]
	polled     []*Coroutine
	fixed      phase        // waiting for the next fixed step
	endOfFrame phase        // waiting for the frame's end phase
	spare      []*Coroutine // the other buffer of ready and polled
	queue      []*Coroutine // the current pass's coroutines to resume, in order
	seq        uint64       // orders heap entries

	sink uintptr // takes what readAhead reads, so that the reads stay

	current *Coroutine // the coroutine whose body runs now
	pass    int64      // the frame of the current pass
	inPass  bool
}

// schedule files c, which has just yielded in, where it waits.
func (co *coroutines) schedule(l *Loom, c *Coroutine, in Instruction) {
	c.wait = in
	switch in.kind {
	case waitSeconds, waitRealtime, waitFrames:
		if co.parkTimed(l, c, in) {
			return
		}
	case waitUntil, waitWhile, waitCustom, waitAll, waitAny:
		co.polled = append(co.polled, c)
		return
	case waitFixedUpdate:
		co.fileFixed(l, c)
		return
	case waitEndOfFrame:
		co.endOfFrame.add(c)
		return
	case waitFor:
		if co.fileWaitFor(l, c, in.ref) {
			return
		}
	}
	co.ready = append(co.ready, c) // next frame
}

// parkTimed parks c, which waits for a time or a number of frames, in the
// wheel or heap of its wait, reporting false if the wait is short enough to
// end in the next frame.
func (co *coroutines) parkTimed(l *Loom, c *Coroutine, in Instruction) bool {
	switch {
	case in.kind == waitSeconds && in.n > 0:
		co.park(&co.scaled, c, after(l.scaledNow(), in.n))
	case in.kind == waitRealtime && in.n > 0:
		co.park(&co.real, c, after(int64(l.UnscaledTime()), in.n))
	case in.kind == waitFrames && in.n > 1:
		co.park(&co.frames, c, after(l.Frame(), in.n))
	default:
		return false
	}
	return true
}

// fileFixed files c for the next fixed step, or ends it if the loom has no
// fixed steps.
func (co *coroutines) fileFixed(l *Loom, c *Coroutine) {
	l.mu.Lock()
	stepped := l.cfg.fixedDT > 0
	l.mu.Unlock()
	if !stepped {
		l.fail(c, noFixedStep(c))
		return
	}
	co.fixed.add(c)
}

// fileWaitFor files c, which waits for ref (see WaitFor): among the waiters
// of ref if it is a coroutine of this loom, else among the polled waits. It
// reports false if c is to resume in the next frame, ref being a coroutine
// that has ended. A panic in ref's Done ends c.
func (co *coroutines) fileWaitFor(l *Loom, c *Coroutine, ref any) bool {
	if w, ok := ref.(interface{ coroutine() *Coroutine }); ok && w.coroutine().l == l {
		w := w.coroutine()
		if !w.started {
			l.beginNow(w) // yield return StartCoroutine(...): it begins now
		}
		if w.isDone() {
			return false
		}
		w.waiters = append(w.waiters, c)
		return true
	}
	if _, ok := ref.(doneReporter); !ok {
		w := ref.(Waitable)
		if p := protect(func() { c.waitCh = w.Done() }); p != nil {
			l.fail(c, p)
			return true
		}
	}
	co.polled = append(co.polled, c)
	return true
}

// waitQueue is a heap or a wheel of waiting coroutines.
type waitQueue interface {
	Push(due int64, seq uint64, c *Coroutine)
	Len() int
	Filter(keep func(*delayheap.Entry[*Coroutine]) bool)
}

// park puts c in h until due.
func (co *coroutines) park(h waitQueue, c *Coroutine, due int64) {
	co.seq++
	c.waitSeq = co.seq
	h.Push(due, co.seq, c)
	if h.Len() > 64 && h.Len() > 2*len(co.live) {
		h.Filter(liveWait) // entries of stopped coroutines became the majority
	}
}

func liveWait(e *delayheap.Entry[*Coroutine]) bool { return e.Seq == e.V.waitSeq }

// wake makes w, whose awaited coroutine has just ended, resume: in this pass,
// right after the coroutine that ended (after the running coroutine, if one
// ended it); or in the next frame, if w yielded in this frame or the end came
// outside a pass.
func (l *Loom) wake(w *Coroutine) {
	co := &l.co
	switch {
	case !co.inPass || w.yielded >= co.pass:
		co.ready = append(co.ready, w)
	case co.current == nil:
		if !w.isDone() && !w.running && !w.stopReq.Load() {
			l.resume(w)
		}
	default:
		co.queue = append(co.queue, w)
	}
}

// dueTimed moves the live entries of w due at or before now onto the pass
// queue.
func (co *coroutines) dueTimed(w *delayheap.Wheel[*Coroutine], now int64) {
	w.Collect(now)
	for e := w.Front(); e != nil && e.Due <= now; e = w.Front() {
		live := liveWait(e)
		c := w.Pop()
		if live {
			c.waitSeq = 0
			co.queue = append(co.queue, c)
		}
	}
}

// due pops the live entries of h due at or before now onto the pass queue.
func (co *coroutines) due(h *delayheap.Heap[*Coroutine], now int64) {
	for h.Len() > 0 {
		e := h.Top()
		if !liveWait(e) {
			h.Pop()
			continue
		}
		if e.Due > now {
			return
		}
		c := h.Pop()
		c.waitSeq = 0
		co.queue = append(co.queue, c)
	}
}

// poll reports whether c, which waits on a polled instruction, may resume.
// A panic in the user's predicate ends c (see fail).
func (l *Loom) poll(c *Coroutine) (ready bool) {
	if p := protect(func() { ready = c.pollReady() }); p != nil {
		l.fail(c, p)
		return false
	}
	return ready
}

// fail ends c, whose wait panicked with p: p goes to the panic handler and
// becomes c's error, and c's body sees yield report false, returns and runs
// its defers. Every other coroutine stays where it was.
func (l *Loom) fail(c *Coroutine, p *PanicError) {
	l.handlePanic(p)
	l.stopNow(c, p)
}

// postsRan reports, for a coroutine whose wait is over, whether the actions
// posted to l before its wait was seen over have run, so that a function a
// worker posts before its handle is done runs before the coroutine waiting
// for that handle resumes. Waits on Waitables only: the count of posts is
// taken when the wait is first seen over, and the coroutine waits, frame
// after frame, until that many actions were taken from the queue (a frame
// budget may carry some over); posts that come later do not hold it back.
//
// A WaitAny counts again when, while it is held, a member before the one
// it counted for ends: FirstDone, which names the first member done, will
// name that one, whose posts must have run too.
func (l *Loom) postsRan(c *Coroutine) bool {
	first := -1
	switch c.wait.kind {
	case waitAny:
		first = c.wait.ref.(*multi).first
	case waitFor, waitAll:
	default:
		return true
	}
	if c.postsDue == 0 || first < c.postsFor {
		c.postsDue = l.posts.Load() + 1
		c.postsFor = first
	}
	if l.taken+1 < c.postsDue {
		return false
	}
	c.postsDue = 0
	return true
}

// pollReady reports whether c's polled wait is over.
func (c *Coroutine) pollReady() bool {
	switch c.wait.kind {
	case waitUntil:
		return c.wait.ref.(func() bool)()
	case waitWhile:
		return !c.wait.ref.(func() bool)()
	case waitCustom:
		return !c.wait.ref.(KeepWaiter).KeepWaiting()
	case waitAll, waitAny:
		return c.wait.ref.(*multi).ready(c.wait.kind)
	case waitFor:
		if d, ok := c.wait.ref.(doneReporter); ok {
			return d.IsDone()
		}
		select {
		case <-c.waitCh:
			return true
		default:
			return false
		}
	}
	return true
}

// runCoroutines is the coroutine pass of a frame. In order, it applies the
// stops and starts asked since the last (see applyRequests), then resumes:
// the coroutines waiting for the next frame, in the order they yielded;
// those whose frame count, scaled time or real time is up, each in due
// order; then those whose polled condition now holds, in the order they
// yielded. A coroutine that ends lets those waiting for it resume in the
// same pass; one started or stopped during the pass is so right after the
// coroutine running then yields.
func (l *Loom) runCoroutines() {
	co := &l.co
	co.inPass, co.pass = true, l.Frame()
	defer func() { co.inPass = false }()
	l.applyRequests()
	l.stopCanceled()

	// Those that yielded in this frame, before the pass, wait for the next.
	ready := co.ready
	co.ready = co.spare[:0]
	for i, c := range ready {
		ready[i] = nil
		if c.yielded < co.pass {
			co.queue = append(co.queue, c)
		} else {
			co.ready = append(co.ready, c)
		}
	}
	co.spare = ready[:0]
	co.due(&co.frames, co.pass)
	co.dueTimed(&co.scaled, l.scaledNow())
	co.dueTimed(&co.real, int64(l.UnscaledTime()))
	co.drain(l)

	polled := co.polled
	co.polled = co.spare[:0] // coroutines that yield a polled wait from now on
	still := polled[:0]      // those that keep waiting, in their order
	for i, c := range polled {
		polled[i] = nil
		switch {
		case c.isDone():
		case c.stopReq.Load():
			still = append(still, c) // its stop is applied after this resume
		case c.yielded < co.pass && l.poll(c) && l.postsRan(c):
			c.waitCh = nil
			co.queue = append(co.queue, c)
			co.drain(l)
		default:
			still = append(still, c)
		}
	}
	newcomers := co.polled
	co.polled = append(still, newcomers...)
	clear(newcomers)
	co.spare = newcomers[:0]
}

// drain resumes the coroutines of the pass queue, which grows as coroutines
// end and wake those waiting for them.
func (co *coroutines) drain(l *Loom) {
	for i := 0; i < len(co.queue); i++ {
		if i%readAhead == 0 {
			co.readAhead(co.queue[i:min(i+readAhead, len(co.queue))])
		}
		c := co.queue[i]
		co.queue[i] = nil
		if !c.isDone() && c.started && !c.running && !c.stopReq.Load() {
			l.resume(c)
		}
		l.applyRequests()
	}
	co.queue = co.queue[:0]
	l.applyRequests()
}

// readAhead is how many of the pass's coroutines drain reads ahead of their
// resumes.
const readAhead = 16

// readAhead reads the coroutines cs and the closures that resume them, so
// that their cache misses overlap: in a frame that resumes a thousand of a
// hundred thousand parked coroutines, each would otherwise wait alone for
// memory when its turn came. As for timers (see timers.readAhead), reflect
// reads the code pointer of a func value from its closure; only speed
// depends on it.
func (co *coroutines) readAhead(cs []*Coroutine) {
	for _, c := range cs {
		if c != nil && c.next != nil {
			co.sink += reflect.ValueOf(c.next).Pointer()
		}
	}
}

// scaledNow returns the scaled time of the current frame, in nanoseconds.
func (l *Loom) scaledNow() int64 { return l.scaled.Load() }

// idle adds the coroutines' waits to i.
func (co *coroutines) idle(l *Loom, i *Idle) {
	if anyLive(co.ready) || anyLive(co.polled) || co.framesLive() || co.fixed.live() || co.endOfFrame.live() {
		i.Frames = true
	}
	if e := co.top(&co.real); e != nil {
		i.timed(time.Duration(e.Due - int64(l.UnscaledTime())))
	}
	if scale := l.TimeScale(); scale > 0 {
		if e := co.top(&co.scaled); e != nil {
			i.timed(time.Duration(clamp(float64(e.Due-l.scaledNow()) / scale)))
		}
	}
}

// framesLive reports whether a live coroutine waits for a number of frames,
// dropping the entries of stopped ones from the top of the heap on the way.
func (co *coroutines) framesLive() bool {
	for co.frames.Len() > 0 && !liveWait(co.frames.Top()) {
		co.frames.Pop()
	}
	return co.frames.Len() > 0
}

// anyLive reports whether a coroutine of cs has not ended. The lists keep
// the coroutines stopped since the last frame until the next one skips
// them, and a closed loom runs no next frame.
func anyLive(cs []*Coroutine) bool {
	for _, c := range cs {
		if !c.isDone() {
			return true
		}
	}
	return false
}

// top returns the earliest live entry of w, or nil, dropping stale entries
// on the way.
func (co *coroutines) top(w *delayheap.Wheel[*Coroutine]) *delayheap.Entry[*Coroutine] {
	e, _ := w.Earliest(liveWait)
	return e
}
