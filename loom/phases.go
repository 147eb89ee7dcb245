package loom

import (
	"fmt"
	"runtime/debug"
	"slices"
	"time"
)

// A frame has three phases, in Unity's order: the fixed steps, the update
// (posted actions, delayed actions, the coroutine pass), and the end of the
// frame, after the loop has rendered. This file holds the first and the last.

// maxFixedDelta is the most time one frame feeds to the fixed steps (Unity's
// maximum allowed timestep), as WithFixedStep documents.
const maxFixedDelta = time.Second / 3

// WithFixedStep gives the loom fixed steps of dt scaled time (Unity's
// FixedUpdate, for physics): each frame, before its posted actions, the loom
// adds the frame's DeltaTime to an accumulator, and runs one step for each
// whole dt in it, carrying the remainder to the next frame. A frame feeds at
// most a third of a second to the steps (Unity's maximum allowed timestep):
// after a long stall the rest is dropped, so that a slow frame cannot make
// the next one slower still. A step calls step(dt), if step is not nil, then resumes the
// coroutines waiting with WaitForFixedUpdate. A frame may thus run no step or
// several; a time scale of 0 runs none. The steps and their resumes allocate
// nothing (TestPhasesAllocateNothing). WithFixedStep(0, nil) removes the
// steps. It panics if dt is negative, or zero with a step function.
func WithFixedStep(dt time.Duration, step func(dt time.Duration)) Option {
	if dt < 0 || (dt == 0 && step != nil) {
		panic(fmt.Sprintf("loom: WithFixedStep(%v): the step must be positive", dt))
	}
	return optionFunc(func(c *config) { c.fixedDT, c.fixedStep = dt, step })
}

// WaitForFixedUpdate resumes the coroutine right after the next fixed step
// (see WithFixedStep), once the step function has returned: steps run at the
// start of a frame, so a coroutine that yields it in a frame's update resumes
// in the first step of a later frame, and one that yields it from a step
// resumes after the following step, which may come in the same frame. On a
// loom without fixed steps, the wait ends the coroutine with a *PanicError
// that says so, reported to the panic handler: it would never resume.
func WaitForFixedUpdate() Instruction { return Instruction{kind: waitFixedUpdate} }

// WaitForEndOfFrame resumes the coroutine in the end phase of the frame in
// which it yields: in EndFrame, which the loop calls once it has rendered
// (Unity's WaitForEndOfFrame, for reading the frame back or taking a
// screenshot), or, if the loop does not call EndFrame, at the start of the
// next Update, before anything else of that frame. A coroutine that yields it
// in the end phase resumes in the next frame's.
func WaitForEndOfFrame() Instruction { return Instruction{kind: waitEndOfFrame} }

// EndFrame runs the end phase of the current frame: it resumes the
// coroutines waiting with WaitForEndOfFrame, in the order they yielded, and
// allocates nothing (TestPhasesAllocateNothing). A loop that renders calls it
// after rendering; a loop that does not leaves the end phase to the start of
// the next Update. Calling it again before the
// next Update does nothing. Like Update, it is a call of the loop, and
// panics when called while a frame runs.
func (l *Loom) EndFrame() {
	if !l.enter("EndFrame") {
		return
	}
	defer l.exit()
	l.endOfFrame()
}

// endOfFrame resumes the coroutines waiting for the end of the frame, once
// per frame.
func (l *Loom) endOfFrame() {
	if l.endedFrame == l.Frame() {
		return
	}
	l.endedFrame = l.Frame()
	l.runPhase(&l.co.endOfFrame) // those that wait again go to the next frame's
}

// fixedSteps runs the frame's fixed steps, with the frame's configuration
// cfg, and returns how many ran.
func (l *Loom) fixedSteps(cfg *config) int {
	co := &l.co
	dt := int64(cfg.fixedDT)
	if dt == 0 {
		l.fixedAcc = 0
		// The steps were removed: the waits would never end.
		waiting := co.fixed.take()
		for _, c := range waiting {
			if !c.isDone() {
				l.fail(c, noFixedStep(c))
			}
		}
		co.fixed.giveBack(waiting)
		return 0
	}
	l.fixedAcc += min(int64(l.DeltaTime()), int64(maxFixedDelta))
	n := 0
	for ; l.fixedAcc >= dt; n++ {
		l.fixedAcc -= dt
		if cfg.fixedStep != nil {
			call(func() { cfg.fixedStep(cfg.fixedDT) }, cfg.onPanic)
		}
		l.runPhase(&co.fixed) // those that wait again go to the next step
	}
	return n
}

// runPhase resumes the coroutines waiting in p, in order, as a pass of the
// current frame: a coroutine that ends wakes those waiting for it that
// yielded in an earlier frame. Those that wait in p again wait for its next
// run.
func (l *Loom) runPhase(p *phase) {
	if len(p.waiting) == 0 {
		return
	}
	co := &l.co
	co.inPass, co.pass = true, l.Frame()
	defer func() { co.inPass = false }()
	waiting := p.take()
	co.queue = append(co.queue, waiting...)
	p.giveBack(waiting)
	co.drain(l)
}

// A phase is the list of coroutines waiting for a fixed step or for the end
// of a frame, in yield order, with a spare buffer, so that a steady loop
// allocates nothing.
type phase struct {
	waiting, spare []*Coroutine
}

func (p *phase) add(c *Coroutine) { p.waiting = append(p.waiting, c) }

// live reports whether a coroutine that has not ended waits in p: one
// stopped while it waited stays in the list until the phase runs, which
// for the fixed steps may be long, or never while the time scale is 0.
func (p *phase) live() bool {
	return slices.ContainsFunc(p.waiting, func(c *Coroutine) bool { return !c.isDone() })
}

// take returns the coroutines waiting now and starts a new list.
func (p *phase) take() []*Coroutine {
	w := p.waiting
	p.waiting, p.spare = p.spare[:0], nil
	return w
}

// giveBack keeps the buffer of a list that take returned, once used.
func (p *phase) giveBack(w []*Coroutine) {
	clear(w)
	p.spare = w[:0]
}

// noFixedStep is the error of a coroutine that waits for a fixed step on a
// loom that has none. Its stack is the frame's that found the wait, since
// the coroutine's own has moved on from its yield.
func noFixedStep(c *Coroutine) *PanicError {
	return &PanicError{
		Value: fmt.Sprintf("loom: coroutine %d yielded WaitForFixedUpdate on a loom without fixed steps (see WithFixedStep)", c.id),
		Stack: debug.Stack(),
	}
}
