package mainthread_test

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// The baseline of BenchmarkRunSyncOnMainThread is the design of other main-thread packages:
// a goroutine locked to its thread serving an unbuffered channel, with a done
// channel per call.
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

func (s *lockedServer) close() {
	close(s.calls)
	s.wg.Wait()
}

// BenchmarkRunSyncOnMainThread measures a call's round trip to the real main thread, served
// by Run, against the locked-goroutine baseline; cpu-ns/op is the CPU time
// the process spends per call, spinning included.
func BenchmarkRunSyncOnMainThread(b *testing.B) {
	nop := func() {}
	b.Run("impl=mainthread", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			taskqueue.RunSyncOnMainThread(bg, nop)
		}
	})
	b.Run("impl=lockedgoroutine", func(b *testing.B) {
		b.ReportAllocs()
		s := newLockedServer()
		defer s.close()
		defer reportCPU(b)()
		for b.Loop() {
			s.call(nop)
		}
	})
}

// BenchmarkRunAsyncOnMainThread measures posting a function to the main thread.
func BenchmarkRunAsyncOnMainThread(b *testing.B) {
	b.ReportAllocs()
	nop := func() {}
	for i := 1; b.Loop(); i++ {
		taskqueue.RunAsyncOnMainThread(nop)
		if i%4096 == 0 {
			taskqueue.RunSyncOnMainThread(bg, nop) // let the main thread catch up
		}
	}
	taskqueue.RunSyncOnMainThread(bg, nop)
}

func BenchmarkIsMain(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		mainthread.IsMain()
	}
}

// bg is the context of the calls that nothing bounds.
var bg = context.Background()
