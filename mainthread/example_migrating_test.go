package mainthread_test

import (
	"context"
	"fmt"

	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// The Examples of this file are the programs of docs/migrating.md for the
// main-thread peers, ported onto this module. Each is the body of the
// function a program passes to Run: the test binary's main goroutine already
// serves the main thread (see TestMain), so they leave main out.

// window stands for a windowing library whose calls must be made on the main
// OS thread, as GLFW's are.
type window struct{ frames int }

func mustBeMain(call string) {
	if !mainthread.IsMain() {
		panic(call + " called off the main thread")
	}
}

func createWindow(width, height int) (*window, error) {
	mustBeMain("createWindow")
	if width <= 0 || height <= 0 {
		return nil, fmt.Errorf("createWindow(%d, %d): bad size", width, height)
	}
	return &window{}, nil
}

func (w *window) ShouldClose() bool { mustBeMain("ShouldClose"); return w.frames == 3 }
func (w *window) SwapBuffers()      { mustBeMain("SwapBuffers"); w.frames++ }
func (w *window) Size() [2]int      { mustBeMain("Size"); return [2]int{640, 480} }

// A golang.design/x/mainthread program, ported: CallV becomes CallValue,
// Call takes a context and returns an error, Go becomes
// taskqueue.RunAsyncOnMainThread. A call made on the main thread runs at
// once, and a panic reaches the caller wrapped in a *taskqueue.PanicError.
func ExampleCallValue_fromGolangDesign() {
	ctx := context.Background()
	var win *window
	mainthread.Call(ctx, func() error { win = &window{}; return nil })

	size, err := mainthread.CallValue(ctx, func() ([2]int, error) { // mainthread.CallV
		return win.Size(), nil
	})
	fmt.Println(size, err)

	// A call from the main thread itself runs at once instead of deadlocking.
	err = mainthread.Call(ctx, func() error {
		return mainthread.Call(ctx, func() error { win.SwapBuffers(); return nil })
	})
	fmt.Println(win.frames, err)

	// mainthread.Go: it never blocks; its panics go to the main loom's
	// panic handler (loom.WithPanicHandler), not to Error's 42 slots.
	done := make(chan struct{})
	taskqueue.RunAsyncOnMainThread(func() { win.SwapBuffers(); close(done) })
	<-done

	// golang.design re-panics the value itself; here it is the Value field.
	func() {
		defer func() {
			r := recover()
			if p, ok := r.(*taskqueue.PanicError); ok {
				r = p.Value
			}
			fmt.Println("recovered:", r)
		}()
		mainthread.Call(ctx, func() error { panic("context lost") })
	}()
	fmt.Println(mainthread.CallValue(ctx, func() (int, error) { return win.frames, nil }))
	// Output:
	// [640 480] <nil>
	// 1 <nil>
	// recovered: context lost
	// 2 <nil>
}

// A gopxl/mainthread (or faiface/mainthread) render loop, ported: CallErr
// becomes Call, CallVal becomes the typed CallValue, CallNonBlock becomes
// taskqueue.RunAsyncOnMainThread, and each blocking call takes a context.
func ExampleCall_fromGopxl() {
	ctx := context.Background()

	var win *window
	err := mainthread.Call(ctx, func() error { // mainthread.CallErr
		var err error
		win, err = createWindow(0, 0)
		return err
	})
	fmt.Println(err)

	err = mainthread.Call(ctx, func() error {
		var err error
		win, err = createWindow(640, 480)
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		closing, err := mainthread.CallValue(ctx, func() (bool, error) { // mainthread.CallVal
			return win.ShouldClose(), nil
		})
		if err != nil || closing {
			break
		}
		mainthread.Call(ctx, func() error { win.SwapBuffers(); return nil }) // mainthread.Call
	}

	done := make(chan int)
	err = taskqueue.RunAsyncOnMainThread(func() { done <- win.frames }) // mainthread.CallNonBlock
	fmt.Println("frames:", <-done, err)
	// Output:
	// createWindow(0, 0): bad size
	// frames: 3 <nil>
}
