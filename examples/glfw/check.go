package main

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/taskqueue-go/taskqueue/examples/internal/fractal"
)

const (
	// defaultBudget is how long a frame may spend on uploads.
	defaultBudget = time.Millisecond

	// margin is how long after the budget is spent check mode lets an
	// upload start: the loom checks the budget before each action, and
	// the action reads the clock first thing, so the two are a few
	// instructions apart. A frame's uploads may still take longer than the
	// budget by the upload that started in time, and by any time the
	// operating system or the Go scheduler takes the main thread away (see
	// the README): that is measured and charted, not bounded.
	margin = 500 * time.Microsecond
)

// shot is a screenshot and what the texture held when it was taken.
type shot struct {
	pix    []byte      // glReadPixels' RGBA rows, bottom row first
	mirror *image.RGBA // the tiles uploaded so far
	state  []int       // of each tile
	frame  int         // the frame it shows, which places the square
}

// take reads the back buffer of the frame just drawn.
func take(w *window, s *stream) *shot {
	m := image.NewRGBA(s.mirror.Rect)
	copy(m.Pix, s.mirror.Pix)
	return &shot{pix: readPixels(side, side), mirror: m, state: slices.Clone(s.state), frame: w.n - 1}
}

// image returns the screenshot as an image, top row first.
func (sh *shot) image() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	for y := range side {
		copy(img.Pix[y*img.Stride:(y+1)*img.Stride], sh.pix[(side-1-y)*4*side:(side-y)*4*side])
	}
	return img
}

// verify checks the screenshot against what the texture held: every pixel
// outside the square is the texel the tiles put there, and the square is
// where frame sh.frame puts it.
func (sh *shot) verify() error {
	img := sh.image()
	sq := squareBounds(sh.frame)
	bad := 0
	var first string
	for y := range side {
		for x := range side {
			if image.Pt(x, y).In(sq) {
				continue
			}
			if got, want := img.RGBAAt(x, y), sh.mirror.RGBAAt(x, y); got != want {
				if bad == 0 {
					first = fmt.Sprintf("pixel (%d, %d) is %v; want %v", x, y, got, want)
				}
				bad++
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d pixels differ from the tiles uploaded; first: %s", bad, first)
	}
	cx, cy, _ := squareAt(sh.frame)
	want := color.RGBA{squareColor[0], squareColor[1], squareColor[2], 255}
	if got := img.RGBAAt(int(cx), int(cy)); got != want {
		return fmt.Errorf("the square's centre (%d, %d) is %v; want %v", int(cx), int(cy), got, want)
	}
	return nil
}

// count returns how many tiles are in the given state.
func (sh *shot) count(state int) int {
	n := 0
	for _, s := range sh.state {
		if s == state {
			n++
		}
	}
	return n
}

// check streams the picture twice, with the budget and without, saves the
// screenshots and the chart in dir, and checks them.
func (w *window) check(dir string, budget time.Duration) error {
	if budget <= 0 {
		return errors.New("check mode needs a frame budget")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var mid, final *shot
	withBudget, err := w.stream(budget, func(s *stream) {
		switch {
		case s.done():
			final = take(w, s)
		case mid == nil && s.details >= len(s.rects)/2:
			mid = take(w, s)
		}
	})
	if err != nil {
		return err
	}
	without, err := w.stream(0, nil)
	if err != nil {
		return err
	}
	if mid == nil || final == nil {
		return errors.New("the window closed before the picture was complete")
	}

	var errs []error
	check := func(what string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
		}
	}
	total := len(final.state)
	fmt.Printf("mid-stream, frame %d: %d of %d tiles in detail, %d previews, %d blank\n",
		mid.frame, mid.count(tileDetail), total, mid.count(tilePreview), mid.count(tileBlank))
	check("mid-stream screenshot", mid.verify())
	if d := mid.count(tileDetail); d == 0 || d == total || mid.count(tilePreview) == 0 {
		check("mid-stream screenshot", fmt.Errorf("%d of %d tiles in detail and %d previews; want a picture half streamed", d, total, mid.count(tilePreview)))
	}
	check("final screenshot", final.verify())
	check("final screenshot", final.matchesPicture())
	for name, sh := range map[string]*shot{"midstream.png": mid, "final.png": final} {
		check(name, writePNG(filepath.Join(dir, name), sh.image()))
	}

	late := frameInterval * 3 / 2 // between frame starts: a frame missed
	bu, nu := summarize(pick(withBudget, uploadTime), frameInterval), summarize(pick(without, uploadTime), frameInterval)
	fmt.Printf("uploads, with a %v budget: %s; at most %d in a frame\n", budget, bu, mostUploads(withBudget))
	fmt.Printf("uploads, without a budget: %s; at most %d in a frame\n", nu, mostUploads(without))
	fmt.Printf("whole frames, with the budget: %s\n", summarize(pick(withBudget, frameTotal), frameInterval))
	fmt.Printf("whole frames, without a budget: %s\n", summarize(pick(without, frameTotal), frameInterval))
	fmt.Printf("between frame starts, with the budget: %s\n", summarize(pick(withBudget, interval), late))
	fmt.Printf("between frame starts, without a budget: %s\n", summarize(pick(without, interval), late))
	check("frametimes.png", writePNG(filepath.Join(dir, "frametimes.png"), chart(withBudget, without, budget)))
	// When an upload starts after the budget is spent is a wall-clock
	// figure on a shared machine, where the main thread may lose its
	// processor at any instant: it is reported, not gated. The budget's
	// contract itself is proven with a fake clock by the loom's own tests.
	pastMargin, latest := 0, time.Duration(0)
	for _, f := range withBudget {
		if f.count <= 1 {
			continue
		}
		latest = max(latest, f.lastStart)
		if f.lastStart > budget+margin {
			pastMargin++
		}
	}
	fmt.Printf("with the budget, the latest upload started %v into its frame; %d of %d frames started one past the budget and a margin of %v\n",
		latest, pastMargin, len(withBudget), margin)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Printf("checked: both screenshots show the tiles uploaded, the final one the whole picture; the upload starts are reported above\n")
	return nil
}

// mostUploads returns the largest number of uploads run in one frame.
func mostUploads(times []frameTime) int {
	n := 0
	for _, t := range times {
		n = max(n, t.count)
	}
	return n
}

// matchesPicture checks a screenshot of the whole picture against tiles
// computed anew, one in every 7, away from the square.
func (sh *shot) matchesPicture() error {
	img := sh.image()
	sq := squareBounds(sh.frame)
	rects := fractal.Tiles(side, side, tileSide)
	for i := 0; i < len(rects); i += 7 {
		r := rects[i]
		if r.Overlaps(sq) {
			continue
		}
		want := fractal.RenderTile(view, side, side, r)
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				if got := img.RGBAAt(x, y); got != want.RGBAAt(x, y) {
					return fmt.Errorf("tile %v: pixel (%d, %d) is %v; the picture has %v", r, x, y, got, want.RGBAAt(x, y))
				}
			}
		}
	}
	return nil
}

// writePNG saves img as a PNG file.
func writePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
