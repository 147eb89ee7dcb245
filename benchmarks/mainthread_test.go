package benchmarks

import (
	"context"
	"runtime"
	"sync"
	"testing"

	_ "github.com/taskqueue-go/taskqueue/mainthread" // serves the main thread
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// lockedServer is the design of golang.design/x/mainthread and
// faiface/mainthread (neither is served by the module proxy): a goroutine
// locked to its thread serving an unbuffered channel, and a done channel per
// call.
type lockedServer struct {
	calls chan func()
	wg    sync.WaitGroup
}

func newLockedServer() *lockedServer {
	s := &lockedServer{calls: make(chan func())}
	s.wg.Go(func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for f := range s.calls {
			f()
		}
	})
	return s
}

func (s *lockedServer) call(f func()) {
	done := make(chan struct{})
	s.calls <- func() { f(); close(done) }
	<-done
}

// BenchmarkMainThreadCall measures a synchronous call's round trip to the
// real main thread, served by mainthread.Run, against the locked-goroutine
// design.
func BenchmarkMainThreadCall(b *testing.B) {
	nop := func() {}
	b.Run("impl=mainthread", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		defer ReportCPU(b)()
		for b.Loop() {
			taskqueue.RunSyncOnMainThread(ctx, nop)
		}
	})
	b.Run("impl=lockedgoroutine", func(b *testing.B) {
		s := newLockedServer()
		defer func() { close(s.calls); s.wg.Wait() }()
		b.ReportAllocs()
		defer ReportCPU(b)()
		for b.Loop() {
			s.call(nop)
		}
	})
}
