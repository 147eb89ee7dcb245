package main

import (
	"image"
	"image/color"
	"math"
)

// view is the region of the complex plane the image shows.
type view struct {
	centerRe, centerIm, width float64
	maxIter                   int
}

// renderTile computes the pixels of rect, a tile of an image of size w×h, in
// a buffer of its own. It is pure: the same inputs give the same bytes,
// whichever goroutine runs it, which keeps the image deterministic.
func renderTile(v view, w, h int, rect image.Rectangle) *image.RGBA {
	tile := image.NewRGBA(rect)
	scale := v.width / float64(w)
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		im := v.centerIm + (float64(h)/2-float64(y))*scale
		for x := rect.Min.X; x < rect.Max.X; x++ {
			re := v.centerRe + (float64(x)-float64(w)/2)*scale
			tile.SetRGBA(x, y, shade(escape(re, im, v.maxIter), v.maxIter))
		}
	}
	return tile
}

// escape returns a smooth iteration count for c = re+im·i, or -1 if the
// point does not escape within maxIter iterations.
func escape(re, im float64, maxIter int) float64 {
	var zr, zi float64
	for n := range maxIter {
		zr, zi = zr*zr-zi*zi+re, 2*zr*zi+im
		if m := zr*zr + zi*zi; m > 256 {
			return float64(n) + 1 - math.Log2(math.Log2(m)/2)
		}
	}
	return -1
}

// shade maps a smooth iteration count to a colour: black inside the set, a
// blue-gold gradient outside.
func shade(n float64, maxIter int) color.RGBA {
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

// tiles splits a w×h image into tiles of at most size×size, row by row.
func tiles(w, h, size int) []image.Rectangle {
	var rs []image.Rectangle
	for y := 0; y < h; y += size {
		for x := 0; x < w; x += size {
			rs = append(rs, image.Rect(x, y, min(x+size, w), min(y+size, h)))
		}
	}
	return rs
}
