// Package catch is where the module recovers the panics of its users' code:
// every function of a user that a queue, a scheduler, a loom or the main
// thread calls is called through Call, so that each panic is caught the same
// way, with the stack of the goroutine at the moment it panicked, and a call
// of runtime.Goexit is told apart from a panic.
package catch

import "runtime/debug"

// A Panic is a recovered panic: the value given to panic and the stack of the
// panicking goroutine, as runtime/debug.Stack formats it, taken while that
// stack was still unwinding, so that it shows where the panic happened.
type Panic struct {
	Value any
	Stack []byte
}

// Call calls f and returns nil if f returned, or the panic if f panicked.
// If f calls runtime.Goexit, Call calls goexit (if it is not nil) and the
// Goexit goes on: Call does not return, and the calling goroutine ends after
// its deferred calls have run.
func Call(f func(), goexit func()) (p *Panic) {
	normal := false
	defer func() {
		if normal {
			return
		}
		if v := recover(); v != nil {
			// Since Go 1.21 panic(nil) panics with a *runtime.PanicNilError,
			// so a nil v can only mean runtime.Goexit.
			p = &Panic{Value: v, Stack: debug.Stack()}
			return
		}
		if goexit != nil {
			goexit()
		}
	}()
	f()
	normal = true
	return nil
}

// A Safe value is a task that recovers every panic of the code it calls
// through Call, so that whoever runs it needs no recover of its own: it only
// watches for runtime.Goexit, which no recover stops.
type Safe interface {
	CatchesPanics()
}
