package taskqueue_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
)

// The model's watchdog: a goroutine waiting for a sync.Mutex or
// sync.RWMutex is not durably blocked for testing/synctest (another
// goroutine, outside the bubble, might unlock it), so a hang of the library
// on one of its mutexes is no deadlock of the bubble: the bubble never ends,
// and the test would wait for go test's -timeout. watchBubble tells such a
// hang from the outside, from snapshots of every goroutine.

// watchEvery is how long the watchdog lets a program run before it looks at
// its bubble, and between two looks. It is no limit of a program's time: a
// program is hung only when two looks in a row find its bubble stuck
// (stuckGoroutines), however long it runs.
const watchEvery = 10 * time.Millisecond

// A dumpedGoroutine is one goroutine of a dump of runtime.Stack.
type dumpedGoroutine struct {
	id     uint64 // its number, to find it again in the next snapshot
	state  string // what it does: "running", "sync.Mutex.Lock", "chan receive (durable)"
	bubble uint64 // its testing/synctest bubble, 0 if none
	text   string // its header and stack, as dumped
}

// dumpGoroutines returns the goroutines of a dump of runtime.Stack: every
// goroutine's with all, in one snapshot taken with the world stopped, else
// the caller's alone, whose stack may be cut short. It parses the dump
// because nothing else says what a goroutine waits on, or which bubble it
// is in: each goroutine's header says both, as "goroutine 21
// [sync.Mutex.Lock, synctest bubble 5]:", the runtime's traceback adding
// "(durable)" to a wait that only the bubble can end ("chan receive
// (durable)", "sleep (durable)"). The watchdog is its one user; goroutine
// numbers only match goroutines across its snapshots.
func dumpGoroutines(all bool) []dumpedGoroutine {
	buf := make([]byte, 1024) // the caller's header, which says its bubble
	if all {
		buf = make([]byte, max(64<<10, dumpSize.Load()*5/4))
	}
	for {
		n := runtime.Stack(buf, all)
		if n < len(buf) || !all {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf)) // a dump cut short: take a new one whole
	}
	if all {
		dumpSize.Store(int64(len(buf)))
	}
	var gs []dumpedGoroutine
	for block := range strings.SplitSeq(string(buf), "\n\n") {
		header, _, _ := strings.Cut(block, "\n")
		rest, ok := strings.CutPrefix(header, "goroutine ")
		open, end := strings.IndexByte(rest, '['), strings.LastIndex(rest, "]:")
		if !ok || open < 0 || end < open {
			continue
		}
		num, _, _ := strings.Cut(rest, " ")
		g := dumpedGoroutine{text: strings.TrimSpace(block)}
		g.id, _ = strconv.ParseUint(num, 10, 64)
		fields := rest[open+1 : end]
		g.state, _, _ = strings.Cut(fields, ", ")
		if _, b, ok := strings.Cut(fields, ", synctest bubble "); ok {
			b, _, _ = strings.Cut(b, " ") // pprof labels may follow
			g.bubble, _ = strconv.ParseUint(b, 10, 64)
		}
		gs = append(gs, g)
	}
	return gs
}

// dumpSize is the length of dumpGoroutines's last dump of every goroutine:
// the next takes one snapshot, not one per doubling of its buffer, even
// when abandoned bubbles have left thousands of goroutines.
var dumpSize atomic.Int64

// myBubble returns the caller's testing/synctest bubble, 0 outside one.
func myBubble() uint64 {
	gs := dumpGoroutines(false)
	if len(gs) == 0 {
		panic("model: the caller's goroutine header does not parse")
	}
	return gs[0].bubble
}

// mutexWait reports whether state is a wait for a sync.Mutex or a
// sync.RWMutex.
func mutexWait(state string) bool {
	switch state {
	case "sync.Mutex.Lock", "sync.RWMutex.Lock", "sync.RWMutex.RLock":
		return true
	}
	return false
}

// stuckGoroutines returns the goroutines of bubble b in snapshot gs if none
// of them can ever run again: each is blocked, durably or on a mutex, and
// at least one on a mutex; else nil. Then no goroutine of the bubble runs to
// unlock a mutex or to end a durable wait, which only the bubble's own
// goroutines can end, and the bubble's clock stands still, since the
// runtime counts a goroutine waiting for a mutex as not durably blocked, so
// no timer of the bubble fires. A mutex held outside the bubble could still
// be unlocked, but no goroutine outside a program's bubble touches its
// queues or the model's mutexes; the second snapshot, with the same
// goroutines in the same waits (watchBubble), rules out a mutex that
// something outside held for a moment, such as sync.Pool's or the testing
// package's.
func stuckGoroutines(gs []dumpedGoroutine, b uint64) []dumpedGoroutine {
	var mine []dumpedGoroutine
	mutexes := 0
	for _, g := range gs {
		if g.bubble != b {
			continue
		}
		switch {
		case mutexWait(g.state):
			mutexes++
		case !strings.HasSuffix(g.state, "(durable)"):
			return nil // running, runnable, or in a wait the outside may end
		}
		mine = append(mine, g)
	}
	if mutexes == 0 {
		return nil // durable waits alone: the runtime's own deadlock, or time to pass
	}
	return mine
}

// sameWaits reports whether two snapshots of a bubble hold the same
// goroutines, each in the same wait.
func sameWaits(a, b []dumpedGoroutine) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].id != b[i].id || a[i].state != b[i].state {
			return false
		}
	}
	return true
}

// A hang is what the watchdog found of a program whose bubble is stuck.
type hang struct {
	goroutines []dumpedGoroutine // the bubble's, in the second snapshot
	mutexes    int               // how many of them wait for a mutex
}

// watchBubble waits until ended is closed, and returns nil then, or until
// two snapshots in a row, watchEvery apart, find the goroutines of the
// bubble that *bubble names (0 until it is known) stuck, each in the same
// wait (stuckGoroutines), and returns what they show.
func watchBubble(ended <-chan struct{}, bubble *atomic.Uint64) *hang {
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	var last []dumpedGoroutine
	for {
		select {
		case <-ended:
			return nil
		case <-tick.C:
		}
		b := bubble.Load()
		if b == 0 {
			continue
		}
		stuck := stuckGoroutines(dumpGoroutines(true), b)
		if stuck != nil && sameWaits(stuck, last) {
			h := &hang{goroutines: stuck}
			for _, g := range stuck {
				if mutexWait(g.state) {
					h.mutexes++
				}
			}
			return h
		}
		last = stuck
	}
}

// hangFailure is the failure of a program that hung, the same for every
// hang of a program, so that rapid, which compares failures, shrinks it.
const hangFailure = "the program hung: every goroutine of its bubble waits, durably or for a mutex, for good (its steps and goroutines are logged below)"

// report says what hung: the program, the step its driver was in, and the
// goroutines of its bubble.
func (h *hang) report(p *program, at int) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "a program hung: in two snapshots of every goroutine, %v apart, each of the %d goroutines of its bubble was blocked, durably or on a mutex, %d of them on a mutex: none can run again, nor can the bubble's clock advance\n",
		watchEvery, len(h.goroutines), h.mutexes)
	if at < len(p.steps) {
		fmt.Fprintf(&b, "its driver was in step %d of %d\n", at, len(p.steps))
	} else {
		fmt.Fprintf(&b, "its driver was past its %d steps, resuming and shutting down the queues\n", len(p.steps))
	}
	fmt.Fprintf(&b, "the program:\n%s", p)
	fmt.Fprintf(&b, "the goroutines of its bubble (they are abandoned, and leak):\n")
	for _, g := range h.goroutines {
		fmt.Fprintf(&b, "\n%s\n", g.text)
	}
	return b.String()
}

// TestDumpGoroutines: the dump tells each goroutine's bubble, the same for
// the goroutines of one bubble, another for the next, none outside one.
func TestDumpGoroutines(t *testing.T) {
	if b := myBubble(); b != 0 {
		t.Errorf("outside a bubble, myBubble() = %d; want 0", b)
	}
	var first uint64
	synctest.Test(t, func(t *testing.T) {
		first = myBubble()
		var other atomic.Uint64
		go func() { other.Store(myBubble()) }()
		synctest.Wait()
		if first == 0 || other.Load() != first {
			t.Errorf("myBubble() = %d on the bubble's goroutine, %d on one it started; want the same, not 0", first, other.Load())
		}
	})
	synctest.Test(t, func(t *testing.T) {
		if b := myBubble(); b == 0 || b == first {
			t.Errorf("myBubble() = %d in the next bubble, %d in the first; want another, not 0", b, first)
		}
	})
}

// TestStuckGoroutines: a bubble is stuck only when each of its goroutines
// is blocked, durably or on a mutex, one at least on a mutex; goroutines of
// other bubbles and outside any do not count.
func TestStuckGoroutines(t *testing.T) {
	g := func(id, bubble uint64, state string) dumpedGoroutine {
		return dumpedGoroutine{id: id, bubble: bubble, state: state}
	}
	outside := []dumpedGoroutine{g(1, 0, "running"), g(2, 0, "sync.Mutex.Lock"), g(3, 9, "runnable")}
	for _, c := range []struct {
		name  string
		gs    []dumpedGoroutine
		stuck int // goroutines returned, 0 for nil
	}{
		{"a mutex held by a durably blocked goroutine", []dumpedGoroutine{g(5, 7, "synctest.Run (durable)"), g(6, 7, "chan receive (durable)"), g(8, 7, "sync.Mutex.Lock")}, 3},
		{"read and write locks", []dumpedGoroutine{g(5, 7, "sync.RWMutex.RLock"), g(6, 7, "sync.RWMutex.Lock"), g(8, 7, "sleep (durable)")}, 3},
		{"durable waits alone", []dumpedGoroutine{g(5, 7, "synctest.Run (durable)"), g(6, 7, "select (durable)")}, 0},
		{"a goroutine that runs", []dumpedGoroutine{g(5, 7, "sync.Mutex.Lock"), g(6, 7, "running")}, 0},
		{"a goroutine that may run", []dumpedGoroutine{g(5, 7, "sync.Mutex.Lock"), g(6, 7, "runnable")}, 0},
		{"a wait the outside may end", []dumpedGoroutine{g(5, 7, "sync.Mutex.Lock"), g(6, 7, "select")}, 0},
		{"a system call", []dumpedGoroutine{g(5, 7, "sync.Mutex.Lock"), g(6, 7, "syscall")}, 0},
	} {
		got := stuckGoroutines(append(slices.Clone(outside), c.gs...), 7)
		if len(got) != c.stuck {
			t.Errorf("%s: %d goroutines stuck; want %d", c.name, len(got), c.stuck)
		}
	}
}

// TestWatchdogFindsAMutexHang: a task of a program that locks a mutex it
// holds, while the driver waits for the task's queue, hangs the program for
// good; runProgram returns with what the watchdog found, which names the
// step and shows the waits, instead of waiting for go test's timeout. Then
// the test unlocks the mutex, from outside the bubble, and the program ends
// as if nothing had happened: nothing leaks.
func TestWatchdogFindsAMutexHang(t *testing.T) {
	var mu sync.Mutex
	var freed atomic.Bool // the hang ended: the test unlocked the mutex
	p := &program{
		queues: []mqueue{{parent: -1, serial: true, limit: 1}},
		steps: []step{
			{kind: stepSubmit, form: formRunAsync, ctx: -1, body: body{ops: []inner{{kind: innerHang}}}},
			{kind: stepSubmit, form: formRunSync, ctx: -1}, // waits for the task's slot
		},
		hang: func() {
			mu.Lock()
			mu.Lock() // for good, until the test unlocks it
			freed.Store(true)
			mu.Unlock()
		},
	}
	ctx, cancel := testkit.BeforeDeadline(t, context.Background())
	defer cancel()
	got := make(chan *run, 1)
	start := time.Now()
	go func() { got <- runProgram(t, p) }()
	var r *run
	select {
	case r = <-got:
	case <-ctx.Done():
		mu.Unlock()
		t.Fatal("runProgram did not return by the test's deadline: the watchdog missed the hang")
	}
	t.Logf("the hang reported after %v", time.Since(start))
	if r.hung == nil {
		t.Fatal("runProgram returned without a hang")
	}
	if r.hung.mutexes != 1 || len(r.hung.goroutines) < 3 {
		t.Errorf("the hang: %d goroutines, %d on a mutex; want 3 or more, 1", len(r.hung.goroutines), r.hung.mutexes)
	}
	var locker, driver bool
	for _, g := range r.hung.goroutines {
		if g.bubble != r.bubble.Load() {
			t.Errorf("a goroutine of bubble %d in the hang of bubble %d", g.bubble, r.bubble.Load())
		}
		locker = locker || g.state == "sync.Mutex.Lock" && strings.Contains(g.text, "TestWatchdogFindsAMutexHang.func")
		driver = driver || strings.HasSuffix(g.state, "(durable)") && strings.Contains(g.text, "taskqueue.(*Queue).RunSync")
	}
	if !locker || !driver {
		t.Errorf("the hang shows the task that locks twice: %v, the driver in RunSync: %v; want both", locker, driver)
	}
	report := r.hung.report(p, int(r.at.Load()))
	for _, want := range []string{"a program hung", "its driver was in step 1 of 2", "step 0 {kind:0", "step 1 {kind:0", "sync.Mutex.Lock, synctest bubble"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	mu.Unlock()
	select {
	case <-r.ended:
	case <-ctx.Done():
		t.Fatal("the program did not end once its mutex was unlocked")
	}
	if r.failure != "" {
		t.Errorf("once unlocked, the program failed: %s", r.failure)
	}
}

// hangFlag is what the child of TestModelReportsAHang runs TestModel with.
const hangFlag = "-model.hang"

// TestModelReportsAHang: TestModel with tasks that lock a mutex they hold
// (-model.hang, in a child process, since the hung bubbles leak) fails
// instead of waiting for go test's timeout: with the failure rapid shrank
// and the way to reproduce it, and the report of the smallest program that
// hung, with its steps and the stacks of its bubble, the lock twice among
// them. rapid shrinks for 100ms here, not its 30s.
func TestModelReportsAHang(t *testing.T) {
	if testing.Short() {
		t.Skip("runs TestModel in a child process until it fails")
	}
	if runtime.GOOS == "js" {
		t.Skip("js/wasm runs no child processes")
	}
	start := time.Now()
	out, err := testkit.RunChild(t, nil, "-test.run=^TestModel$", hangFlag, "-rapid.nofailfile", "-rapid.shrinktime=100ms")
	t.Logf("the child failed after %v", time.Since(start))
	if err == nil {
		t.Fatalf("the child passed:\n%s", out)
	}
	for _, want := range []string{"--- FAIL: TestModel", hangFailure, "-rapid.seed=", "a program hung", "the program:\n", "step 0 {", "sync.Mutex.Lock, synctest bubble", "taskqueue_test.lockTwice"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the child's output lacks %q:\n%s", want, out)
			break
		}
	}
	if bytes.Contains(out, []byte("test timed out")) {
		t.Errorf("the child timed out:\n%s", out)
	}
}
