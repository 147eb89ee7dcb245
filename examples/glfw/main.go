// Command glfw streams the Mandelbrot set into an OpenGL texture from
// worker goroutines while an animated square keeps moving, in a GLFW window
// whose OpenGL context belongs to the main thread.
//
// Sixteen workers on a concurrent queue render each tile twice, a blocky
// preview first and the detail after, and hand each upload to the main
// thread with taskqueue.RunAsyncOnMainThread. The frame loop, on the main
// thread, calls the main loom's Update once per frame, which runs the
// uploads posted since the last frame. The previews arrive all at once, a
// flood of some two thousand uploads. With a frame budget
// (loom.WithBudget, 100 uploads a frame here) the loom runs at most that
// many in a frame and carries the rest over, in order: the flood is spread
// over a few dozen frames, and check mode checks that no frame ran more.
// Without one, the first frame of the stream runs every upload that has
// arrived.
//
// The budget bounds the uploads of a frame, not its time. What the flood
// costs depends on the driver and the machine: under Mesa's software
// OpenGL on two cores, the frame that ran it unbudgeted (1,488 uploads of
// 16×16 texels in the committed chart, frametimes.png, which shows the two
// runs side by side) spent 58 ms on them, and 2 to 5 ms in other runs. The
// frames came unevenly in both runs, 24 and 31 ms apart in the median,
// budget or not: their pace is set by the two processors that the
// workers, the rasterizer and the main thread share.
//
//	go run .                 # a window, until closed
//	go run . -budget 0       # the same without a frame budget
//	go run . -check out      # check mode: stream with a budget and without,
//	                         # save screenshots and the frame-time chart in
//	                         # out, check them, and exit
//
// It needs cgo, an OpenGL driver and, on Linux, the X11 development
// packages (see the README).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/go-gl/glfw/v3.3/glfw"

	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

func main() {
	check := flag.String("check", "", "check mode: stream with the budget and without, save midstream.png, final.png and frametimes.png in this directory, check them, and exit")
	budget := flag.Int("budget", defaultBudget, "how many uploads a frame may run (0: no limit)")
	flag.Parse()
	if *budget < 0 {
		fmt.Fprintf(os.Stderr, "glfw: -budget %d: want a count of uploads, or 0 for no limit\n", *budget)
		os.Exit(2)
	}
	if err := run(*check, *budget); err != nil {
		fmt.Fprintln(os.Stderr, "glfw:", err)
		os.Exit(1)
	}
}

// frameInterval is the pace of the frame loop: 60 frames a second.
const frameInterval = time.Second / 60

// window is the frame loop on the main thread: the window, its texture, the
// main loom, and the frame count that moves the square.
type window struct {
	win   *glfw.Window
	tex   uint32
	l     *loom.Loom
	n     int       // frames drawn
	next  time.Time // when the next frame is due
	cur   frameTime // the frame being drawn, counted by the uploads
	start time.Time // when it began
}

// uploading counts, in an upload, one more upload in the frame.
func (w *window) uploading() { w.cur.count++ }

// run opens the window and streams the picture, on the main thread: in
// check mode twice, with the budget and without; otherwise once, then it
// animates until the window closes.
func run(checkDir string, budget int) error {
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
	win, err := glfw.CreateWindow(side, side, "Mandelbrot tiles streamed from worker goroutines", nil, nil)
	if err != nil {
		return err
	}
	defer win.Destroy()
	win.MakeContextCurrent()
	glfw.SwapInterval(0) // the loop keeps its own pace, also without vsync (Xvfb)
	fmt.Println("OpenGL renderer:", glRenderer())

	w := &window{win: win, tex: newTexture(side, make([]byte, 4*side*side)), l: mainthread.Loom(), next: time.Now()}
	defer w.l.Close() // runs the uploads still posted, then refuses new ones
	if checkDir != "" {
		return w.check(checkDir, budget)
	}
	if _, err := w.stream(budget, nil); err != nil {
		return err
	}
	for !win.ShouldClose() {
		w.frame()
		w.swap()
	}
	return nil
}

// frameTime is what a frame did: how many uploads it ran (the budget bounds
// that count); how long they took (the main loom's frame) and how long all
// of it took (the uploads, drawing, and the wait until OpenGL is done); and
// how long after the previous frame it began, which is what the eye sees: a
// 60th of a second when on pace.
type frameTime struct {
	count          int // uploads run in the frame
	uploads, total time.Duration
	interval       time.Duration // from the previous frame's start to this one's
}

// frame draws one frame and returns how long it took.
func (w *window) frame() frameTime {
	prev := w.start
	w.cur, w.start = frameTime{}, time.Now()
	w.cur.interval = w.start.Sub(prev)
	w.l.Update() // the uploads posted since the last frame, within the budget
	w.cur.uploads = time.Since(w.start)
	drawTexture(w.tex, side, side)
	cx, cy, angle := squareAt(w.n)
	drawSquare(side, side, cx, cy, squareSide, angle, squareColor)
	finish()
	w.n++
	w.cur.total = time.Since(w.start)
	return w.cur
}

// swap shows the frame and waits for the next one, handling window events.
func (w *window) swap() {
	w.win.SwapBuffers()
	w.next = w.next.Add(frameInterval)
	if now := time.Now(); w.next.Before(now) {
		w.next = now // late: start again from now rather than catch up
	}
	for rem := time.Until(w.next); rem > 0 && !w.win.ShouldClose(); rem = time.Until(w.next) {
		glfw.WaitEventsTimeout(rem.Seconds())
	}
	glfw.PollEvents()
}

// stream renders the picture into the texture on numWorkers workers, with
// a frame budget of that many uploads (0: none), and returns what each
// frame did from the start of the work to the last tile. A few frames run first, so that the
// driver's costs of the first frames are not counted. shots, if not nil,
// is called after each frame, before it is shown.
func (w *window) stream(budget int, shots func(*stream)) ([]frameTime, error) {
	w.l.Configure(loom.WithBudget(budget, 0))
	s := newStream(w.tex, w.uploading)
	for range 10 {
		w.frame()
		w.swap()
	}
	workers := taskqueue.NewConcurrent(numWorkers)
	defer func() {
		s.over = true
		workers.CloseNow()
		workers.Close()
	}()
	if err := s.start(workers); err != nil {
		return nil, err
	}
	var times []frameTime
	for !s.done() {
		if w.win.ShouldClose() {
			return times, nil
		}
		times = append(times, w.frame())
		if err := glError(); err != nil {
			return nil, err
		}
		if shots != nil {
			shots(s)
		}
		w.swap()
	}
	return times, nil
}
