package taskqueue

import "sync"

// A parker lets one goroutine wait for one event, as a buffered channel of
// one would, but it can be pooled and reused by goroutines of any
// testing/synctest bubble: it holds no channel, which a bubble owns once it
// made it. sync.Cond.Wait blocks durably in a bubble, as a channel does.
//
// Its waits cannot be combined with a context's, so the waits that also
// watch a cancelable context use a channel made for them instead.
type parker struct {
	mu    sync.Mutex
	cond  sync.Cond
	woken bool // under mu
}

func newParker() *parker {
	p := &parker{}
	p.cond.L = &p.mu
	return p
}

// wait blocks until wake has been called since the last reset.
func (p *parker) wait() {
	p.mu.Lock()
	for !p.woken {
		p.cond.Wait()
	}
	p.woken = false
	p.mu.Unlock()
}

// wake ends the wait, or the next one.
func (p *parker) wake() {
	p.mu.Lock()
	p.woken = true
	p.mu.Unlock()
	p.cond.Signal()
}
