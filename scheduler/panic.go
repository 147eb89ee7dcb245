package scheduler

import (
	"fmt"
	"runtime/debug"
)

// PanicError is a panic recovered from a task, with the stack of the goroutine
// that panicked. The taskqueue, loom and mainthread packages report panics with
// this same type.
type PanicError struct {
	// Value is the value passed to panic.
	Value any
	// Stack is the stack of the panicking goroutine at the time of the panic,
	// as formatted by runtime/debug.Stack.
	Stack []byte
	// Source names where the panic was recovered: the name of the
	// scheduler, queue or loom (see WithName), or "" if it has none.
	Source string
}

// NewPanicError returns a PanicError for the panic value v with the stack of
// the calling goroutine. Call it from the deferred function that recovered v,
// so that the stack still shows where the panic happened.
func NewPanicError(v any) *PanicError {
	return &PanicError{Value: v, Stack: debug.Stack()}
}

// Error returns the panic value, where it was recovered if that has a name,
// and the stack of the panicking goroutine.
func (p *PanicError) Error() string {
	if p.Source != "" {
		return fmt.Sprintf("panic in %s: %v\n\n%s", p.Source, p.Value, p.Stack)
	}
	return fmt.Sprintf("panic: %v\n\n%s", p.Value, p.Stack)
}

// Unwrap returns the panic value if it is an error, so that errors.Is and
// errors.As see through a PanicError, and nil otherwise.
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}
