package mainthread

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// A call is a function that Call runs on the main thread. Calls are pooled,
// each with its channel and a bound method value to post, so that a Call
// allocates nothing.
type call struct {
	fn    func()
	p     *PanicError   // fn's panic; written before state becomes callDone
	state atomic.Uint32 // see the constants below
	done  chan struct{} // buffered; receives one value when state becomes callDone
	run   func()        // c.invoke, bound once
}

// The states of a call. A call moves from pending to running on the main
// thread, then to done; the caller may move it from pending to canceled, or
// from running to abandoned, when it stops waiting. The compare-and-swaps
// decide who owns the outcome.
const (
	callPending uint32 = iota
	callRunning
	callDone
	callCanceled  // the caller left before fn started: fn never runs
	callAbandoned // the caller left while fn ran: its panic goes to the handler
)

var calls = sync.Pool{New: func() any {
	c := &call{done: make(chan struct{}, 1)}
	c.run = c.invoke
	return c
}}

func newCall(fn func()) *call {
	c := calls.Get().(*call)
	c.fn = fn
	return c
}

// recycle returns a call that the main thread will not touch again.
func (c *call) recycle() {
	c.fn, c.p = nil, nil
	c.state.Store(callPending)
	calls.Put(c)
}

// invoke runs on the main thread, as an action of the main loom.
func (c *call) invoke() {
	if !c.state.CompareAndSwap(callPending, callRunning) {
		return // canceled
	}
	c.p = protect(c.fn)
	if c.state.CompareAndSwap(callRunning, callDone) {
		c.done <- struct{}{}
		return
	}
	if c.p != nil { // abandoned: nobody else will see the panic
		mainLoom.HandlePanic(c.p)
	}
}

// wait waits for the main thread to run c, then recycles c and returns, or
// panics with fn's panic. If the main loop is spinning (see WithSpin), wait
// spins too before it parks, so that neither side pays for waking the other.
func (c *call) wait(ctx context.Context) error {
	if d := spinFor.Load(); d > 0 && loopSpinning.Load() {
		start := time.Now()
		for i := 1; c.state.Load() != callDone; i++ {
			if i%256 == 0 && time.Since(start) > time.Duration(d) {
				break
			}
		}
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		if c.state.CompareAndSwap(callPending, callCanceled) ||
			c.state.CompareAndSwap(callRunning, callAbandoned) {
			return ctx.Err() // c stays with the main thread; it is not reused
		}
		<-c.done // fn finished meanwhile
	}
	p := c.p
	c.recycle()
	if p != nil {
		panic(p)
	}
	return nil
}
