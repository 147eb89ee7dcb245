//go:build ignore

// gen_assets draws the example's assets: the tiles of the world map and the
// sprites. The game only decodes them; run this to change them:
//
//	go generate
package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
	"path/filepath"
)

const (
	tileSide = 160
	cols     = 8
	rows     = 6
)

func main() {
	for r := range rows {
		for c := range cols {
			write(fmt.Sprintf("tile_%d_%d.png", r, c), tile(c, r))
		}
	}
	for i, c := range []color.RGBA{{230, 60, 50, 255}, {250, 210, 40, 255}, {240, 240, 250, 255}} {
		write(fmt.Sprintf("sprite_%d.png", i), sprite(c))
	}
}

// height is the terrain's height at a point of the world, in [-1, 1].
func height(x, y float64) float64 {
	x, y = x/(cols*tileSide), y/(rows*tileSide)
	h := math.Sin(5.1*x+1.3)*math.Cos(4.3*y-0.4) +
		0.5*math.Sin(11.7*x*y+2.1) +
		0.35*math.Cos(9.3*x-7.7*y)
	return h / 1.85
}

var bands = []struct {
	top float64
	c   color.RGBA
}{
	{-0.35, color.RGBA{22, 58, 128, 255}}, // deep water
	{-0.1, color.RGBA{40, 102, 178, 255}}, // water
	{0.0, color.RGBA{214, 194, 122, 255}}, // sand
	{0.3, color.RGBA{78, 152, 64, 255}},   // grass
	{0.55, color.RGBA{36, 104, 48, 255}},  // forest
	{2, color.RGBA{124, 114, 104, 255}},   // rock
}

func tile(c, r int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, tileSide, tileSide))
	for y := range tileSide {
		for x := range tileSide {
			wx, wy := float64(c*tileSide+x), float64(r*tileSide+y)
			h := height(wx, wy)
			var col color.RGBA
			for _, b := range bands {
				if h < b.top {
					col = b.c
					break
				}
			}
			// Shade by slope, so that the relief shows.
			k := 1 + 40*(height(wx+2, wy+2)-h)
			if x == 0 || y == 0 {
				k *= 0.9 // a faint grid, so that the tiles show apart
			}
			col.R, col.G, col.B = sc(col.R, k), sc(col.G, k), sc(col.B, k)
			img.SetRGBA(x, y, col)
		}
	}
	return img
}

func sc(v uint8, k float64) uint8 { return uint8(max(0, min(255, float64(v)*k))) }

func sprite(c color.RGBA) *image.RGBA {
	const side = 32
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	for y := range side {
		for x := range side {
			d := math.Hypot(float64(x)-15.5, float64(y)-15.5)
			switch {
			case d < 12:
				img.SetRGBA(x, y, c)
			case d < 15:
				img.SetRGBA(x, y, color.RGBA{20, 20, 28, 255})
			}
		}
	}
	return img
}

func write(name string, img image.Image) {
	f, err := os.Create(filepath.Join("assets", name))
	if err != nil {
		log.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}
