package taskqueue_test

import (
	"context"
	"errors"
	"testing"

	"github.com/taskqueue-go/taskqueue/internal/mainhook"
	_ "github.com/taskqueue-go/taskqueue/mainthread" // installs the main-thread entry points
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestClosedErrorsMatchErrClosed: the closed errors of the main-thread
// helpers match this package's ErrClosed and keep the main loop's text.
func TestClosedErrorsMatchErrClosed(t *testing.T) {
	if mainhook.ErrClosed == nil {
		t.Fatal("package mainthread, imported by these tests, installed no closed error")
	}
	err := taskqueue.MainError(mainhook.ErrClosed)
	if !errors.Is(err, taskqueue.ErrClosed) || !errors.Is(err, mainhook.ErrClosed) {
		t.Errorf("the closed error of RunAsyncOnMainThread, %v, matches ErrClosed %v and the main loop's %v; want both",
			err, errors.Is(err, taskqueue.ErrClosed), errors.Is(err, mainhook.ErrClosed))
	}
	if err.Error() != mainhook.ErrClosed.Error() {
		t.Errorf("its text is %q; want mainthread's", err)
	}
	if err := taskqueue.MainError(context.Canceled); err != context.Canceled {
		t.Errorf("other errors are changed: %v", err)
	}
}

// TestNoMainThreadIsNotAHang: in a program that does not import package
// mainthread, nothing serves the main thread, and the helpers say so at once.
func TestNoMainThreadIsNotAHang(t *testing.T) {
	taskqueue.WithoutMainThread(func() {
		if err := taskqueue.RunSyncOnMainThread(context.Background(), func() {}); err != taskqueue.ErrNoMainThread {
			t.Errorf("RunSyncOnMainThread = %v; want ErrNoMainThread", err)
		}
		if err := taskqueue.RunAsyncOnMainThread(func() {}); err != taskqueue.ErrNoMainThread {
			t.Errorf("RunAsyncOnMainThread = %v; want ErrNoMainThread", err)
		}
	})
}

// TestMainThreadMisuse: the main-thread helpers panic with a nil function or
// a nil context.
func TestMainThreadMisuse(t *testing.T) {
	checkMisuses(t, []misuse{
		{"RunSyncOnMainThread(nil)", func() { taskqueue.RunSyncOnMainThread(context.Background(), nil) }, "taskqueue: RunSyncOnMainThread with a nil function"},
		{"RunSyncOnMainThread with a nil context", func() {
			var none context.Context
			taskqueue.RunSyncOnMainThread(none, func() {})
		}, "taskqueue: RunSyncOnMainThread with a nil context"},
		{"RunAsyncOnMainThread(nil)", func() { taskqueue.RunAsyncOnMainThread(nil) }, "taskqueue: RunAsyncOnMainThread(nil)"},
	})
}
