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

	"github.com/taskqueue-go/taskqueue/examples/internal/fractal"
)

// defaultBudget is how many uploads a frame may run: the flood of previews
// then takes a few dozen frames.
const defaultBudget = 100

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
// screenshots and the chart in dir, and checks them. What it checks does
// not depend on the machine's speed: the screenshots, and that no frame of
// the budgeted stream ran more uploads than the budget. The times are
// printed and charted, not judged.
func (w *window) check(dir string, budget int) error {
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
	for _, run := range []struct {
		name  string
		times []frameTime
	}{{fmt.Sprintf("with a budget of %d uploads a frame", budget), withBudget}, {"without a budget", without}} {
		fmt.Printf("%s:\n", run.name)
		fmt.Printf("  uploads: %s\n", countsOf(run.times))
		fmt.Printf("  time of the uploads: %s\n", summarize(pick(run.times, uploadTime), frameInterval))
		fmt.Printf("  whole frames: %s\n", summarize(pick(run.times, frameTotal), frameInterval))
		fmt.Printf("  between frame starts: %s\n", summarize(pick(run.times, interval), late))
	}
	check("frametimes.png", writePNG(filepath.Join(dir, "frametimes.png"), chart(withBudget, without, budget)))
	check("the budgeted stream", checkBudget(withBudget, budget))
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Printf("checked: both screenshots show the tiles uploaded, the final one the whole picture; no frame ran more than %d uploads with the budget\n", budget)
	return nil
}

// checkBudget returns an error if a frame ran more uploads than the budget.
func checkBudget(times []frameTime, budget int) error {
	for i, t := range times {
		if t.count > budget {
			return fmt.Errorf("frame %d of the stream ran %d uploads; the budget is %d", i, t.count, budget)
		}
	}
	return nil
}

// uploadCounts summarizes the uploads run in the frames of a stream.
type uploadCounts struct {
	uploads int // in all
	frames  int // that ran at least one
	most    int // in one frame
}

func countsOf(times []frameTime) uploadCounts {
	var c uploadCounts
	for _, t := range times {
		c.uploads += t.count
		c.most = max(c.most, t.count)
		if t.count > 0 {
			c.frames++
		}
	}
	return c
}

func (c uploadCounts) String() string {
	return fmt.Sprintf("%d uploads over %d frames, at most %d in one", c.uploads, c.frames, c.most)
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
