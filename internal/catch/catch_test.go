package catch_test

import (
	"bytes"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/taskqueue-go/taskqueue/internal/catch"
)

func TestReturn(t *testing.T) {
	ran := false
	if p := catch.Call(func() { ran = true }, nil); p != nil || !ran {
		t.Fatalf("Call(returning f) = %v, ran %v; want nil, true", p, ran)
	}
}

func here() { panic(errors.New("boom")) }

func TestPanic(t *testing.T) {
	p := catch.Call(here, func() { t.Error("goexit called for a panic") })
	if p == nil {
		t.Fatal("Call(panicking f) = nil")
	}
	if err, ok := p.Value.(error); !ok || err.Error() != "boom" {
		t.Errorf("Value = %v; want the error boom", p.Value)
	}
	if !bytes.Contains(p.Stack, []byte("catch_test.here")) {
		t.Errorf("the stack does not show where the panic happened:\n%s", p.Stack)
	}
}

func TestPanicNil(t *testing.T) {
	p := catch.Call(func() { panic(nil) }, func() { t.Error("goexit called for panic(nil)") })
	if p == nil {
		t.Fatal("Call(panic(nil)) = nil")
	}
	if _, ok := p.Value.(*runtime.PanicNilError); !ok {
		t.Errorf("Value = %T; want *runtime.PanicNilError", p.Value)
	}
}

func TestGoexit(t *testing.T) {
	var wg sync.WaitGroup
	called, returned := false, false
	wg.Go(func() {
		catch.Call(runtime.Goexit, func() { called = true })
		returned = true
	})
	wg.Wait()
	if !called || returned {
		t.Errorf("goexit called %v, Call returned %v; want true, false", called, returned)
	}
}
