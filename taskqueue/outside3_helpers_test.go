package taskqueue_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// o3Gauge counts the functions of a queue that execute at once (not those
// blocked in a wait of the library or for their own helpers) and remembers
// the first time the count went over the limit.
type o3Gauge struct {
	name  string
	limit int64
	cur   atomic.Int64
	max   atomic.Int64
	over  atomic.Value // string
}

func newO3Gauge(name string, limit int) *o3Gauge {
	return &o3Gauge{name: name, limit: int64(limit)}
}

func (g *o3Gauge) enter(what string) {
	n := g.cur.Add(1)
	for {
		m := g.max.Load()
		if n <= m || g.max.CompareAndSwap(m, n) {
			break
		}
	}
	if n > g.limit {
		g.over.CompareAndSwap(nil, fmt.Sprintf("%s: %d functions at once (limit %d), entering %s", g.name, n, g.limit, what))
	}
}

func (g *o3Gauge) leave() { g.cur.Add(-1) }

func (g *o3Gauge) check(t *testing.T) {
	t.Helper()
	if s, ok := g.over.Load().(string); ok {
		t.Error(s)
	}
}

// o3Gauges enters and leaves several gauges together: those of a queue and of
// each of its targets.
type o3Gauges []*o3Gauge

func (gs o3Gauges) enter(what string) {
	for _, g := range gs {
		g.enter(what)
	}
}

func (gs o3Gauges) leave() {
	for _, g := range gs {
		g.leave()
	}
}

func (gs o3Gauges) check(t *testing.T) {
	t.Helper()
	for _, g := range gs {
		g.check(t)
	}
}

// o3Owners checks a serial queue with helpers: a task's body and the functions
// its helpers run with its context may overlap each other, but nothing of one
// owner (a task) may overlap anything of another, and two helper functions
// never overlap, whoever owns them (in place they take turns, as outsiders
// they are tasks of a serial queue).
type o3Owners struct {
	mu      sync.Mutex
	bodies  map[int]int
	helpers map[int]int
	nhelp   int
	bad     string
}

func newO3Owners() *o3Owners {
	return &o3Owners{bodies: map[int]int{}, helpers: map[int]int{}}
}

func (o *o3Owners) enter(helper bool, owner int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k, n := range o.bodies {
		if n > 0 && k != owner && o.bad == "" {
			o.bad = fmt.Sprintf("function of task %d (helper %v) runs while the body of task %d runs", owner, helper, k)
		}
	}
	for k, n := range o.helpers {
		if n > 0 && k != owner && o.bad == "" {
			o.bad = fmt.Sprintf("function of task %d (helper %v) runs while a helper function of task %d runs", owner, helper, k)
		}
	}
	if helper {
		if o.nhelp > 0 && o.bad == "" {
			o.bad = fmt.Sprintf("two helper functions of task %d overlap", owner)
		}
		o.helpers[owner]++
		o.nhelp++
	} else {
		o.bodies[owner]++
	}
}

func (o *o3Owners) leave(helper bool, owner int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if helper {
		o.helpers[owner]--
		o.nhelp--
	} else {
		o.bodies[owner]--
	}
}

func (o *o3Owners) check(t *testing.T) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.bad != "" {
		t.Error(o.bad)
	}
}

// o3WaitGroup waits for wg, failing the test after d: a hang is a failure.
func o3WaitGroup(t *testing.T, wg *sync.WaitGroup, d time.Duration, what string) bool {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		t.Errorf("%s: still not done after %v (hang)", what, d)
		return false
	}
}
