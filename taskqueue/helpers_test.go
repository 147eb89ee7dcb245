package taskqueue_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
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

// panics collects the panics that a queue's handler receives: give
// taskqueue.WithPanicHandler(p.Add) to the queue.
type panics = testkit.Panics[*taskqueue.PanicError]

// block submits tasks that take every slot of q until the returned function
// is called, each started before the next is submitted, so that they take no
// room of a bounded queue; it fails t if q refuses one.
func block(t *testing.T, q *taskqueue.Queue) (release func()) {
	t.Helper()
	gate := make(chan struct{})
	for range q.Stats().Limit {
		if err := q.Go(func() { <-gate }); err != nil {
			t.Fatalf("a task to take a slot: Go = %v", err)
		}
		synctest.Wait()
	}
	return func() { close(gate) }
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

// skipHeapTestUnderRace skips a test that measures the heap when the race
// detector runs: its own allocations move the live heap by kilobytes
// between two measurements of the same state. CI's memory step runs these
// tests again without it, at full size.
func skipHeapTestUnderRace(t *testing.T) {
	t.Helper()
	if testkit.RaceEnabled {
		t.Skip("heap measurements are meaningless under the race detector")
	}
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

// newGauge returns a gauge of the functions that run at once on a queue
// (or a set of queues), which notes the first time they are more than limit.
func newGauge(name string, limit int) *testkit.Gauge {
	return &testkit.Gauge{Name: name, Limit: int64(limit)}
}

// checkGauges fails t with the report of each gauge that went over its
// limit.
func checkGauges(t *testing.T, gs ...*testkit.Gauge) {
	t.Helper()
	for _, g := range gs {
		if over := g.Over(); over != "" {
			t.Error(over)
		}
	}
}

// owners checks a serial queue with helpers: a task's body and the functions
// its helpers run with its context may overlap each other, but nothing of one
// owner (a task) may overlap anything of another, and two helper functions
// never overlap, whoever owns them (in place they take turns, as outsiders
// they are tasks of a serial queue).
type owners struct {
	mu      sync.Mutex
	bodies  map[int]int
	helpers map[int]int
	nhelp   int
	bad     string
}

func newOwners() *owners {
	return &owners{bodies: map[int]int{}, helpers: map[int]int{}}
}

func (o *owners) enter(helper bool, owner int) {
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

func (o *owners) leave(helper bool, owner int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if helper {
		o.helpers[owner]--
		o.nhelp--
	} else {
		o.bodies[owner]--
	}
}

func (o *owners) check(t *testing.T) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.bad != "" {
		t.Error(o.bad)
	}
}

// waitOrFail waits for wg, failing the test after d: a hang is a failure.
func waitOrFail(t *testing.T, wg *sync.WaitGroup, d time.Duration, what string) bool {
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

// A misuse is a call that the documentation says panics, and the message it
// panics with.
type misuse struct {
	name string
	f    func()
	want string
}

// checkMisuses calls the f of each misuse and fails t unless it panics with
// exactly its message; a panic that RunSync re-panicked in its caller counts
// by the value of its *PanicError.
func checkMisuses(t *testing.T, cases []misuse) {
	t.Helper()
	for _, c := range cases {
		v := testkit.PanicValue(c.f)
		if pe, ok := v.(*taskqueue.PanicError); ok {
			v = pe.Value
		}
		switch got := fmt.Sprint(v); {
		case v == nil:
			t.Errorf("%s did not panic; want %q", c.name, c.want)
		case got != c.want:
			t.Errorf("%s panicked with %q; want %q", c.name, got, c.want)
		}
	}
}

// runHelpers starts, for a task with context tctx, a helper for each letter
// of kinds, which does one kind of work with that context on queue on
// (gauges gs count what executes there): s, RunSync five times (in place
// when on is the task's queue or above it); a, Apply; m, Map; w, Handle.Wait
// on a task of on; g, Group.Wait on members on on. It returns once every
// helper is done.
func runHelpers(t *testing.T, tctx context.Context, on *taskqueue.Queue, gs testkit.Gauges, kinds string) {
	var wg sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	// work is what each function run on the queue does: it counts itself in
	// the gauges for a while.
	work := func(what string) {
		gs.Enter(what)
		runtime.Gosched()
		gs.Leave()
	}
	for _, k := range kinds {
		switch k {
		case 's':
			run(func() {
				for r := 0; r < 5; r++ {
					if err := on.RunSync(tctx, func(context.Context) error {
						work("RunSync in place")
						return nil
					}); err != nil {
						t.Errorf("RunSync: %v", err)
					}
				}
			})
		case 'a':
			run(func() {
				if err := taskqueue.Apply(tctx, on, 16, func(int) {
					work("Apply iteration")
				}); err != nil {
					t.Errorf("Apply: %v", err)
				}
			})
		case 'm':
			run(func() {
				res, err := taskqueue.Map(tctx, on, []int{1, 2, 3, 4, 5, 6, 7, 8}, func(_ context.Context, x int) (int, error) {
					work("Map call")
					return 2 * x, nil
				})
				if err != nil {
					t.Errorf("Map: %v", err)
					return
				}
				for i, r := range res {
					if r != 2*(i+1) {
						t.Errorf("Map result %d = %d", i, r)
					}
				}
			})
		case 'w':
			run(func() {
				h := on.RunAsync(tctx, func(context.Context) error {
					work("awaited task")
					return nil
				})
				if err := h.Wait(tctx); err != nil {
					t.Errorf("Handle.Wait: %v", err)
				}
			})
		case 'g':
			run(func() {
				g := taskqueue.NewGroup(tctx, on)
				for m := 0; m < 4; m++ {
					g.Go(func(context.Context) error {
						work("group member")
						return nil
					})
				}
				if err := g.Wait(tctx); err != nil {
					t.Errorf("Group.Wait: %v", err)
				}
			})
		}
	}
	wg.Wait()
}

// hammerTotal sets the size of the hammers, the tests named for it: how
// many tasks (or group members) each submits in all. Without it they run at
// their full size, or at a tenth or less under the race detector, which
// makes them many times slower, and with -short. The long run is
//
//	go test -count=1 -run Hammer -timeout 10m ./taskqueue -args -hammer.total=10000000
var hammerTotal = flag.Int("hammer.total", 0, "tasks each hammer test submits in all (0: its default size)")

// hammerSize returns the size of a hammer: the -hammer.total flag if set,
// else quick under the race detector or with -short, else full.
func hammerSize(quick, full int) int {
	switch {
	case *hammerTotal > 0:
		return *hammerTotal
	case testkit.RaceEnabled || testing.Short():
		return quick
	}
	return full
}

// checkRefused submits f to q in every way there is, and fails t unless
// each submission is refused with exactly want, the package's own sentinel
// error, not an error that only wraps it.
func checkRefused(t *testing.T, q *taskqueue.Queue, want error, f func(context.Context) error) {
	t.Helper()
	ctx := t.Context()
	if err := q.Go(func() { f(ctx) }); err != want {
		t.Errorf("Go = %v; want %v", err, want)
	}
	if err := q.RunAsync(ctx, f).Err(); err != want {
		t.Errorf("RunAsync: Err() = %v; want %v", err, want)
	}
	if err := q.RunBarrier(ctx, f).Err(); err != want {
		t.Errorf("RunBarrier: Err() = %v; want %v", err, want)
	}
	if err := q.RunAfter(ctx, time.Second, f).Err(); err != want {
		t.Errorf("RunAfter: Err() = %v; want %v", err, want)
	}
	if err := q.RunSync(ctx, f); err != want {
		t.Errorf("RunSync = %v; want %v", err, want)
	}
	if _, err := taskqueue.RunSync(ctx, q, func(ctx context.Context) (int, error) { return 1, f(ctx) }); err != want {
		t.Errorf("RunSync[int] = %v; want %v", err, want)
	}
}
