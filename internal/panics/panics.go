// Package panics calls the functions of users for the packages above the
// scheduler (taskqueue, loom, mainthread) and turns their panics into the
// module's one error type for them, *scheduler.PanicError. The recover itself
// happens in package catch, the module's one place for it.
package panics

import (
	"github.com/taskqueue-go/taskqueue/internal/catch"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// Recover calls f and returns nil if it returned, or, if it panicked, the
// panic as a *scheduler.PanicError with the stack of the panic and source as
// its Source. If f calls runtime.Goexit, Recover calls goexit (if not nil)
// and the Goexit goes on. A panic whose value is a *scheduler.PanicError
// already, re-panicked by a caller that received it, keeps its stack and
// source.
func Recover(source string, f func(), goexit func()) *scheduler.PanicError {
	p := catch.Call(f, goexit)
	if p == nil {
		return nil
	}
	if pe, ok := p.Value.(*scheduler.PanicError); ok {
		return pe
	}
	return &scheduler.PanicError{Value: p.Value, Stack: p.Stack, Source: source}
}
