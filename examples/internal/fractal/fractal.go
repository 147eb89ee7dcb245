// Package fractal computes the Mandelbrot set tile by tile, for the
// examples that stream pictures from worker queues to a frame loop.
package fractal

import (
	"image"
	"image/color"
	"math"
)

// View is the region of the complex plane a picture shows.
type View struct {
	CenterRe, CenterIm float64
	Width              float64 // of the region, along the real axis
	MaxIter            int     // iterations before a point counts as inside the set
}

// RenderTile computes the pixels of rect, a tile of a w×h picture of v, in a
// buffer of its own. It is pure: the same inputs give the same bytes,
// whichever goroutine runs it, which keeps a picture deterministic.
func RenderTile(v View, w, h int, rect image.Rectangle) *image.RGBA {
	return RenderCoarse(v, w, h, rect, 1)
}

// RenderCoarse is RenderTile for a preview: it computes one point in each
// block of step×step pixels (its top left one) and fills the block with it,
// which costs about step² times less. RenderCoarse with step 1 is RenderTile.
func RenderCoarse(v View, w, h int, rect image.Rectangle, step int) *image.RGBA {
	step = max(step, 1)
	tile := image.NewRGBA(rect)
	scale := v.Width / float64(w)
	for y := rect.Min.Y; y < rect.Max.Y; y += step {
		im := v.CenterIm + (float64(h)/2-float64(y))*scale
		for x := rect.Min.X; x < rect.Max.X; x += step {
			re := v.CenterRe + (float64(x)-float64(w)/2)*scale
			c := Shade(Escape(re, im, v.MaxIter), v.MaxIter)
			for by := y; by < min(y+step, rect.Max.Y); by++ {
				for bx := x; bx < min(x+step, rect.Max.X); bx++ {
					tile.SetRGBA(bx, by, c)
				}
			}
		}
	}
	return tile
}

// Escape returns a smooth iteration count for c = re+im·i, or -1 if the
// point does not escape within maxIter iterations.
func Escape(re, im float64, maxIter int) float64 {
	var zr, zi float64
	for n := range maxIter {
		zr, zi = zr*zr-zi*zi+re, 2*zr*zi+im
		if m := zr*zr + zi*zi; m > 256 {
			return float64(n) + 1 - math.Log2(math.Log2(m)/2)
		}
	}
	return -1
}

// Shade maps a smooth iteration count to a colour: black inside the set, a
// blue-gold gradient outside.
func Shade(n float64, maxIter int) color.RGBA {
	if n < 0 {
		return color.RGBA{A: 255}
	}
	t := math.Mod(n/32, 1)
	return color.RGBA{
		R: uint8(255 * clamp(9*(1-t)*t*t*t)),
		G: uint8(255 * clamp(15*(1-t)*(1-t)*t*t)),
		B: uint8(255 * clamp(8.5*(1-t)*(1-t)*(1-t)*t)),
		A: 255,
	}
}

func clamp(x float64) float64 { return max(0, min(1, x)) }

// Tiles splits a w×h picture into tiles of at most size×size, row by row.
func Tiles(w, h, size int) []image.Rectangle {
	var rs []image.Rectangle
	for y := 0; y < h; y += size {
		for x := 0; x < w; x += size {
			rs = append(rs, image.Rect(x, y, min(x+size, w), min(y+size, h)))
		}
	}
	return rs
}
