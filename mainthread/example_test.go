//go:build !js

package mainthread_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// A program serves the main thread with Run and does its work in app, on
// another goroutine. (This example is not run: a test binary's main
// goroutine is already serving, as in this package's TestMain.)
func ExampleRun() {
	mainthread.Run(func() {
		// Create the window, the GL context... on the main thread.
		taskqueue.RunSyncOnMainThread(context.Background(), func() { fmt.Println("on the main thread:", mainthread.IsMain()) })
	})
}

func ExampleRun_sync() {
	ctx := context.Background()
	fmt.Println("caller on the main thread:", mainthread.IsMain())
	var size int
	taskqueue.RunSyncOnMainThread(ctx, func() {
		fmt.Println("function on the main thread:", mainthread.IsMain())
		size = 640 * 480 // say, a query that only the main thread may make
	})
	fmt.Println(size)
	// Output:
	// caller on the main thread: false
	// function on the main thread: true
	// 307200
}

// Call runs a function that can fail on the main thread and returns its
// error, as a GL or windowing call made from a worker would.
func ExampleCall() {
	errNoContext := errors.New("no GL context")
	err := mainthread.Call(context.Background(), func() error {
		if !mainthread.IsMain() {
			return errors.New("off the main thread")
		}
		return errNoContext // what the main-thread API reported
	})
	fmt.Println(err, errors.Is(err, errNoContext))
	// Output: no GL context true
}

// CallValue returns what the function returns: here a value that only the
// main thread may read, as a window's framebuffer size.
func ExampleCallValue() {
	size, err := mainthread.CallValue(context.Background(), func() ([2]int, error) {
		return [2]int{640, 480}, nil // say, window.GetFramebufferSize()
	})
	fmt.Println(size, err)
	// Output: [640 480] <nil>
}

// A panic on the main thread reaches the caller of Call as a
// *taskqueue.PanicError, which says it was recovered in the main loom; the
// main loop serves on.
func ExampleCall_panic() {
	defer func() {
		p := recover().(*taskqueue.PanicError)
		fmt.Println(p)
		v, err := mainthread.CallValue(context.Background(), func() (string, error) { return "still serving", nil })
		fmt.Println(v, err)
	}()
	mainthread.Call(context.Background(), func() error { panic("shader compile failed") })
	// Output:
	// panic in main: shader compile failed
	// still serving <nil>
}

// A caller bounds its wait with a context: here the main thread is busy
// with a long job, and the caller gives up when its deadline passes. Its
// function never runs: the main thread skips it once it is free.
func ExampleRun_timeout() {
	started, finish := make(chan struct{}), make(chan struct{})
	taskqueue.RunAsyncOnMainThread(func() { close(started); <-finish }) // the long job
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := taskqueue.RunSyncOnMainThread(ctx, func() { fmt.Println("never printed") })
	fmt.Println(err)
	close(finish)
	// Output: context deadline exceeded
}

func ExampleRun_async() {
	done := make(chan struct{})
	taskqueue.RunAsyncOnMainThread(func() {
		fmt.Println("queued work ran on the main thread:", mainthread.IsMain())
		close(done)
	})
	<-done
	// Output: queued work ran on the main thread: true
}

// A program with its own frame loop on the main thread, as a GLFW renderer
// has, updates the main loom each frame instead of calling Run, and lets
// posted work wake its event wait. (Not run: it needs a window.)
func ExampleLoom() {
	l := mainthread.Loom()
	l.Configure(loom.WithWakeFunc(func() { /* glfw.PostEmptyEvent() */ }))
	for frame := 0; frame < 3; frame++ {
		// glfw.WaitEventsTimeout(...); render...
		l.Update() // runs what workers posted with taskqueue.RunAsyncOnMainThread
	}
}

// Workers on a concurrent queue post their results to the main thread; a
// coroutine of the main thread's loop waits for all of them, then uses the
// results. A function posted before a task's handle is done runs before a
// coroutine waiting on that handle resumes, so no result is missing.
func ExampleRun_workers() {
	ctx := context.Background()
	q := taskqueue.NewConcurrent(4)
	defer q.Close()
	sizes := map[string]int{} // the main thread's alone
	files := []string{"a.png", "bb.png", "ccc.png"}
	handles := make([]loom.Waitable, len(files))
	for i, name := range files {
		handles[i] = q.RunAsync(ctx, func(context.Context) error {
			n := 100 * len(name) // the work: decoding, say
			return taskqueue.RunAsyncOnMainThread(func() { sizes[name] = n })
		})
	}
	report := mainthread.Loom().StartCoroutine(func(yield func(loom.Instruction) bool) {
		if yield(loom.WaitAll(handles...)) {
			fmt.Println(sizes["a.png"], sizes["bb.png"], sizes["ccc.png"])
		}
	})
	loom.Await(ctx, report) // this goroutine is not the main thread: it may block
	// Output: 500 600 700
}
