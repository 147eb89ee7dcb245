package main

import (
	"image"
	"image/color"
	"math"
	"runtime"

	"github.com/taskqueue-go/taskqueue/examples/internal/fractal"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

const (
	side        = 768 // the window and the texture, in pixels
	tileSide    = 16  // a tile, in pixels: many small uploads
	previewStep = 16  // the preview computes one point per tile
	numWorkers  = 16  // tiles rendered at once
)

// view is the part of the Mandelbrot set the window shows: deep enough that
// the detailed pass takes a few seconds on two cores.
var view = fractal.View{CenterRe: -0.745, CenterIm: 0.113, Width: 0.03, MaxIter: 8000}

// background is the colour of the texture before any tile arrives.
var background = color.RGBA{26, 26, 26, 255}

// Each tile is rendered twice: a preview of one point, then the detail.
// The previews all arrive within a frame or two of the start, a flood of
// thousands of uploads; the details stream in for seconds.
const (
	tileBlank = iota
	tilePreview
	tileDetail
)

// stream is one streaming of the picture into the texture. Its fields are
// touched only on the main thread, by the upload actions and the frame
// loop.
type stream struct {
	tex     uint32
	rects   []image.Rectangle
	state   []int       // of each tile: blank, preview or detail
	mirror  *image.RGBA // what the texture holds, for the check
	details int         // tiles uploaded in detail
	over    bool        // the stream has ended: late uploads are dropped
	onStart func()      // called as each upload starts
}

func newStream(tex uint32, onStart func()) *stream {
	s := &stream{
		tex:     tex,
		onStart: onStart,
		rects:   fractal.Tiles(side, side, tileSide),
		mirror:  image.NewRGBA(image.Rect(0, 0, side, side)),
	}
	s.state = make([]int, len(s.rects))
	for i := range s.mirror.Pix {
		s.mirror.Pix[i] = []uint8{background.R, background.G, background.B, background.A}[i%4]
	}
	uploadTile(tex, 0, 0, side, side, s.mirror.Pix)
	return s
}

// done reports whether every tile is in, in detail.
func (s *stream) done() bool { return s.details == len(s.rects) }

// start queues every tile on workers, previews first: each worker renders a
// tile and hands its upload to the main thread, where the main loom runs
// it in a frame.
func (s *stream) start(workers *taskqueue.Queue) error {
	for _, step := range []int{previewStep, 1} {
		for i, r := range s.rects {
			err := workers.Go(func() {
				tile := fractal.RenderCoarse(view, side, side, r, step) // off the main thread
				// Sixteen CPU-bound workers keep both processors of a 2-core
				// machine busy, and the main goroutine, back from a cgo
				// call that lasted long enough to lose its processor, waits
				// for one behind them: yielding after each tile lets it in
				// sooner (without it, the main thread drew a third as many
				// frames here).
				runtime.Gosched()
				// It fails only once the main loop has stopped.
				_ = taskqueue.RunAsyncOnMainThread(func() { s.upload(i, tile, step) })
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// upload copies tile i into the texture, on the main thread. A preview that
// arrives after the detail (workers finish out of order) is dropped, and so
// is an upload that arrives after the stream has ended.
func (s *stream) upload(i int, tile *image.RGBA, step int) {
	state := tileDetail
	if step > 1 {
		state = tilePreview
	}
	if s.over || state <= s.state[i] {
		return
	}
	s.onStart()
	r := s.rects[i]
	uploadTile(s.tex, r.Min.X, r.Min.Y, r.Dx(), r.Dy(), tile.Pix)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		copy(s.mirror.Pix[s.mirror.PixOffset(r.Min.X, y):], tile.Pix[tile.PixOffset(r.Min.X, y):tile.PixOffset(r.Max.X, y)])
	}
	s.state[i] = state
	if state == tileDetail {
		s.details++
	}
}

// The animated element: a square that circles the centre and turns, one
// lap every two seconds of frames, to show that frames keep coming while
// the tiles stream in.
const (
	squareSide   = 40
	squareRadius = 250
	lapFrames    = 120
)

var squareColor = [3]uint8{255, 0, 255}

// squareAt returns the centre and angle of the square in frame n.
func squareAt(n int) (cx, cy, angle float64) {
	a := 2 * math.Pi * float64(n%lapFrames) / lapFrames
	return side/2 + squareRadius*math.Cos(a), side/2 + squareRadius*math.Sin(a), -2 * a
}

// squareBounds returns a rectangle that holds the square of frame n, with
// a pixel to spare for the edges.
func squareBounds(n int) image.Rectangle {
	cx, cy, _ := squareAt(n)
	r := int(math.Ceil(squareSide/math.Sqrt2)) + 2
	return image.Rect(int(cx)-r, int(cy)-r, int(cx)+r+1, int(cy)+r+1)
}
