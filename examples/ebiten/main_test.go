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

	"github.com/taskqueue-go/taskqueue/internal/testkit"
)

// checkEnv makes the test binary run the game in check mode instead of the
// tests: Ebitengine needs the main goroutine, and a process runs one game.
const checkEnv = "EBITEN_EXAMPLE_CHECK"

func TestMain(m *testing.M) {
	if path := os.Getenv(checkEnv); path != "" {
		if err := run(path, 0); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// TestCheckMode plays the game in a window and checks its screenshot: the
// scenes in order, the assets decoded by workers and made into images on
// the game goroutine, the frame read back pixel for pixel.
func TestCheckMode(t *testing.T) {
	if os.Getenv("DISPLAY") == "" {
		t.Fatal("no X display: run this test under xvfb-run, as .ci/run does")
	}
	path := filepath.Join(t.TempDir(), "shot.png")
	start := time.Now()
	out, err := testkit.RunChild(t, []string{checkEnv + "=" + path})
	if err != nil {
		t.Fatalf("check mode failed after %v: %v\n%s", time.Since(start).Round(time.Millisecond), err, out)
	}
	t.Logf("check mode, %v of wall clock:\n%s", time.Since(start).Round(time.Millisecond), out)
	for _, want := range []string{"pixels below the text match tick", "loading: 51 assets", "playing: "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("check mode output lacks %q:\n%s", want, out)
		}
	}
}

// TestVerifyCanFail makes sure the pixel check can fail: a frame drawn in
// software passes, and the same frame with one sprite moved, one pixel of a
// tile changed, or checked against another tick, does not.
func TestVerifyCanFail(t *testing.T) {
	write := func(img image.Image) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "shot.png")
		if err := writePNG(path, img); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good, err := expected(shotTick)
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyShot(write(good), shotTick); err != nil {
		t.Fatalf("verify of the expected frame: %v", err)
	}
	if err := verifyShot(write(good), shotTick+1); err == nil {
		t.Error("verify against the next tick passed; want pixels to differ")
	}
	bad, _ := expected(shotTick)
	c := bad.RGBAAt(300, 300)
	bad.SetRGBA(300, 300, color.RGBA{c.R ^ 0x40, c.G, c.B, 255})
	if err := verifyShot(write(bad), shotTick); err == nil || !strings.Contains(err.Error(), "1 of") {
		t.Errorf("verify with one pixel changed = %v; want 1 pixel to differ", err)
	}
	moved, _ := expected(shotTick + 1) // the sprites one tick on
	if err := verifyShot(write(moved), shotTick); err == nil {
		t.Error("verify of a frame with the sprites moved passed")
	}
}

func TestBounce(t *testing.T) {
	cases := []struct {
		p    int64
		span int
		want int
	}{
		{0, 10, 0}, {7, 10, 7}, {10, 10, 10}, {13, 10, 7}, {20, 10, 0}, {23, 10, 3}, {-3, 10, 3},
	}
	for _, c := range cases {
		if got := bounce(c.p, c.span); got != c.want {
			t.Errorf("bounce(%d, %d) = %d; want %d", c.p, c.span, got, c.want)
		}
	}
}

func TestAssetsDecode(t *testing.T) {
	names := assetFiles()
	if len(names) != numAssets {
		t.Fatalf("%d asset files; want %d", len(names), numAssets)
	}
	for _, name := range names {
		img, err := decodeAsset(name)
		if err != nil {
			t.Fatal(err)
		}
		want := tileSide
		if strings.Contains(name, "sprite") {
			want = spriteSide
		}
		if b := img.Bounds(); b.Dx() != want || b.Dy() != want {
			t.Errorf("%s is %v; want %d pixels square", name, b, want)
		}
	}
}
