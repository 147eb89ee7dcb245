package page

import (
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/draw"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/examples/internal/fractal"
)

func TestMain(m *testing.M) {
	var opts []goleak.Option
	if runtime.GOOS == "js" {
		// Under js/wasm the runtime parks the goroutine of the JavaScript
		// event that woke it (a timer's) until every goroutine waits: it is
		// the runtime's, not the test's.
		opts = append(opts, goleak.IgnoreAnyFunction("runtime.handleEvent"))
	}
	goleak.VerifyTestMain(m, opts...)
}

// screen records what the page draws, as a canvas would.
type screen struct {
	img      *image.RGBA
	drawn    map[image.Rectangle]int
	statuses []Status
	figures  []Figures
}

func newScreen(cfg Config) *screen {
	return &screen{
		img:   image.NewRGBA(image.Rect(0, 0, cfg.Width, cfg.Height)),
		drawn: map[image.Rectangle]int{},
	}
}

func (s *screen) DrawTile(tile *image.RGBA) {
	draw.Draw(s.img, tile.Rect, tile, tile.Rect.Min, draw.Src)
	s.drawn[tile.Rect]++
}
func (s *screen) DrawProgress(st Status) { s.statuses = append(s.statuses, st) }
func (s *screen) Finished(f Figures)     { s.figures = append(s.figures, f) }

// gate stands for the browser's event loop: a worker that pauses waits for
// the next frame, as a worker in a page waits for its turn.
type gate struct {
	mu     sync.Mutex
	next   chan struct{}
	pauses int
}

func newGate() *gate { return &gate{next: make(chan struct{})} }

func (g *gate) pause() {
	g.mu.Lock()
	ch := g.next
	g.pauses++
	g.mu.Unlock()
	<-ch
}

func (g *gate) open() {
	g.mu.Lock()
	close(g.next)
	g.next = make(chan struct{})
	g.mu.Unlock()
}

func smallConfig(workers, strip int) Config {
	return Config{
		Width: 200, Height: 150, Tile: 32, Workers: workers, Strip: strip,
		View: fractal.View{CenterRe: -0.75, Width: 3.5, MaxIter: 300},
	}
}

func expected(cfg Config) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, cfg.Width, cfg.Height))
	for _, r := range fractal.Tiles(cfg.Width, cfg.Height, cfg.Tile) {
		tile := fractal.RenderTile(cfg.View, cfg.Width, cfg.Height, r)
		draw.Draw(img, r, tile, r.Min, draw.Src)
	}
	return img
}

// run drives a rendering of cfg at 60 frames a second of fake time until
// it is done, opening the gate after each frame, and returns the screen.
func run(t *testing.T, cfg Config) (*screen, *gate) {
	t.Helper()
	s := newScreen(cfg)
	g := newGate()
	synctest.Test(t, func(t *testing.T) {
		a := Start(cfg, s, g.pause)
		const frame = time.Second / 60
		start := time.Now()
		for !a.Done() {
			a.Frame(time.Since(start))
			g.open()
			time.Sleep(frame)
			if time.Since(start) > time.Hour {
				t.Fatal("not done after an hour of frames")
			}
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	})
	return s, g
}

// TestPictureAndFigures renders the small picture with one worker and with
// four, whole tiles and strips of 8 rows: the picture is the desktop
// renderer's, every tile is drawn once, the hash is the picture's, the
// progress never goes back and ends at all tiles, and tiles arrive over
// many frames, as the workers pause after each tile or strip.
func TestPictureAndFigures(t *testing.T) {
	for _, c := range []struct{ workers, strip int }{{1, 0}, {4, 0}, {4, 8}} {
		workers := c.workers
		cfg := smallConfig(c.workers, c.strip)
		s, g := run(t, cfg)
		want := expected(cfg)
		rects := fractal.Tiles(cfg.Width, cfg.Height, cfg.Tile)
		tiles := len(rects)
		pauses := tiles
		if c.strip > 0 {
			pauses = 0
			for _, r := range rects {
				pauses += (r.Dy() + c.strip - 1) / c.strip
			}
		}

		for i := range want.Pix {
			if s.img.Pix[i] != want.Pix[i] {
				p := i / 4
				t.Fatalf("%d workers: pixel (%d,%d) differs from the desktop renderer's", workers, p%cfg.Width, p/cfg.Width)
			}
		}
		if len(s.drawn) != tiles {
			t.Errorf("%d workers: %d tiles drawn; want %d", workers, len(s.drawn), tiles)
		}
		for r, n := range s.drawn {
			if n != 1 {
				t.Errorf("%d workers: tile %v drawn %d times", workers, r, n)
			}
		}
		if g.pauses != pauses {
			t.Errorf("%d workers, strips of %d: %d pauses; want one per tile or strip, %d", workers, c.strip, g.pauses, pauses)
		}

		if len(s.figures) != 1 {
			t.Fatalf("%d workers: Finished called %d times; want once", workers, len(s.figures))
		}
		f := s.figures[0]
		sum := sha256.Sum256(want.Pix)
		if f.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%d workers: hash %s; want the picture's", workers, f.SHA256)
		}
		if f.Tiles != tiles {
			t.Errorf("%d workers: figures count %d tiles; want %d", workers, f.Tiles, tiles)
		}
		// A worker renders one tile (or strip) a frame, and one more in the
		// first frame (it starts before the gate opens).
		if least := tiles/workers - 1; f.TileFrames < least || f.Frames < pauses/workers-1 {
			t.Errorf("%d workers: tiles drawn in %d of %d frames; want at least %d", workers, f.TileFrames, f.Frames, least)
		}
		if f.LongestGap != time.Second/60 {
			t.Errorf("%d workers: longest gap %v; want one frame, %v", workers, f.LongestGap, time.Second/60)
		}
		if want := time.Duration(f.Frames-1) * (time.Second / 60); f.Total != want {
			t.Errorf("%d workers: total %v over %d frames; want %v", workers, f.Total, f.Frames, want)
		}

		last := s.statuses[len(s.statuses)-1]
		if last.Applied != tiles || last.Total != tiles || last.Fraction != 1 {
			t.Errorf("%d workers: last status %+v; want all %d tiles", workers, last, tiles)
		}
		for i := 1; i < len(s.statuses); i++ {
			p, q := s.statuses[i-1], s.statuses[i]
			if q.Applied < p.Applied || q.Fraction < p.Fraction || q.Frame <= p.Frame {
				t.Errorf("%d workers: status went back from %+v to %+v", workers, p, q)
			}
			if q.Fraction != float64(q.Applied)/float64(q.Total) {
				t.Errorf("%d workers: status %+v: fraction and count disagree", workers, q)
			}
		}
	}
}

func TestStartPanicsOnBadSizes(t *testing.T) {
	for _, cfg := range []Config{
		{Width: 0, Height: 1, Tile: 1, Workers: 1, View: fractal.View{MaxIter: 1}},
		{Width: 1, Height: 1, Tile: 0, Workers: 1, View: fractal.View{MaxIter: 1}},
		{Width: 1, Height: 1, Tile: 1, Workers: 0, View: fractal.View{MaxIter: 1}},
		{Width: 1, Height: 1, Tile: 1, Workers: 1, Strip: -1, View: fractal.View{MaxIter: 1}},
		{Width: 1, Height: 1, Tile: 1, Workers: 1},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Start(%+v) did not panic", cfg)
				}
			}()
			Start(cfg, newScreen(Config{Width: 1, Height: 1}), nil)
		}()
	}
}
