// Package baseline holds what the module's benchmarks measure against and
// the work they time: a goroutine locked to its OS thread that serves calls
// over a channel, the design of other main-thread packages, and a spin loop
// whose cost is measured once. The benchmarks of package mainthread, of the
// benchmarks module and its commands import it; it imports no package of
// the module, nor package testing, so that a command may use it.
package baseline

import (
	"runtime"
	"sync"
)

// A LockedThread is the design of golang.design/x/mainthread and
// faiface/mainthread: a goroutine locked to its OS thread serving an
// unbuffered channel of functions, with a done channel per call. It is the
// baseline that main-thread calls are measured against.
//
// Call and Close are safe for use by multiple goroutines; Call must not
// be called after or during Close.
type LockedThread struct {
	calls chan func()
	wg    sync.WaitGroup
}

// NewLockedThread starts the goroutine of a LockedThread, locked to its
// thread until Close.
func NewLockedThread() *LockedThread {
	return NewLockedThreadOn(func(serve func()) {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			serve()
		}()
	})
}

// NewLockedThreadOn is NewLockedThread for a goroutine that start provides:
// start must arrange for serve to run on it, locked to its thread, and may
// return before serve does. A program that serves the main thread starts it
// there, for a baseline on the thread its own calls go to.
func NewLockedThreadOn(start func(serve func())) *LockedThread {
	s := &LockedThread{calls: make(chan func())}
	s.wg.Add(1)
	start(func() {
		defer s.wg.Done()
		for f := range s.calls {
			f()
		}
	})
	return s
}

// Call runs f on the locked thread and blocks until it has returned. A
// panic in f ends the process, as it would in the designs this measures.
func (s *LockedThread) Call(f func()) {
	done := make(chan struct{})
	s.calls <- func() { f(); close(done) }
	<-done
}

// Close ends the goroutine once the calls made before it have run, and
// waits for it.
func (s *LockedThread) Close() {
	close(s.calls)
	s.wg.Wait()
}
