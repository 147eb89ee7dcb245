package loom

import (
	"sync/atomic"
	"time"
)

// A Scope groups the work of one owner, such as a game object: actions,
// timers and coroutines posted through it end together when it is closed, as
// a destroyed GameObject stops its work in Unity.
//
// A Scope is safe for use by multiple goroutines. The zero Scope is not
// usable: its methods panic; make one with Loom.NewScope.
type Scope struct {
	l          *Loom
	closed     atomic.Bool
	timers     map[*Timer]struct{}     // the scope's waiting timers; under l.mu
	coroutines map[*Coroutine]struct{} // the scope's coroutines; owned by the loom's goroutine
}

// NewScope returns a new, open scope of l.
func (l *Loom) NewScope() *Scope {
	l.mustBeMade()
	return &Scope{l: l, timers: make(map[*Timer]struct{}), coroutines: make(map[*Coroutine]struct{})}
}

// Post is Loom.Post for an action of s: it does not run if s is closed
// before its frame. Post returns ErrClosed if s or its loom is closed.
func (s *Scope) Post(f func()) error {
	s.mustBeMade()
	if f == nil {
		panic("loom: Post(nil)")
	}
	if s.closed.Load() {
		return ErrClosed
	}
	return s.l.post(action{f: f, scope: s})
}

// PostAfter is Loom.PostAfter for a timer of s.
func (s *Scope) PostAfter(d time.Duration, f func()) *Timer {
	s.mustBeMade()
	return s.l.postAfter(s, d, false, f)
}

// PostAfterScaled is Loom.PostAfterScaled for a timer of s.
func (s *Scope) PostAfterScaled(d time.Duration, f func()) *Timer {
	s.mustBeMade()
	return s.l.postAfter(s, d, true, f)
}

// StartCoroutine is Loom.StartCoroutine for a coroutine of s, which Close
// stops.
func (s *Scope) StartCoroutine(body func(yield func(Instruction) bool)) *Coroutine {
	s.mustBeMade()
	return s.l.startCoroutine("Scope.StartCoroutine(nil)", s, body, nil)
}

// Close ends s: its posted actions that have not run never will, its timers
// are stopped at once (their Err reports ErrClosed), its coroutines are
// stopped with ErrClosed as Coroutine.Stop stops one (on the loop, in the
// running frame or the next; none resumes after Close returns, but for a
// resume under way at that moment, not even one whose wait for another of
// them ends as that one stops), and posting through s returns ErrClosed.
// Close is safe from any goroutine, frames included, and idempotent.
func (s *Scope) Close() {
	s.mustBeMade()
	if s.closed.Swap(true) {
		return
	}
	l := s.l
	l.mu.Lock()
	for t := range s.timers {
		t.err = ErrClosed
		l.unscheduleLocked(t) // leaves s.timers
	}
	l.closing = append(l.closing, s)
	wake := l.requestLocked()
	l.mu.Unlock()
	wake.send()
}

// stopCoroutines stops the coroutines of s, on the loom's goroutine.
func (s *Scope) stopCoroutines() {
	for c := range s.coroutines {
		s.l.stopNow(c, ErrClosed)
	}
	clear(s.coroutines)
}

func (s *Scope) mustBeMade() {
	if s.l == nil {
		panic("loom: use of a zero Scope; make one with Loom.NewScope")
	}
}
