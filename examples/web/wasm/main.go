//go:build js && wasm

// Command wasm is the web example's program, compiled for js/wasm and run
// by its page. Each animation frame (requestAnimationFrame) runs one frame
// of a loom; a concurrent queue renders the tiles of the Mandelbrot set and
// posts each to the loom, which draws it into the canvas; a coroutine runs
// the phases and the page shows the progress every frame.
//
// The page's query sets the picture: w, h, tile, iter and workers (the
// desktop demo's 1024, 768, 64, 500, and 4 workers by default); strip sets
// the rows a worker renders between pauses (16), and yield=0 turns the
// pauses off, to show what they are for.
package main

import (
	"fmt"
	"image"
	"net/url"
	"strconv"
	"sync"
	"syscall/js"
	"time"

	"github.com/taskqueue-go/taskqueue/examples/web/internal/page"
)

func main() {
	cfg, yield, err := parseQuery(js.Global().Get("location").Get("search").String())
	if err != nil {
		fail(err.Error())
		return
	}
	doc := js.Global().Get("document")
	canvas := doc.Call("getElementById", "picture")
	canvas.Set("width", cfg.Width)
	canvas.Set("height", cfg.Height)
	s := &screen{
		ctx:    canvas.Call("getContext", "2d"),
		bar:    doc.Call("getElementById", "bar"),
		status: doc.Call("getElementById", "status"),
		cfg:    cfg,
	}
	var pause func()
	if yield {
		pause = newYielder().pause
	}
	a := page.Start(cfg, s, pause)

	// A frame callback runs on a goroutine of its own, a new one each time;
	// the loom is driven by this one, so the callback only hands over the
	// timestamp. Go returns to the page only once every goroutine waits, so
	// the frame still runs inside the callback's turn of the event loop.
	frames := make(chan float64, 1)
	onFrame := js.FuncOf(func(_ js.Value, args []js.Value) any {
		frames <- args[0].Float()
		return nil
	})
	for !a.Done() {
		js.Global().Call("requestAnimationFrame", onFrame)
		ms := <-frames
		a.Frame(time.Duration(ms * float64(time.Millisecond)))
	}
	onFrame.Release()
	select {} // the page lives on; nothing wakes this goroutine again
}

// parseQuery reads the picture's settings from the page's query string.
func parseQuery(query string) (cfg page.Config, yield bool, err error) {
	cfg = page.Default()
	q, err := url.ParseQuery(trimQuestion(query))
	if err != nil {
		return cfg, false, fmt.Errorf("query %q: %v", query, err)
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"w", &cfg.Width}, {"h", &cfg.Height}, {"tile", &cfg.Tile}, {"iter", &cfg.View.MaxIter}, {"workers", &cfg.Workers}, {"strip", &cfg.Strip}} {
		s := q.Get(f.name)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1<<14 {
			return cfg, false, fmt.Errorf("query: %s=%q: want a number from 1 to %d", f.name, s, 1<<14)
		}
		*f.v = n
	}
	return cfg, q.Get("yield") != "0", nil
}

func trimQuestion(s string) string {
	if len(s) > 0 && s[0] == '?' {
		return s[1:]
	}
	return s
}

// fail shows why the page cannot run, and reports it to whoever reads
// window.taskqueueWeb.
func fail(msg string) {
	js.Global().Set("taskqueueWeb", js.ValueOf(map[string]any{"error": msg}))
	js.Global().Get("document").Call("getElementById", "status").Set("textContent", "error: "+msg)
}

// screen draws into the page: tiles into the canvas, progress into the bar
// and the status line. Its methods run on the goroutine that drives the
// loom.
type screen struct {
	ctx, bar, status js.Value
	cfg              page.Config
}

func (s *screen) DrawTile(tile *image.RGBA) {
	w, h := tile.Rect.Dx(), tile.Rect.Dy()
	pix := js.Global().Get("Uint8ClampedArray").New(len(tile.Pix))
	js.CopyBytesToJS(pix, tile.Pix)
	data := js.Global().Get("ImageData").New(pix, w, h)
	s.ctx.Call("putImageData", data, tile.Rect.Min.X, tile.Rect.Min.Y)
}

func (s *screen) DrawProgress(p page.Status) {
	s.bar.Set("value", p.Fraction)
	s.status.Set("textContent", fmt.Sprintf("%3.0f%%  %d/%d tiles  frame %d  (%dx%d, %d workers)",
		100*p.Fraction, p.Applied, p.Total, p.Frame, s.cfg.Width, s.cfg.Height, s.cfg.Workers))
}

func (s *screen) Finished(f page.Figures) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	s.status.Set("textContent", fmt.Sprintf(
		"done: %d tiles in %.0f ms over %d frames, tiles drawn in %d of them, longest gap between frames %.1f ms",
		f.Tiles, ms(f.Total), f.Frames, f.TileFrames, ms(f.LongestGap)))
	js.Global().Set("taskqueueWeb", js.ValueOf(map[string]any{
		"done":         true,
		"tiles":        f.Tiles,
		"frames":       f.Frames,
		"tileFrames":   f.TileFrames,
		"longestGapMs": ms(f.LongestGap),
		"totalMs":      ms(f.Total),
		"sha256":       f.SHA256,
		"width":        s.cfg.Width,
		"height":       s.cfg.Height,
	}))
}

// yielder lets a worker give the page's event loop a turn. On js/wasm Go
// runs every goroutine on the page's one thread and returns to the browser
// only when all of them wait, so a worker that renders tile after tile
// would hold the page (no frame, no input) until the last one. A worker
// that pauses posts a message to itself and waits for it: the browser runs
// what is due before it (an animation frame among them), then the message
// wakes the worker. It costs no timer, unlike setTimeout, which browsers
// clamp to 4 ms when nested.
type yielder struct {
	port    js.Value
	mu      sync.Mutex
	waiting []chan struct{} // in the order of their messages
}

func newYielder() *yielder {
	ch := js.Global().Get("MessageChannel").New()
	y := &yielder{port: ch.Get("port2")}
	wake := js.FuncOf(func(js.Value, []js.Value) any {
		y.mu.Lock()
		w := y.waiting[0]
		y.waiting = y.waiting[1:]
		y.mu.Unlock()
		close(w)
		return nil
	})
	ch.Get("port1").Set("onmessage", wake)
	return y
}

func (y *yielder) pause() {
	w := make(chan struct{})
	y.mu.Lock()
	y.waiting = append(y.waiting, w)
	y.mu.Unlock()
	y.port.Call("postMessage", nil)
	<-w
}
