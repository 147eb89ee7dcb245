// Package testkit holds what the module's tests share: the options they give
// goleak, panic catchers and collectors, gauges of functions running at
// once, a log of events, a buffer a logger may write while a test reads it,
// the calling goroutine's pprof labels, a context that ends
// before the test's deadline, a child process of the test binary, a test
// for rapid inside a bubble, the CPU time a benchmark costs, and whether
// the race detector is on. Package baseline, below it, holds what the
// benchmarks measure against. Only tests (the examples' and the
// benchmarks' included) import it; it imports no package of the module, so
// that any package's tests, internal or external, may use it.
package testkit

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"go.uber.org/goleak"
)

// LeakOptions returns opts, and on js/wasm the goroutine the runtime keeps
// for the host's events (runtime.handleEvent), which is not a leak: what
// every package's TestMain gives goleak.VerifyTestMain.
func LeakOptions(opts ...goleak.Option) []goleak.Option {
	if runtime.GOOS == "js" {
		opts = append(opts, goleak.IgnoreAnyFunction("runtime.handleEvent"))
	}
	return opts
}

// PanicValue calls f and returns the value it panicked with, or nil if it
// returned.
func PanicValue(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// PanicMessage calls f and returns the value it panicked with, formatted
// with fmt.Sprint, or "" if it returned.
func PanicMessage(f func()) string {
	if v := PanicValue(f); v != nil {
		return fmt.Sprint(v)
	}
	return ""
}

// IsClosed reports, without blocking, whether ch is closed.
func IsClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A Log records events, by name, from any goroutine, in the order they were
// added. The zero Log is ready to use.
type Log struct {
	mu  sync.Mutex
	got []string
}

// Add records e.
func (l *Log) Add(e string) {
	l.mu.Lock()
	l.got = append(l.got, e)
	l.mu.Unlock()
}

// Take returns the events recorded since the last Take, oldest first.
func (l *Log) Take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := l.got
	l.got = nil
	return got
}

// TakeSorted is Take with the events sorted, for events that happened at
// once, in any order, such as the starts of items that run together.
func (l *Log) TakeSorted() []string {
	got := l.Take()
	slices.Sort(got)
	return got
}

// Panics collects values, such as the *PanicError values a panic handler
// receives, from any goroutine. The zero Panics is ready to use.
type Panics[T any] struct {
	mu  sync.Mutex
	got []T
}

// Add records v. It is a panic handler: WithPanicHandler(p.Add).
func (p *Panics[T]) Add(v T) {
	p.mu.Lock()
	p.got = append(p.got, v)
	p.mu.Unlock()
}

// Len returns how many values were recorded.
func (p *Panics[T]) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.got)
}

// Take returns the values recorded so far, oldest first, and forgets them.
func (p *Panics[T]) Take() []T {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := p.got
	p.got = nil
	return got
}

// A Gauge counts the functions that run at once, as they enter and leave,
// and remembers the most at once. With a limit, it also remembers the first
// time the count went over it. The zero Gauge has no limit.
type Gauge struct {
	Name  string // names the gauge in Over's report
	Limit int64  // 0: none
	now   atomic.Int64
	peak  atomic.Int64
	over  atomic.Pointer[string]
}

// Enter counts a function in, what naming it for Over's report, and returns
// the count with it.
func (g *Gauge) Enter(what string) int64 {
	n := g.now.Add(1)
	for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
	if g.Limit > 0 && n > g.Limit {
		msg := fmt.Sprintf("%s: %d functions at once (limit %d), entering %s", g.Name, n, g.Limit, what)
		g.over.CompareAndSwap(nil, &msg)
	}
	return n
}

// Leave counts a function out.
func (g *Gauge) Leave() { g.now.Add(-1) }

// Now returns the functions running now.
func (g *Gauge) Now() int64 { return g.now.Load() }

// Peak returns the most functions that ran at once.
func (g *Gauge) Peak() int64 { return g.peak.Load() }

// Over returns the report of the first time the count went over the limit,
// or "".
func (g *Gauge) Over() string {
	if p := g.over.Load(); p != nil {
		return *p
	}
	return ""
}

// Gauges enters and leaves several gauges together: those of a queue and of
// each of its targets, say.
type Gauges []*Gauge

// Enter enters each gauge.
func (gs Gauges) Enter(what string) {
	for _, g := range gs {
		g.Enter(what)
	}
}

// Leave leaves each gauge.
func (gs Gauges) Leave() {
	for _, g := range gs {
		g.Leave()
	}
}
