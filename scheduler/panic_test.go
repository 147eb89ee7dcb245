package scheduler_test

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// TestPanicErrorText: Error is one line, with the source when there is one;
// %v and %s print it, %+v adds the stack after a blank line, %q quotes it,
// and another verb says what it got.
func TestPanicErrorText(t *testing.T) {
	stack := []byte("goroutine 7 [running]:\nmain.f()\n")
	named := &scheduler.PanicError{Value: "boom", Stack: stack, Source: "loader"}
	unnamed := &scheduler.PanicError{Value: 42}
	cases := []struct {
		format string
		p      *scheduler.PanicError
		want   string
	}{
		{"%v", named, "panic in loader: boom"},
		{"%s", named, "panic in loader: boom"},
		{"%+v", named, "panic in loader: boom\n\n" + string(stack)},
		{"%q", named, `"panic in loader: boom"`},
		{"%d", named, "%!d(*scheduler.PanicError=panic in loader: boom)"},
		{"%v", unnamed, "panic: 42"},
		{"%+v", unnamed, "panic: 42"}, // no stack to print
	}
	for _, c := range cases {
		if got := fmt.Sprintf(c.format, c.p); got != c.want {
			t.Errorf("Sprintf(%q, %#v) = %q; want %q", c.format, c.p.Value, got, c.want)
		}
	}
	if got := named.Error(); got != "panic in loader: boom" {
		t.Errorf("Error() = %q; want %q", got, "panic in loader: boom")
	}
}

// TestPanicErrorUnwrap: a PanicError unwraps to its value when that is an
// error, so that errors.Is and errors.As see through it.
func TestPanicErrorUnwrap(t *testing.T) {
	err := &fs.PathError{Op: "open", Path: "a.png", Err: fs.ErrNotExist}
	p := &scheduler.PanicError{Value: err}
	var pe *fs.PathError
	if !errors.Is(p, fs.ErrNotExist) || !errors.As(p, &pe) || pe != err {
		t.Errorf("errors.Is and errors.As do not see %v through a PanicError", err)
	}
	if got := (&scheduler.PanicError{Value: "boom"}).Unwrap(); got != nil {
		t.Errorf("Unwrap of a PanicError whose value is no error = %v; want nil", got)
	}
}

// TestRepanickedPanicErrorKeepsItsStack: an item that panics with a
// *PanicError, as a caller does that received one and panics again, hands
// the handler that same PanicError, with its stack and source, not one
// about the second panic.
func TestRepanickedPanicErrorKeepsItsStack(t *testing.T) {
	var panics testkit.Panics[*scheduler.PanicError]
	s := scheduler.New(1, scheduler.WithName("outer"), scheduler.WithPanicHandler(panics.Add))
	first := &scheduler.PanicError{Value: "boom", Stack: []byte("the first stack"), Source: "inner"}
	s.Enqueue(scheduler.Func(func() { panic(first) }))
	mustWait(t, s)
	if got := panics.Take(); len(got) != 1 || got[0] != first {
		t.Errorf("the handler got %v; want the PanicError the item panicked with", got)
	}
}
