package fractal_test

import (
	"image"
	"testing"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/examples/internal/fractal"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var view = fractal.View{CenterRe: -0.75, Width: 3.5, MaxIter: 200}

func TestTilesCoverThePicture(t *testing.T) {
	rs := fractal.Tiles(100, 50, 32)
	if len(rs) != 8 {
		t.Fatalf("Tiles(100, 50, 32) made %d tiles; want 8", len(rs))
	}
	area := 0
	for i, r := range rs {
		area += r.Dx() * r.Dy()
		for _, s := range rs[:i] {
			if r.Overlaps(s) {
				t.Errorf("tiles %v and %v overlap", r, s)
			}
		}
	}
	if area != 100*50 {
		t.Errorf("tiles cover %d pixels; want 5000", area)
	}
}

// TestCoarseStepOneIsTheTile checks that a preview of step 1 is the tile
// itself, and that a coarse preview repeats each computed point over its
// block.
func TestCoarseStepOneIsTheTile(t *testing.T) {
	rect := image.Rect(40, 24, 72, 56)
	fine := fractal.RenderTile(view, 120, 90, rect)
	if got := fractal.RenderCoarse(view, 120, 90, rect, 1); string(got.Pix) != string(fine.Pix) {
		t.Error("RenderCoarse(step 1) differs from RenderTile")
	}
	coarse := fractal.RenderCoarse(view, 120, 90, rect, 8)
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		for x := rect.Min.X; x < rect.Max.X; x++ {
			bx, by := x-(x-rect.Min.X)%8, y-(y-rect.Min.Y)%8
			if got, want := coarse.RGBAAt(x, y), fine.RGBAAt(bx, by); got != want {
				t.Fatalf("coarse pixel (%d, %d) = %v; want the block's point (%d, %d) %v", x, y, got, bx, by, want)
			}
		}
	}
}
