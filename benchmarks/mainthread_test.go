package benchmarks

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/internal/testkit/baseline"
	_ "github.com/taskqueue-go/taskqueue/mainthread" // serves the main thread
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// spinningServer is the locked-goroutine design with the spin that
// mainthread.Run has: after each call the server polls for the next one for
// up to spinFor before it parks, and a caller polls for its result for as
// long before it parks. It is the like-for-like baseline of a spinning main
// loop.
type spinningServer struct {
	next    atomic.Pointer[spinCall]
	wake    chan struct{}
	stop    atomic.Bool
	wg      sync.WaitGroup
	spinFor time.Duration
}

type spinCall struct {
	f    func()
	done atomic.Bool
	ch   chan struct{}
}

func newSpinningServer(spinFor time.Duration) *spinningServer {
	s := &spinningServer{wake: make(chan struct{}, 1), spinFor: spinFor}
	s.wg.Go(func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for !s.stop.Load() {
			c := s.poll()
			if c == nil {
				<-s.wake
				continue
			}
			c.f()
			c.done.Store(true)
			close(c.ch)
		}
	})
	return s
}

// poll waits for a call for up to spinFor, then returns nil.
func (s *spinningServer) poll() *spinCall {
	start := time.Now()
	for i := 0; ; i++ {
		if c := s.next.Swap(nil); c != nil {
			return c
		}
		if i%256 == 255 && time.Since(start) > s.spinFor {
			return nil
		}
	}
}

func (s *spinningServer) Call(f func()) {
	c := &spinCall{f: f, ch: make(chan struct{})}
	s.next.Store(c)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	start := time.Now()
	for i := 0; !c.done.Load(); i++ {
		if i%256 == 255 && time.Since(start) > s.spinFor {
			<-c.ch
			return
		}
	}
}

func (s *spinningServer) Close() {
	s.stop.Store(true)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	s.wg.Wait()
}

// BenchmarkMainThreadCall measures a synchronous call's round trip to the
// real main thread, served by mainthread.Run with its default spin of 50µs
// (the loop polls for work after a frame while polling pays, and callers
// poll for their outcome while it does), against the locked-goroutine design
// of other main-thread packages, parking (impl=lockedgoroutine) and with the
// same spin on both sides, always (impl=lockedgoroutine-spin, the
// like-for-like baseline), and parking on the main thread itself
// (impl=lockedgoroutine-mainthread, which serves from one call to the main
// loop). The calls come back to back from one goroutine, as a renderer's
// do. cpu-ns/op is the CPU time the process spends a call,
// polling included. With GOMAXPROCS=1 nobody polls in mainthread, and the
// spinning baseline's every poll keeps the other side from running until it
// ends.
func BenchmarkMainThreadCall(b *testing.B) {
	nop := func() {}
	b.Run("impl=mainthread", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		defer testkit.ReportCPU(b)()
		for b.Loop() {
			taskqueue.RunSyncOnMainThread(ctx, nop)
		}
	})
	b.Run("impl=lockedgoroutine-spin", func(b *testing.B) {
		s := newSpinningServer(50 * time.Microsecond)
		defer s.Close()
		b.ReportAllocs()
		defer testkit.ReportCPU(b)()
		for b.Loop() {
			s.Call(nop)
		}
	})
	for _, on := range []string{"", "-mainthread"} {
		b.Run("impl=lockedgoroutine"+on, func(b *testing.B) {
			var s *baseline.LockedThread
			if on == "" {
				s = baseline.NewLockedThread()
			} else {
				s = baseline.NewLockedThreadOn(serveOnMain)
			}
			defer s.Close()
			b.ReportAllocs()
			defer testkit.ReportCPU(b)()
			for b.Loop() {
				s.Call(nop)
			}
		})
	}
}

// serveOnMain runs serve on the main thread, as one call that holds the main
// loop until serve returns: the locked-goroutine design on the thread that
// impl=mainthread's calls go to, which the kernel may wake at another cost
// than a thread of the runtime's own.
func serveOnMain(serve func()) {
	go taskqueue.RunSyncOnMainThread(context.Background(), serve)
}
