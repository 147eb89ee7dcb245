package main

import (
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/examples/internal/fractal"
	"github.com/taskqueue-go/taskqueue/internal/testkit"
)

// checkEnv makes the test binary run the program in check mode instead of
// the tests: GLFW needs the main goroutine, which TestMain has.
const checkEnv = "GLFW_EXAMPLE_CHECK"

func TestMain(m *testing.M) {
	if dir := os.Getenv(checkEnv); dir != "" {
		if err := run(dir, defaultBudget); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// TestCheckMode streams the picture in a window, with the budget and
// without, and checks the screenshots and the budget's count. It prints
// check mode's figures; no time is judged.
func TestCheckMode(t *testing.T) {
	if os.Getenv("DISPLAY") == "" {
		t.Fatal("no X display: run this test under xvfb-run, as .ci/run does")
	}
	dir := t.TempDir()
	start := time.Now()
	out, err := testkit.RunChild(t, []string{checkEnv + "=" + dir})
	if err != nil {
		t.Fatalf("check mode failed after %v: %v\n%s", time.Since(start).Round(time.Millisecond), err, out)
	}
	t.Logf("check mode, %v of wall clock:\n%s", time.Since(start).Round(time.Millisecond), out)
	if !strings.Contains(string(out), "checked: ") {
		t.Errorf("check mode output:\n%s", out)
	}
	for _, name := range []string{"midstream.png", "final.png", "frametimes.png"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

// fakeShot returns a screenshot of a half-streamed picture drawn in
// software, as glReadPixels would return it, with the square of frame n.
func fakeShot(n int) *shot {
	mirror := image.NewRGBA(image.Rect(0, 0, side, side))
	rects := fractal.Tiles(side, side, tileSide)
	state := make([]int, len(rects))
	for i, r := range rects {
		if i%3 == 0 {
			continue // blank
		}
		step, st := 1, tileDetail
		if i%3 == 1 {
			step, st = previewStep, tilePreview
		}
		state[i] = st
		tile := fractal.RenderCoarse(fractal.View{CenterRe: -0.75, Width: 3.5, MaxIter: 50}, side, side, r, step)
		for y := r.Min.Y; y < r.Max.Y; y++ {
			copy(mirror.Pix[mirror.PixOffset(r.Min.X, y):], tile.Pix[tile.PixOffset(r.Min.X, y):tile.PixOffset(r.Max.X, y)])
		}
	}
	screen := image.NewRGBA(mirror.Rect)
	copy(screen.Pix, mirror.Pix)
	cx, cy, _ := squareAt(n)
	for y := int(cy) - 10; y <= int(cy)+10; y++ {
		for x := int(cx) - 10; x <= int(cx)+10; x++ {
			screen.SetRGBA(x, y, color.RGBA{squareColor[0], squareColor[1], squareColor[2], 255})
		}
	}
	pix := make([]byte, len(screen.Pix)) // bottom row first
	for y := range side {
		copy(pix[(side-1-y)*4*side:(side-y)*4*side], screen.Pix[y*screen.Stride:(y+1)*screen.Stride])
	}
	return &shot{pix: pix, mirror: mirror, state: state, frame: n}
}

// TestVerifyCanFail makes sure the screenshot check can fail: a screenshot
// that matches passes; one with a pixel changed, or with the square of
// another frame, does not.
func TestVerifyCanFail(t *testing.T) {
	if err := fakeShot(7).verify(); err != nil {
		t.Fatalf("verify of a matching screenshot: %v", err)
	}
	bad := fakeShot(7)
	bad.pix[4*(10*side+10)] ^= 0x40
	if err := bad.verify(); err == nil || !strings.Contains(err.Error(), "1 pixels differ") {
		t.Errorf("verify with a pixel changed = %v; want 1 pixel to differ", err)
	}
	moved := fakeShot(7)
	moved.frame = 37
	if err := moved.verify(); err == nil {
		t.Error("verify with the square elsewhere passed")
	}
}

// TestBudgetCheckCanFail: the check of the budgeted stream passes frames
// that ran up to the budget's count, and fails one that ran more.
func TestBudgetCheckCanFail(t *testing.T) {
	times := []frameTime{{count: 0}, {count: 100}, {count: 37}}
	if err := checkBudget(times, 100); err != nil {
		t.Errorf("checkBudget of frames within the budget: %v", err)
	}
	times = append(times, frameTime{count: 101})
	if err := checkBudget(times, 100); err == nil || !strings.Contains(err.Error(), "frame 3 of the stream ran 101 uploads") {
		t.Errorf("checkBudget of a frame over the budget = %v; want frame 3 named", err)
	}
}

// TestChartDrawsBothSeries: the budgeted stream is drawn on the left half
// of the chart, in blue, and the other on the right, in orange.
func TestChartDrawsBothSeries(t *testing.T) {
	a := []frameTime{{count: 100, uploads: time.Millisecond, interval: 5 * time.Millisecond}, {count: 40, uploads: 2 * time.Millisecond, interval: 40 * time.Millisecond}}
	b := []frameTime{{count: 2000, uploads: 30 * time.Millisecond, interval: 50 * time.Millisecond}, {count: 3, interval: 17 * time.Millisecond}}
	img := chart(a, b, 100)
	mid := img.Bounds().Dx() / 2
	found := map[bool]map[color.RGBA]int{false: {}, true: {}} // by half: right or not
	for y := range img.Bounds().Dy() {
		for x := range img.Bounds().Dx() {
			found[x >= mid][img.RGBAAt(x, y)]++
		}
	}
	// Beyond the legend's swatch of each, 16×12 pixels.
	const swatchPixels = 16 * 12
	if found[false][blue] <= swatchPixels || found[false][orange] != 0 {
		t.Errorf("left half: %d blue and %d orange pixels; want the budgeted stream in blue only", found[false][blue], found[false][orange])
	}
	if found[true][orange] <= swatchPixels || found[true][blue] != 0 {
		t.Errorf("right half: %d orange and %d blue pixels; want the other stream in orange only", found[true][orange], found[true][blue])
	}
}
