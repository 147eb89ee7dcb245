package loom_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, testkit.LeakOptions()...)
}

// The helpers below are shared by the package's tests; those that other
// packages need too are in internal/testkit.

// recorder records what a test's callbacks did, in order, from any
// goroutine. With a loom, each entry names the frame in which it was
// recorded, as "3:resumed".
type recorder struct {
	l   *loom.Loom // nil: the entries name no frame
	log testkit.Log
}

// add records s.
func (r *recorder) add(s string) {
	if r.l != nil {
		s = fmt.Sprintf("%d:%s", r.l.Frame(), s)
	}
	r.log.Add(s)
}

// note returns a function that records s.
func (r *recorder) note(s string) func() { return func() { r.add(s) } }

// take returns what was recorded since the last take.
func (r *recorder) take() []string { return r.log.Take() }

// expect fails the test, naming the moment when, unless what was recorded
// since the last take is want.
func (r *recorder) expect(t *testing.T, when string, want ...string) {
	t.Helper()
	if got := r.take(); !slices.Equal(got, want) {
		t.Errorf("%s: recorded\n  %q\nwant\n  %q", when, got, want)
	}
}

// panics collects what a loom's panic handler is given:
// loom.WithPanicHandler(p.Add).
type panics = testkit.Panics[*loom.PanicError]

// testLoom returns a loom with a manual clock and opts, whose panic handler
// collects what it is given, and which is closed when the test ends.
func testLoom(t *testing.T, opts ...loom.Option) (*loom.Loom, *panics) {
	t.Helper()
	p := new(panics)
	l := loom.New(append([]loom.Option{loom.ManualClock(), loom.WithPanicHandler(p.Add)}, opts...)...)
	t.Cleanup(l.Close)
	return l, p
}

// update runs one frame of a millisecond on l, a loom with a manual clock,
// and fails the test if a panic escapes it: a panic of the program's code
// must reach the panic handler, never the loop.
func update(t *testing.T, l *loom.Loom) {
	t.Helper()
	if v := testkit.PanicValue(func() { l.UpdateDelta(time.Millisecond) }); v != nil {
		t.Fatalf("a panic escaped frame %d: %v", l.Frame(), v)
	}
}

// frames runs n frames of dt each on l, a loom with a manual clock.
func frames(l *loom.Loom, n int, dt time.Duration) {
	for range n {
		l.UpdateDelta(dt)
	}
}

// serveOnWake calls frame on a goroutine of its own each time l wakes it
// (Idle's Wake channel), as a loop that sleeps between frames does, until
// the function it returns is called, which waits for that goroutine to end.
func serveOnWake(l *loom.Loom, frame func()) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		wake := l.Idle().Wake
		for {
			select {
			case <-quit:
				return
			case <-wake:
				frame()
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// misuse is a call that must panic with a message that names it.
type misuse struct {
	f    func()
	want string // the panic's message
}

// checkMisuse fails the test for each call that does not panic with its
// message.
func checkMisuse(t *testing.T, calls ...misuse) {
	t.Helper()
	for _, c := range calls {
		if got := testkit.PanicMessage(c.f); got != c.want {
			t.Errorf("panicked with %q; want %q", got, c.want)
		}
	}
}

// observeFrames sets an observer on l and returns a function that reports
// the last frame it saw: the statistics of l's last frame.
func observeFrames(l *loom.Loom) func() loom.FrameStats {
	var last loom.FrameStats
	l.Configure(loom.WithFrameObserver(func(fs loom.FrameStats) { last = fs }))
	return func() loom.FrameStats { return last }
}

// waitable is a Waitable made of a channel, which the test closes.
type waitable chan struct{}

func (w waitable) Done() <-chan struct{} { return w }

// future is a Waitable with an error, ended by the test.
type future struct {
	ch  chan struct{}
	err error
}

func newFuture() *future { return &future{ch: make(chan struct{})} }

func (f *future) Done() <-chan struct{} { return f.ch }
func (f *future) Err() error            { return f.err }
func (f *future) end(err error)         { f.err = err; close(f.ch) }

// keepWaiter is a KeepWaiter that keeps waiting for n polls.
type keepWaiter struct{ n int }

func (k *keepWaiter) KeepWaiting() bool {
	k.n--
	return k.n >= 0
}

// panickyWaiter is a KeepWaiter whose KeepWaiting panics.
type panickyWaiter struct{}

func (panickyWaiter) KeepWaiting() bool { panic("boom in KeepWaiting") }

// panickyWaitable is a Waitable whose Done panics.
type panickyWaitable struct{}

func (panickyWaitable) Done() <-chan struct{} { panic("boom in Done") }
