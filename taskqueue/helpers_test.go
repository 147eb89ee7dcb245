package taskqueue_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// A queueKind makes queues of one kind; the contract tests run on each.
type queueKind struct {
	name   string
	new    func(opts ...taskqueue.Option) *taskqueue.Queue
	serial bool // runs one task at a time
}

var kinds = []queueKind{
	{"serial", taskqueue.NewSerial, true},
	{"concurrent=1", func(opts ...taskqueue.Option) *taskqueue.Queue { return taskqueue.NewConcurrent(1, opts...) }, true},
	{"concurrent=4", func(opts ...taskqueue.Option) *taskqueue.Queue { return taskqueue.NewConcurrent(4, opts...) }, false},
	// Children run on a target's slots: every contract holds for them too.
	{"child/serial", func(opts ...taskqueue.Option) *taskqueue.Queue {
		return taskqueue.NewSerial(append(opts, taskqueue.WithTarget(taskqueue.NewConcurrent(4)))...)
	}, true},
	{"child/concurrent=4", func(opts ...taskqueue.Option) *taskqueue.Queue {
		return taskqueue.NewConcurrent(4, append(opts, taskqueue.WithTarget(taskqueue.NewConcurrent(8)))...)
	}, false},
	{"grandchild/serial", func(opts ...taskqueue.Option) *taskqueue.Queue {
		child := taskqueue.NewConcurrent(2, taskqueue.WithTarget(taskqueue.NewConcurrent(4)))
		return taskqueue.NewSerial(append(opts, taskqueue.WithTarget(child), taskqueue.WithQuantum(1))...)
	}, true},
}

// forEachKind runs test once per queue kind, each in its own synctest bubble.
func forEachKind(t *testing.T, test func(t *testing.T, k queueKind)) {
	t.Helper()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { test(t, k) })
		})
	}
}

// panics collects the panics a queue's handler receives.
type panics struct {
	mu  sync.Mutex
	got []*taskqueue.PanicError
}

func (p *panics) handler() taskqueue.Option {
	return taskqueue.WithPanicHandler(func(e *taskqueue.PanicError) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.got = append(p.got, e)
	})
}

func (p *panics) take() []*taskqueue.PanicError {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := p.got
	p.got = nil
	return got
}

// block submits tasks that take every slot of q until the returned function
// is called, and waits until they run.
func block(t *testing.T, q *taskqueue.Queue) (release func()) {
	t.Helper()
	gate := make(chan struct{})
	for range q.Stats().Limit {
		q.Go(func() { <-gate })
	}
	synctest.Wait()
	return func() { close(gate) }
}

// panicValue runs f and returns what it panicked with, or nil.
func panicValue(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// onCallerStack reports whether the calling goroutine's stack holds a frame of
// function fn.
func onCallerStack(fn string) bool {
	buf := make([]byte, 64<<10)
	return strings.Contains(string(buf[:runtime.Stack(buf, false)]), fn)
}

func nop(context.Context) error { return nil }

// isRefusal reports whether err says that a task did not run because it was
// canceled or refused.
func isRefusal(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, taskqueue.ErrClosed) || errors.Is(err, taskqueue.ErrQueueFull)
}

// liveHeap returns the bytes of live heap objects, after two collections:
// the first moves what sync.Pools hold to their victim caches, the second
// frees it.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// bubbleGoroutines returns the number of goroutines in the calling
// goroutine's testing/synctest bubble, the caller included, from the headers
// of a dump of every goroutine ("goroutine 21 [running, synctest bubble 1]:"):
// runtime.NumGoroutine counts the whole process, where goroutines of earlier
// tests may still be ending. It panics if the caller is not in a bubble.
func bubbleGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	first, _, _ := bytes.Cut(buf, []byte("\n")) // the caller's stack comes first
	i := bytes.Index(first, []byte(", synctest bubble "))
	if i < 0 {
		panic("bubbleGoroutines called outside a synctest bubble")
	}
	tag := first[i:]
	count := 0
	for line := range bytes.Lines(buf) {
		if bytes.HasPrefix(line, []byte("goroutine ")) && bytes.Contains(line, tag) {
			count++
		}
	}
	return count
}

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

// exclusive records entries into a critical section and fails when two overlap.
type exclusive struct {
	in      atomic.Int32
	overlap atomic.Int32
}

func (e *exclusive) enter() {
	if e.in.Add(1) != 1 {
		e.overlap.Add(1)
	}
}

func (e *exclusive) leave() { e.in.Add(-1) }

func mustPanic(t *testing.T, name, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("%s did not panic", name)
			return
		}
		if want != "" && !strings.Contains(fmt.Sprint(r), want) {
			t.Errorf("%s panicked with %q, want it to mention %q", name, fmt.Sprint(r), want)
		}
	}()
	f()
}
