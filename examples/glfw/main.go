// Command glfw shows main-thread dispatch against a real render thread: a
// GLFW window whose OpenGL context belongs to the main thread, and worker
// goroutines on a concurrent queue that generate texture tiles and hand each
// upload to the main thread with taskqueue.RunAsyncOnMainThread. The main
// loop updates the main loom each frame, which runs the uploads, and sleeps
// in glfw.WaitEvents; the loom's wake function, glfw.PostEmptyEvent, wakes
// it when a worker posts.
//
//	go run .                                   # a window, until closed
//	go run . -frames 30 -screenshot shot.png   # check mode: render, save, exit
//	go run . -verify shot.png                  # check a screenshot's tiles
//
// It needs cgo, an OpenGL driver and, on Linux, the X11 development
// packages (see .ci/run).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"

	"github.com/go-gl/glfw/v3.3/glfw"

	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

func main() {
	frames := flag.Int("frames", 0, "check mode: once every tile is in, render this many frames, save -screenshot and exit")
	shot := flag.String("screenshot", "", "check mode: the PNG file to save the last frame to")
	verify := flag.String("verify", "", "check that the screenshot in this PNG file shows every tile, and exit")
	flag.Parse()
	if *verify != "" {
		if err := verifyScreenshot(*verify); err != nil {
			fmt.Fprintln(os.Stderr, "glfw:", err)
			os.Exit(1)
		}
		fmt.Printf("%s shows all %d tiles\n", *verify, numTiles)
		return
	}
	if (*frames > 0) != (*shot != "") {
		fmt.Fprintln(os.Stderr, "glfw: -frames and -screenshot go together")
		os.Exit(2)
	}
	if err := run(*frames, *shot); err != nil {
		fmt.Fprintln(os.Stderr, "glfw:", err)
		os.Exit(1)
	}
}

// run opens the window and runs the frame loop on the main thread until the
// window closes, or, with frames > 0, until it has saved the screenshot.
func run(frames int, screenshot string) error {
	if !mainthread.IsMain() {
		return errors.New("run must be called on the main goroutine")
	}
	if err := glfw.Init(); err != nil {
		return err
	}
	defer glfw.Terminate()
	glfw.WindowHint(glfw.Resizable, glfw.False)
	glfw.WindowHint(glfw.ContextVersionMajor, 2)
	glfw.WindowHint(glfw.ContextVersionMinor, 1)
	win, err := glfw.CreateWindow(side, side, "tiles uploaded from worker goroutines", nil, nil)
	if err != nil {
		return err
	}
	defer win.Destroy()
	win.MakeContextCurrent()
	fmt.Println("OpenGL renderer:", glRenderer())

	// The texture, and the count of tiles in it, belong to the main thread.
	tex := newTexture(side, make([]byte, 4*side*side))
	uploaded := 0

	l := mainthread.Loom()
	l.Configure(loom.WithWakeFunc(glfw.PostEmptyEvent))
	defer l.Close() // runs uploads still posted, then refuses new ones

	workers := taskqueue.NewConcurrent(runtime.GOMAXPROCS(0))
	defer workers.Close()
	for i := range numTiles {
		tx, ty := i%perRow, i/perRow
		if err := workers.Go(func() {
			pix := makeTile(tx, ty) // the work, off the main thread
			taskqueue.RunAsyncOnMainThread(func() {
				uploadTile(tex, tx*tileSide, ty*tileSide, tileSide, tileSide, pix)
				uploaded++
			})
		}); err != nil {
			return err
		}
	}

	rendered := 0 // frames with every tile in
	for !win.ShouldClose() {
		if uploaded < numTiles || frames == 0 {
			// Sleep until an event, or until a worker's post wakes us:
			// without the wake function this would hang.
			glfw.WaitEvents()
		} else {
			glfw.WaitEventsTimeout(1.0 / 60)
		}
		l.Update() // runs the uploads posted since the last frame
		drawTexture(tex, side, side)
		if err := glError(); err != nil {
			return err
		}
		if frames > 0 && uploaded == numTiles {
			if rendered++; rendered == frames {
				pix := readPixels(side, side)
				if err := writeScreenshot(screenshot, pix, side, side); err != nil {
					return err
				}
				fmt.Printf("saved %s after %d frames with all %d tiles\n", screenshot, frames, numTiles)
				return nil
			}
		}
		win.SwapBuffers()
	}
	return nil
}
