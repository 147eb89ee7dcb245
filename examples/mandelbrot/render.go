package main

import (
	"bufio"
	"context"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"io"
	"os"
	"strings"
	"time"

	"github.com/taskqueue-go/taskqueue/examples/internal/fractal"
	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// config is what the flags set.
type config struct {
	width, height int
	tile          int // tile side, in pixels
	workers       int // tiles rendered at once
	perFrame      int // tiles applied to the frame buffer per frame
	view          fractal.View
	out           string // the PNG file
}

// renderer holds one rendering. The frame buffer is touched only on the
// main thread, by loom actions and coroutines, so it needs no lock; the
// workers only read cfg, write their own tiles and report through rendered,
// which the frames read without a lock.
type renderer struct {
	cfg      config
	l        *loom.Loom
	workers  *taskqueue.Queue // renders tiles
	writer   *taskqueue.Queue // encodes and writes the file
	status   io.Writer
	terminal bool          // draw the progress bar in place
	rendered loom.Progress // tiles rendered, reported by the workers
	applied  loom.Progress // tiles in the frame buffer, counted on the main thread

	// Main thread only:
	img       *image.RGBA
	rects     []image.Rectangle
	start     time.Time
	lastTenth int   // the last 10% step printed, when not on a terminal
	err       error // why the rendering failed
}

// render draws the image described by cfg into cfg.out, reporting progress
// to status. It must run off the main thread while the main thread is
// served (by mainthread.Run): the frame buffer lives there.
func render(ctx context.Context, cfg config, status io.Writer, terminal bool) error {
	l := mainthread.Loom()
	// Tiles arrive from the workers faster than a frame should absorb them:
	// the budget spreads their application over frames.
	l.Configure(loom.WithBudget(cfg.perFrame, 0))
	r := &renderer{
		cfg:      cfg,
		l:        l,
		workers:  taskqueue.NewConcurrent(cfg.workers),
		writer:   taskqueue.NewSerial(),
		status:   status,
		terminal: terminal,
	}
	done := make(chan error, 1)
	err := taskqueue.RunAsyncOnMainThread(func() {
		main := l.StartCoroutine(func(yield func(loom.Instruction) bool) { r.phases(ctx, yield) })
		l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			yield(loom.WaitFor(main))
			if err := main.Err(); err != nil {
				done <- err // it panicked
			} else {
				done <- r.err
			}
		})
	})
	if err != nil {
		return err
	}
	err = <-done
	if cerr := r.workers.Close(); err == nil {
		err = cerr
	}
	if cerr := r.writer.Close(); err == nil {
		err = cerr
	}
	return err
}

// phases is the coroutine that runs the rendering on the main thread: start
// the workers, wait until every tile is in the frame buffer, then write the
// file on the serial queue.
func (r *renderer) phases(ctx context.Context, yield func(loom.Instruction) bool) {
	r.start = time.Now()
	r.img = image.NewRGBA(image.Rect(0, 0, r.cfg.width, r.cfg.height))
	r.rects = fractal.Tiles(r.cfg.width, r.cfg.height, r.cfg.tile)
	r.rendered.SetTotal(len(r.rects))
	r.applied.SetTotal(len(r.rects))
	r.l.StartCoroutine(r.progress)

	for _, rect := range r.rects {
		if r.err = r.workers.Go(func() {
			tile := fractal.RenderTile(r.cfg.view, r.cfg.width, r.cfg.height, rect)
			r.rendered.Add(1)
			taskqueue.RunAsyncOnMainThread(func() { r.apply(tile) }) // the frame buffer belongs to the main thread
		}); r.err != nil {
			return
		}
	}
	if !yield(loom.WaitUntil(r.applied.Finished)) {
		return
	}

	// Every tile is in, and the main thread is done with the buffer: the
	// writer may read it.
	img := r.img
	h := r.writer.RunAsync(ctx, func(context.Context) error { return writePNG(r.cfg.out, img) })
	if !yield(loom.WaitFor(h)) {
		return
	}
	if r.err = h.Err(); r.err != nil {
		return
	}
	r.draw(true)
}

// apply copies a finished tile into the frame buffer, on the main thread.
func (r *renderer) apply(tile *image.RGBA) {
	draw.Draw(r.img, tile.Rect, tile, tile.Rect.Min, draw.Src)
	r.applied.Add(1)
}

// progress is a coroutine that draws the progress bar every frame until the
// last tile is in.
func (r *renderer) progress(yield func(loom.Instruction) bool) {
	for !r.applied.Finished() {
		r.draw(false)
		if !yield(loom.NextFrame()) {
			return
		}
	}
}

// barWidth is the number of cells of the progress bar.
const barWidth = 30

// draw shows the progress: a bar redrawn in place on a terminal, or a line
// per 10% elsewhere. The bar, the percentage and the status line are all
// computed from the same count, read once, so they always agree.
func (r *renderer) draw(final bool) {
	applied, total := r.applied.Load()
	rendered, _ := r.rendered.Load()
	done := applied * barWidth / max(total, 1)
	percent := applied * 100 / max(total, 1)
	st := r.workers.Stats()
	line := fmt.Sprintf("%d/%d tiles  %d rendered  %d rendering  %d queued  frame %d  %v",
		applied, total, rendered, st.Running, st.Queued, r.l.Frame(), time.Since(r.start).Round(time.Millisecond))
	if r.terminal {
		fmt.Fprintf(r.status, "\r[%s%s] %3d%%  %s\x1b[K", strings.Repeat("#", done), strings.Repeat(".", barWidth-done), percent, line)
		if final {
			fmt.Fprintln(r.status)
		}
		return
	}
	if tenth := percent / 10; tenth > r.lastTenth || final {
		r.lastTenth = tenth
		fmt.Fprintf(r.status, "%3d%%  %s\n", percent, line)
	}
}

// writePNG encodes img into the file path.
func writePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := png.Encode(w, img); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
