package panics_test

import (
	"bytes"
	"runtime"
	"sync"
	"testing"

	"github.com/taskqueue-go/taskqueue/internal/panics"
)

func boom() { panic("boom") }

// TestRecover: Recover returns nil for a function that returns, and for one
// that panics a *scheduler.PanicError with the value, the stack of the
// panic and the source; one that panics with a *scheduler.PanicError, as a
// caller does that received one, keeps it as it is.
func TestRecover(t *testing.T) {
	if p := panics.Recover("q", func() {}, nil); p != nil {
		t.Errorf("Recover(returning f) = %v; want nil", p)
	}
	p := panics.Recover("loader", boom, nil)
	if p == nil || p.Value != "boom" || p.Source != "loader" {
		t.Fatalf("Recover(panicking f) = %#v; want the value boom from loader", p)
	}
	if !bytes.Contains(p.Stack, []byte("panics_test.boom")) {
		t.Errorf("the stack does not show where the panic happened:\n%s", p.Stack)
	}
	if again := panics.Recover("outer", func() { panic(p) }, nil); again != p {
		t.Errorf("Recover of a re-panicked PanicError = %v; want the same PanicError", again)
	}
}

// TestRecoverGoexit: for a function that calls runtime.Goexit, Recover calls
// goexit and the Goexit goes on.
func TestRecoverGoexit(t *testing.T) {
	var wg sync.WaitGroup
	called, returned := false, false
	wg.Go(func() {
		panics.Recover("q", runtime.Goexit, func() { called = true })
		returned = true
	})
	wg.Wait()
	if !called || returned {
		t.Errorf("goexit called %v, Recover returned %v; want true, false", called, returned)
	}
}
