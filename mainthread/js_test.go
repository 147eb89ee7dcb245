//go:build js

package mainthread_test

import (
	"context"
	"testing"

	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// In a page every goroutine runs on the page's one thread: these tests check
// what the package documentation says of js/wasm. The tests of the other
// files assume callers apart from the main thread, which a page has not.

// TestInAPageEveryGoroutineIsTheMainThread: IsMain reports true everywhere.
func TestInAPageEveryGoroutineIsTheMainThread(t *testing.T) {
	if !mainthread.IsMain() {
		t.Error("IsMain() = false on a test goroutine")
	}
	other := make(chan bool)
	go func() { other <- mainthread.IsMain() }()
	if !<-other {
		t.Error("IsMain() = false on another goroutine")
	}
}

// TestInAPageRunSyncRunsInline: RunSyncOnMainThread runs its function at
// once on the caller, a panic reaching the caller, and a done context runs
// nothing.
func TestInAPageRunSyncRunsInline(t *testing.T) {
	ctx := context.Background()
	ran := false
	if err := taskqueue.RunSyncOnMainThread(ctx, func() { ran = true }); err != nil || !ran {
		t.Fatalf("RunSyncOnMainThread = %v, ran %v; want nil, true", err, ran)
	}
	func() {
		defer func() {
			if p, ok := recover().(*taskqueue.PanicError); !ok || p.Value != "boom" {
				t.Errorf("recovered %v; want the *PanicError of boom", p)
			}
		}()
		taskqueue.RunSyncOnMainThread(ctx, func() { panic("boom") })
	}()
	done, cancel := context.WithCancel(ctx)
	cancel()
	ran = false
	if err := taskqueue.RunSyncOnMainThread(done, func() { ran = true }); err != context.Canceled || ran {
		t.Errorf("RunSyncOnMainThread with a done context = %v, ran %v; want Canceled, false", err, ran)
	}
}

// TestInAPageRunAsyncPostsToTheMainLoom: RunAsyncOnMainThread queues its
// function on the main loom, which Run drives, in order, and a panic goes
// to the loom's handler.
func TestInAPageRunAsyncPostsToTheMainLoom(t *testing.T) {
	got := make(chan *loom.PanicError, 1)
	mainthread.Loom().Configure(loom.WithPanicHandler(func(p *loom.PanicError) { got <- p }))
	var order []int
	done := make(chan struct{})
	for i := range 3 {
		if err := taskqueue.RunAsyncOnMainThread(func() { order = append(order, i) }); err != nil {
			t.Fatal(err)
		}
	}
	taskqueue.RunAsyncOnMainThread(func() { panic("in a posted function") })
	taskqueue.RunAsyncOnMainThread(func() { close(done) })
	<-done
	if len(order) != 3 || order[0] != 0 || order[1] != 1 || order[2] != 2 {
		t.Errorf("posted functions ran in the order %v; want [0 1 2]", order)
	}
	if p := <-got; p.Value != "in a posted function" {
		t.Errorf("the handler got %v", p.Value)
	}
}

// TestInAPageCallRunsInline: Call and CallValue run their function at once
// on the caller and return what it returns; a done context runs nothing.
func TestInAPageCallRunsInline(t *testing.T) {
	ctx := context.Background()
	ran := false
	if err := mainthread.Call(ctx, func() error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("Call = %v, ran %v; want nil, true", err, ran)
	}
	if v, err := mainthread.CallValue(ctx, func() (int, error) { return 42, nil }); v != 42 || err != nil {
		t.Fatalf("CallValue = %d, %v; want 42, nil", v, err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if v, err := mainthread.CallValue(done, func() (int, error) { return 42, nil }); v != 0 || err != context.Canceled {
		t.Errorf("CallValue with a done context = %d, %v; want 0, Canceled", v, err)
	}
}
