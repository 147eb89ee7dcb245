package baseline_test

import (
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/internal/testkit/baseline"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, testkit.LeakOptions()...) }

// TestLockedThread: calls, from several goroutines, each run once, one at a
// time, and have run when Call returns; Close ends the goroutine (goleak
// checks it).
func TestLockedThread(t *testing.T) {
	s := baseline.NewLockedThread()
	var wg sync.WaitGroup
	n, running, most := 0, 0, 0 // written only on the locked thread
	for range 4 {
		wg.Go(func() {
			for range 100 {
				s.Call(func() {
					running++
					most = max(most, running)
					n++
					running--
				})
			}
		})
	}
	wg.Wait()
	var got int
	s.Call(func() { got = n })
	s.Close()
	if got != 400 || most != 1 {
		t.Errorf("%d calls ran, at most %d at once; want 400, 1", got, most)
	}
}

// TestSpinRounds: the rounds grow with the duration, and are at least one.
func TestSpinRounds(t *testing.T) {
	if n := baseline.SpinRounds(0); n != 1 {
		t.Errorf("SpinRounds(0) = %d; want 1", n)
	}
	us, ms := baseline.SpinRounds(time.Microsecond), baseline.SpinRounds(time.Millisecond)
	if ms < us || ms < 1000 {
		t.Errorf("SpinRounds(1µs) = %d, SpinRounds(1ms) = %d; want the second at least the first, and 1000 or more", us, ms)
	}
	baseline.Spin(us)
}

// TestLockedThreadOn: the goroutine that start provides serves the calls,
// start is called once, and serve returns on Close.
func TestLockedThreadOn(t *testing.T) {
	starts, served := 0, make(chan struct{})
	s := baseline.NewLockedThreadOn(func(serve func()) {
		starts++
		go func() {
			serve()
			close(served)
		}()
	})
	n := 0
	for range 10 {
		s.Call(func() { n++ })
	}
	s.Close()
	<-served
	if starts != 1 || n != 10 {
		t.Errorf("start called %d times, %d calls ran; want 1 and 10", starts, n)
	}
}
