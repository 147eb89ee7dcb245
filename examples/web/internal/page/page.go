// Package page is the program of the web example, apart from the browser:
// a loom driven by the page's animation frames, a concurrent queue that
// renders the tiles of the Mandelbrot set, and a coroutine that runs the
// phases. The browser glue (canvas, requestAnimationFrame) lives in the
// wasm command; this package builds and is tested everywhere.
package page

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/draw"
	"time"

	"github.com/taskqueue-go/taskqueue/examples/internal/fractal"
	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// Config is the picture and how many tiles render at once.
type Config struct {
	Width, Height int
	Tile          int // tile side, in pixels
	Workers       int // tiles rendered at once
	Strip         int // rows a worker renders between pauses (0: the whole tile)
	View          fractal.View
}

// Default is the picture of the desktop demo (examples/mandelbrot with its
// default flags), with four workers.
func Default() Config {
	return Config{
		Width: 1024, Height: 768, Tile: 64, Workers: 4, Strip: 16,
		View: fractal.View{CenterRe: -0.75, CenterIm: 0, Width: 3.5, MaxIter: 500},
	}
}

// Screen is where the page shows its work. Its methods are called on the
// goroutine that calls Frame, one at a time.
type Screen interface {
	// DrawTile copies a finished tile into the picture, at tile.Rect.
	DrawTile(tile *image.RGBA)
	// DrawProgress shows how far the rendering has gone, once a frame.
	DrawProgress(p Status)
	// Finished reports the figures once every tile is in the picture.
	Finished(f Figures)
}

// Status is what a frame shows while the tiles come in.
type Status struct {
	Fraction float64 // of the tiles in the picture
	Applied  int     // tiles in the picture
	Total    int     // tiles in all
	Frame    int     // frames since the page started
}

// Figures describe a finished rendering, on the page's clock (the
// timestamps given to Frame).
type Figures struct {
	Tiles      int           // tiles in the picture
	Frames     int           // frames from the first one to the one that finished
	TileFrames int           // frames in which at least one tile was drawn
	LongestGap time.Duration // the longest time between two frames, up to the finish
	Total      time.Duration // from the first frame to the one that finished
	SHA256     string        // of the picture's RGBA bytes, row by row, hex
}

// App is one rendering, driven by Frame.
type App struct {
	cfg     Config
	screen  Screen
	pause   func()
	l       *loom.Loom
	workers *taskqueue.Queue
	applied loom.Progress // tiles in the picture, counted on the loop

	// The loop's goroutine only (Frame, and the loom's actions and
	// coroutines it runs):
	img        *image.RGBA // the same picture as the screen's, for the hash
	nApplied   int
	total      int
	frames     int
	first      time.Duration
	last       time.Duration
	longest    time.Duration
	tileFrames int
	tileFrame  int // the last frame counted in tileFrames
	done       bool
}

// Start prepares a rendering of cfg onto s; it begins with the first call
// of Frame. pause, if not nil, is called by the workers after each strip of
// cfg.Strip rows (or each tile, if Strip is 0): on a runtime with one thread
// (js/wasm), a worker that never blocks keeps the page from drawing frames
// until every tile is done, and the browser's pause lets the page's event
// loop run. Start panics if a size in cfg is not positive.
func Start(cfg Config, s Screen, pause func()) *App {
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Tile < 1 || cfg.Workers < 1 || cfg.Strip < 0 || cfg.View.MaxIter < 1 {
		panic(fmt.Sprintf("page: Start with a size that is not positive: %+v", cfg))
	}
	a := &App{
		cfg:     cfg,
		screen:  s,
		pause:   pause,
		l:       loom.New(loom.ManualClock()),
		workers: taskqueue.NewConcurrent(cfg.Workers),
	}
	a.l.StartCoroutine(a.phases)
	return a
}

// Frame runs one frame of the page: at is the frame's timestamp on the
// page's clock (requestAnimationFrame's), which also drives the loom's
// clock. Frame must be called from one goroutine at a time, with
// timestamps that never go back.
func (a *App) Frame(at time.Duration) {
	if a.frames == 0 {
		a.first, a.last = at, at
	}
	dt := at - a.last
	if !a.done {
		a.frames++
		a.longest = max(a.longest, dt)
	}
	a.last = at
	a.l.UpdateDelta(dt)
}

// Done reports whether every tile is in the picture and the figures have
// been given to the screen. Call it between frames, on the goroutine that
// calls Frame.
func (a *App) Done() bool { return a.done }

// Close waits until the workers have returned and stops the queue. The
// page never needs it (the program lives as long as the page); tests do.
func (a *App) Close() error { return a.workers.Close() }

// phases is the coroutine that runs the rendering: queue every tile, draw
// the progress each frame until all are in, hash the picture on the queue,
// report.
func (a *App) phases(yield func(loom.Instruction) bool) {
	ctx := context.Background()
	a.img = image.NewRGBA(image.Rect(0, 0, a.cfg.Width, a.cfg.Height))
	rects := fractal.Tiles(a.cfg.Width, a.cfg.Height, a.cfg.Tile)
	a.total = len(rects)
	a.applied.SetTotal(a.total)
	a.l.StartCoroutine(a.progress)

	for _, rect := range rects {
		err := a.workers.Go(func() {
			tile := a.render(rect)
			// The picture belongs to the loop: the tile goes there.
			if err := a.l.Post(func() { a.apply(tile) }); err != nil {
				panic(err) // the loom is never closed
			}
		})
		if err != nil {
			panic(err) // the queue is closed only after this coroutine
		}
	}
	if !yield(loom.WaitUntil(a.applied.Finished)) {
		return
	}

	// Every tile is in and the loop is done with the picture: a worker may
	// read it.
	var sum [sha256.Size]byte
	img := a.img
	h := a.workers.RunAsync(ctx, func(context.Context) error {
		sum = sha256.Sum256(img.Pix)
		return nil
	})
	if !yield(loom.WaitFor(h)) {
		return
	}
	a.screen.Finished(Figures{
		Tiles:      a.total,
		Frames:     a.frames,
		TileFrames: a.tileFrames,
		LongestGap: a.longest,
		Total:      a.last - a.first,
		SHA256:     hex.EncodeToString(sum[:]),
	})
	a.done = true
}

// render computes a tile, a strip of rows at a time with a pause after
// each (see Start), or at once if there is no pause or Strip is 0. The
// renderer computes each pixel on its own, so the strips make the same
// bytes as the whole tile.
func (a *App) render(rect image.Rectangle) *image.RGBA {
	if a.pause == nil || a.cfg.Strip < 1 {
		tile := fractal.RenderTile(a.cfg.View, a.cfg.Width, a.cfg.Height, rect)
		if a.pause != nil {
			a.pause()
		}
		return tile
	}
	tile := image.NewRGBA(rect)
	for y := rect.Min.Y; y < rect.Max.Y; y += a.cfg.Strip {
		r := image.Rect(rect.Min.X, y, rect.Max.X, min(y+a.cfg.Strip, rect.Max.Y))
		draw.Draw(tile, r, fractal.RenderTile(a.cfg.View, a.cfg.Width, a.cfg.Height, r), r.Min, draw.Src)
		a.pause()
	}
	return tile
}

// apply draws a finished tile, on the loop.
func (a *App) apply(tile *image.RGBA) {
	draw.Draw(a.img, tile.Rect, tile, tile.Rect.Min, draw.Src)
	a.screen.DrawTile(tile)
	a.nApplied++
	if a.tileFrame != a.frames {
		a.tileFrame = a.frames
		a.tileFrames++
	}
	a.applied.Add(1)
}

// progress is a coroutine that shows the progress every frame until the
// last tile is in, and once more then.
func (a *App) progress(yield func(loom.Instruction) bool) {
	for {
		a.screen.DrawProgress(Status{
			Fraction: a.applied.Fraction(), Applied: a.nApplied, Total: a.total, Frame: a.frames,
		})
		if a.applied.Finished() || !yield(loom.NextFrame()) {
			return
		}
	}
}
