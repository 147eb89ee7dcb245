package taskqueue_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// o4Gauge counts functions running at once against a limit, and keeps the
// first breach it saw, so that a test reports the exact overlap.
type o4Gauge struct {
	name  string
	limit int32
	cur   atomic.Int32
	peak  atomic.Int32
	mu    sync.Mutex
	first string
}

func newO4Gauge(name string, limit int) *o4Gauge {
	return &o4Gauge{name: name, limit: int32(limit)}
}

func (g *o4Gauge) in(what string) {
	n := g.cur.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			break
		}
	}
	if n > g.limit {
		g.mu.Lock()
		if g.first == "" {
			g.first = fmt.Sprintf("%s: %d running at once (limit %d), on entry of %s", g.name, n, g.limit, what)
		}
		g.mu.Unlock()
	}
}

func (g *o4Gauge) out() { g.cur.Add(-1) }

func (g *o4Gauge) check(t *testing.T) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.first != "" {
		t.Errorf("limit broken: %s (peak %d)", g.first, g.peak.Load())
	}
}

// o4Gauges enters and leaves several gauges at once: a function on a child's
// slot runs on its target's slot too.
type o4Gauges []*o4Gauge

func (gs o4Gauges) in(what string) {
	for _, g := range gs {
		g.in(what)
	}
}

func (gs o4Gauges) out() {
	for _, g := range gs {
		g.out()
	}
}

func (gs o4Gauges) check(t *testing.T) {
	t.Helper()
	for _, g := range gs {
		g.check(t)
	}
}
