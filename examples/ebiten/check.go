package main

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"slices"

	"github.com/hajimehoshi/ebiten/v2"

	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/mainthread"
)

// shotTick is the tick of the playing scene at which check mode reads the
// screen back.
const shotTick = 60

// hudHeight is the band at the top of the screen where the debug text is
// printed; the check leaves it out.
const hudHeight = 20

// check is the state of check mode: where to save the screenshot, the
// screenshot, and what it saw of the goroutines.
type check struct {
	path string
	shot *screenshot // taken by Draw, on the game goroutine

	mainThread bool // Update ran on the process's main thread
}

type screenshot struct {
	img  *image.RGBA
	tick int64 // the tick of the playing scene it shows
}

// onGameGoroutine records where Update runs: on Ebitengine's game
// goroutine, which drives the loom, and not on the main thread.
func (c *check) onGameGoroutine(l *loom.Loom) {
	if mainthread.IsMain() {
		c.mainThread = true
	}
}

// capture reads the screen back once, in the first frame drawn at or after
// shotTick. Ebitengine may run more than one Update per Draw, so the tick
// is recorded with the pixels.
func (c *check) capture(screen *ebiten.Image, t int64) {
	if c.shot != nil || t < shotTick {
		return
	}
	b := screen.Bounds()
	img := image.NewRGBA(b)
	screen.ReadPixels(img.Pix) // premultiplied, and the screen is opaque
	c.shot = &screenshot{img: img, tick: t}
}

// report checks what the game did: the scenes in order, each for some
// frames, the loom on the game goroutine, the screenshot taken while
// playing. It prints a summary.
func (c *check) report(g *game) error {
	var errs []error
	if c.mainThread {
		errs = append(errs, errors.New("Update ran on the main thread; want Ebitengine's game goroutine"))
	}
	if g.frames[sceneLoading] < 1 || g.frames[scenePlaying] < 1 {
		errs = append(errs, fmt.Errorf("frames per scene %v; want some in loading and playing", g.frames))
	}
	if g.assets.loaded != numAssets {
		errs = append(errs, fmt.Errorf("%d assets loaded; want %d", g.assets.loaded, numAssets))
	}
	loadFrames := len(g.assets.perTick)
	fmt.Printf("loading: %d assets decoded on %d workers, made into images over %d frames (at most %d in one; budget %v a frame)\n",
		g.assets.loaded, g.decoders.Stats().Limit, loadFrames, slices.Max(append(g.assets.perTick, 0)), applyBudget)
	fmt.Printf("playing: %d frames; done after %d frames in all\n", g.frames[scenePlaying], g.l.Frame())
	fmt.Printf("screenshot at tick %d of the playing scene: %s\n", c.shot.tick, c.path)
	return errors.Join(errs...)
}

// expected draws, in software, what the screen should show at tick t of
// the playing scene: the map under the camera and the sprites.
func expected(t int64) (*image.RGBA, error) {
	img := image.NewRGBA(image.Rect(0, 0, screenW, screenH))
	cam := camera(t)
	for row := range tileRows {
		for col := range tileCols {
			tile, err := decodeAsset(tileFile(col, row))
			if err != nil {
				return nil, err
			}
			r := image.Rect(col*tileSide, row*tileSide, (col+1)*tileSide, (row+1)*tileSide).Sub(cam)
			draw.Draw(img, r, tile, tile.Bounds().Min, draw.Src)
		}
	}
	for i := range numSprite {
		s, err := decodeAsset(spriteFile(i))
		if err != nil {
			return nil, err
		}
		p := spritePos(i, t)
		draw.Draw(img, image.Rectangle{p, p.Add(image.Pt(spriteSide, spriteSide))}, s, s.Bounds().Min, draw.Over)
	}
	return img, nil
}

// verifyShot checks that the screenshot in the PNG file at path is the
// frame at tick t of the playing scene: every pixel below the debug text
// matches the map tiles and sprites decoded from the assets, within 2 per
// channel. It reports how many pixels differ.
func verifyShot(path string, t int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	got, err := png.Decode(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if b := got.Bounds(); b.Dx() != screenW || b.Dy() != screenH {
		return fmt.Errorf("%s is %dx%d; want %dx%d", path, b.Dx(), b.Dy(), screenW, screenH)
	}
	want, err := expected(t)
	if err != nil {
		return err
	}
	bad, checked := 0, 0
	var first string
	for y := hudHeight; y < screenH; y++ {
		for x := range screenW {
			checked++
			g := color.RGBAModel.Convert(got.At(x, y)).(color.RGBA)
			w := want.RGBAAt(x, y)
			if near(g.R, w.R) && near(g.G, w.G) && near(g.B, w.B) {
				continue
			}
			if bad == 0 {
				first = fmt.Sprintf("pixel (%d, %d) is %v; want %v", x, y, g, w)
			}
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("%s: %d of %d pixels differ from tick %d of the playing scene; first: %s", path, bad, checked, t, first)
	}
	fmt.Printf("%s: all %d pixels below the text match tick %d of the playing scene\n", path, checked, t)
	return nil
}

func near(a, b uint8) bool { return max(a, b)-min(a, b) <= 2 }

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
