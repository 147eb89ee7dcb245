package scheduler

import (
	"fmt"
	"io"

	"github.com/taskqueue-go/taskqueue/internal/catch"
)

// PanicError is a panic recovered from a task, with the stack of the goroutine
// that panicked. The taskqueue, loom and mainthread packages report panics with
// this same type.
//
// Its Error method is one line, "panic: " and the value (with where it was
// recovered, if that has a name); the stack is in the Stack field, and
// formatting with %+v prints the line followed by the stack.
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

// recoverIn calls f and returns nil if it returned, or, if it panicked, the
// panic as a *PanicError with the stack of the panic and source as its
// Source. If f calls runtime.Goexit, recoverIn calls goexit (if not nil) and
// the Goexit goes on. A panic whose value is a *PanicError already,
// re-panicked by a caller that received it, keeps its stack and source.
func recoverIn(source string, f func(), goexit func()) *PanicError {
	p := catch.Call(f, goexit)
	if p == nil {
		return nil
	}
	if pe, ok := p.Value.(*PanicError); ok {
		return pe
	}
	return &PanicError{Value: p.Value, Stack: p.Stack, Source: source}
}

// Error returns "panic: " and the panic value, or "panic in NAME: " and the
// value if it was recovered where a name was given: one line. The stack is
// in Stack, and in the %+v format.
func (p *PanicError) Error() string {
	if p.Source != "" {
		return fmt.Sprintf("panic in %s: %v", p.Source, p.Value)
	}
	return fmt.Sprintf("panic: %v", p.Value)
}

// Format prints Error's line for %v and %s, and, for %+v, the line followed
// by a blank line and the stack of the panic.
func (p *PanicError) Format(f fmt.State, verb rune) {
	switch verb {
	case 'v', 's':
		io.WriteString(f, p.Error())
		if verb == 'v' && f.Flag('+') && len(p.Stack) > 0 {
			io.WriteString(f, "\n\n")
			f.Write(p.Stack)
		}
	case 'q':
		fmt.Fprintf(f, "%q", p.Error())
	default:
		fmt.Fprintf(f, "%%!%c(*scheduler.PanicError=%s)", verb, p.Error())
	}
}

// Unwrap returns the panic value if it is an error, so that errors.Is and
// errors.As see through a PanicError, and nil otherwise.
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}
