package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
)

const (
	side     = 256 // the window and the texture, in pixels
	tileSide = 64  // a tile, in pixels
	perRow   = side / tileSide
	numTiles = perRow * perRow
)

// tileColor is the colour the workers paint tile (tx, ty), counted from the
// bottom left.
func tileColor(tx, ty int) color.RGBA {
	return color.RGBA{R: uint8(40 + 60*tx), G: uint8(40 + 60*ty), B: uint8(220 - 25*(tx+ty)), A: 255}
}

// makeTile returns the RGBA texels of tile (tx, ty): its colour, with a
// one-texel dark border so that the tiles show apart.
func makeTile(tx, ty int) []byte {
	c := tileColor(tx, ty)
	pix := make([]byte, 4*tileSide*tileSide)
	for y := range tileSide {
		for x := range tileSide {
			p := pix[4*(y*tileSide+x):]
			if x == 0 || y == 0 || x == tileSide-1 || y == tileSide-1 {
				p[0], p[1], p[2], p[3] = 0, 0, 0, 255
				continue
			}
			p[0], p[1], p[2], p[3] = c.R, c.G, c.B, c.A
		}
	}
	return pix
}

// writeScreenshot saves w×h RGBA pixels, bottom row first as glReadPixels
// returns them, as a PNG file.
func writeScreenshot(path string, pix []byte, w, h int) error {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		copy(img.Pix[y*img.Stride:(y+1)*img.Stride], pix[(h-1-y)*4*w:(h-y)*4*w])
	}
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

// verifyScreenshot checks that the PNG file at path shows every tile in its
// colour: the pixels the workers generated reached the texture through the
// main thread.
func verifyScreenshot(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return err
	}
	if b := img.Bounds(); b.Dx() != side || b.Dy() != side {
		return fmt.Errorf("%s is %dx%d; want %dx%d", path, b.Dx(), b.Dy(), side, side)
	}
	bad := 0
	for ty := range perRow {
		for tx := range perRow {
			// The image's row 0 is the top; tile row 0 is the bottom.
			x := tx*tileSide + tileSide/2
			y := side - 1 - (ty*tileSide + tileSide/2)
			got := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if want := tileColor(tx, ty); got != want {
				fmt.Fprintf(os.Stderr, "tile (%d, %d): pixel (%d, %d) is %v; want %v\n", tx, ty, x, y, got, want)
				bad++
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%s: %d of %d tiles are missing or wrong", path, bad, numTiles)
	}
	return nil
}
