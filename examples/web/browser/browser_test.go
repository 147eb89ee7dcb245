package browser

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/examples/internal/fractal"
	"github.com/taskqueue-go/taskqueue/examples/web/internal/page"
	"github.com/taskqueue-go/taskqueue/examples/web/internal/site"
	"github.com/taskqueue-go/taskqueue/internal/testkit"
)

var screenshotOut = flag.String("screenshot", "", "write TestPage's screenshot of the canvas to this PNG file")

// allowSkip is the environment variable that lets the tests skip, and only
// when no Chromium is installed. CI does not set it: there the page runs.
const allowSkip = "TASKQUEUE_WEB_ALLOW_SKIP"

// built is the page, compiled once for all the tests and removed after
// them.
var built struct {
	once sync.Once
	site *site.Site
	err  error
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if built.site != nil {
			built.site.Close()
		}
		os.Exit(code)
	}))
}

// serve builds the page (the first time) and serves it until the test ends.
func serve(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		var log bytes.Buffer
		built.site, built.err = site.Build(context.Background(), &log)
		t.Logf("%s", log.Bytes())
		if built.err == nil {
			t.Logf("built main.wasm (%.1f MB) for js/wasm in %v",
				float64(built.site.WasmSize)/1e6, built.site.BuildTime.Round(time.Millisecond))
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	srv := httptest.NewServer(built.site.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// chromium returns the browser's path, or skips the test if there is none
// and the environment allows it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	const how = "install Debian's chromium (apt-get install chromium)"
	if os.Getenv(allowSkip) == "1" {
		t.Skipf("no chromium in PATH and %s=1: skipped; %s to run the page", allowSkip, how)
	}
	t.Fatalf("no chromium in PATH: %s, or set %s=1 to skip", how, allowSkip)
	return ""
}

// result is what the page reports on window.taskqueueWeb.
type result struct {
	Error        string  `json:"error"`
	Done         bool    `json:"done"`
	Tiles        int     `json:"tiles"`
	Frames       int     `json:"frames"`
	TileFrames   int     `json:"tileFrames"`
	LongestGapMs float64 `json:"longestGapMs"`
	TotalMs      float64 `json:"totalMs"`
	SHA256       string  `json:"sha256"`
	Width        int     `json:"width"`
	Height       int     `json:"height"`
}

func (r result) String() string {
	return fmt.Sprintf("%d tiles in %.0f ms over %d frames, tiles drawn in %d of them, longest gap between frames %.1f ms",
		r.Tiles, r.TotalMs, r.Frames, r.TileFrames, r.LongestGapMs)
}

// load opens the page at url in a fresh headless Chromium, waits until it
// reports, and returns the report and a screenshot of the canvas (PNG).
// The page's console goes to the test log when the test fails.
func load(t *testing.T, url string) (result, []byte) {
	t.Helper()
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 1000),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		// The canvas's sRGB bytes reach the screenshot unchanged.
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("hide-scrollbars", true),
		// A headless page is never visible: nothing may slow its frames.
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
	)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()

	// The console, read until the browser goes, for the log of a failure.
	var (
		mu      sync.Mutex
		console []string
	)
	messages := chromedp.Console(ctx) // starts the browser
	consoleDone := make(chan struct{})
	go func() {
		defer close(consoleDone)
		for m, err := range messages {
			if err != nil {
				return
			}
			mu.Lock()
			console = append(console, m.String())
			mu.Unlock()
		}
	}()
	defer func() {
		cancel()
		<-consoleDone
		if t.Failed() {
			t.Logf("the page's console:\n%s", strings.Join(console, "\n"))
		}
	}()

	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	// The page takes what the machine gives it: the wait has no bound of its
	// own, only go test's -timeout, which it leaves a little early so that
	// the failure comes with the page's console.
	wctx, cancelWait := testkit.BeforeDeadline(t, ctx)
	defer cancelWait()
	r, err := chromedp.Run(wctx, chromedp.Poll[result]("window.taskqueueWeb",
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(0)))
	if err != nil {
		t.Fatalf("waiting for the page to finish: %v", err)
	}
	if r.Error != "" || !r.Done {
		t.Fatalf("the page did not finish: %+v", r)
	}
	shot, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.ID("picture")))
	if err != nil {
		t.Fatalf("screenshot of the canvas: %v", err)
	}
	return r, shot
}

// expected renders cfg's picture with the desktop renderer.
func expected(cfg page.Config) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, cfg.Width, cfg.Height))
	for _, r := range fractal.Tiles(cfg.Width, cfg.Height, cfg.Tile) {
		draw.Draw(img, r, fractal.RenderTile(cfg.View, cfg.Width, cfg.Height, r), r.Min, draw.Src)
	}
	return img
}

// comparePixels checks the screenshot against want pixel for pixel, each
// channel within tolerance, and reports how many pixels differ at all and
// by how much at most.
func comparePixels(shot []byte, want *image.RGBA, tolerance int) (differ, maxDiff int, err error) {
	got, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		return 0, 0, fmt.Errorf("the screenshot is not a PNG image: %v", err)
	}
	if got.Bounds().Size() != want.Rect.Size() {
		return 0, 0, fmt.Errorf("the screenshot is %v; want the canvas's %v", got.Bounds().Size(), want.Rect.Size())
	}
	off := got.Bounds().Min
	var first error
	for y := range want.Rect.Dy() {
		for x := range want.Rect.Dx() {
			r, g, b, a := got.At(off.X+x, off.Y+y).RGBA()
			w := want.RGBAAt(x, y)
			d := max(absDiff(r>>8, w.R), absDiff(g>>8, w.G), absDiff(b>>8, w.B), absDiff(a>>8, w.A))
			if d > 0 {
				differ++
				maxDiff = max(maxDiff, d)
			}
			if d > tolerance && first == nil {
				first = fmt.Errorf("pixel (%d,%d) is %d,%d,%d,%d; want %v", x, y, r>>8, g>>8, b>>8, a>>8, w)
			}
		}
	}
	return differ, maxDiff, first
}

func absDiff(a uint32, b uint8) int {
	d := int(a) - int(b)
	return max(d, -d)
}

// checkFrames checks that frames kept coming while the tiles rendered:
// tiles were drawn in many frames. A page whose workers hold its one thread
// draws every tile in one frame, after one long wait. The count of frames
// with tiles tells the two apart on any machine. The longest gap between
// two frames does not: it is wall-clock time, which a busy machine
// stretches (one run whose picture matched exactly had a gap of 2.5 s,
// while its page without the workers' pauses had one of 250 ms), so the
// tests print it and do not judge it.
func checkFrames(r result) error {
	if r.TileFrames < minTileFrames {
		return fmt.Errorf("tiles were drawn in %d frames; want at least %d", r.TileFrames, minTileFrames)
	}
	return nil
}

// minTileFrames is the fewest frames with tiles that checkFrames accepts.
// The default page draws its 192 tiles in dozens of frames (37 on two
// cores); a page whose workers never pause, in one or two.
const minTileFrames = 10

func hashOf(img *image.RGBA) string {
	sum := sha256.Sum256(img.Pix)
	return hex.EncodeToString(sum[:])
}

// TestPage loads the page with the desktop demo's picture and checks it:
// the canvas shows the desktop renderer's picture, the Go program's own
// copy hashes the same, and frames kept coming while the tiles rendered
// (tiles drawn in many frames). The longest gap between frames is printed.
func TestPage(t *testing.T) {
	url := serve(t)
	start := time.Now()
	r, shot := load(t, url)
	t.Logf("page: %v (wall clock from opening the browser: %v)", r, time.Since(start).Round(time.Millisecond))
	if *screenshotOut != "" {
		if err := os.WriteFile(*screenshotOut, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	cfg := page.Default()
	want := expected(cfg)
	if r.Width != cfg.Width || r.Height != cfg.Height || r.Tiles != len(fractal.Tiles(cfg.Width, cfg.Height, cfg.Tile)) {
		t.Fatalf("the page drew %dx%d in %d tiles; want the desktop demo's %dx%d", r.Width, r.Height, r.Tiles, cfg.Width, cfg.Height)
	}
	if h := hashOf(want); r.SHA256 != h {
		t.Errorf("the page's picture hashes to %s; the desktop renderer's to %s", r.SHA256, h)
	}
	differ, maxDiff, err := comparePixels(shot, want, 0)
	t.Logf("screenshot of the canvas: %d of %d pixels differ from the desktop renderer's, by at most %d",
		differ, cfg.Width*cfg.Height, maxDiff)
	if err != nil {
		t.Error(err)
	}
	if err := checkFrames(r); err != nil {
		t.Error(err)
	}
}

// TestFrameCheckCanFail loads the page with the workers' pause turned off:
// the picture is still right, but the workers hold the page's one thread
// until the last tile, so the tiles land in one or two frames, and the
// frame check must say so.
func TestFrameCheckCanFail(t *testing.T) {
	url := serve(t)
	r, _ := load(t, url+"/?w=512&h=384&yield=0")
	t.Logf("page without the workers' pause: %v", r)
	cfg := page.Default()
	cfg.Width, cfg.Height = 512, 384
	if h := hashOf(expected(cfg)); r.SHA256 != h {
		t.Errorf("the page's picture hashes to %s; the desktop renderer's to %s", r.SHA256, h)
	}
	if err := checkFrames(r); err == nil {
		t.Errorf("the frame check passed a page whose workers never pause: tiles drawn in %d frames", r.TileFrames)
	} else {
		t.Logf("the frame check fails, as it should: %v", err)
	}
}

// TestPixelCheckCanFail changes one channel of one pixel by one: the exact
// comparison must see it.
func TestPixelCheckCanFail(t *testing.T) {
	cfg := page.Default()
	cfg.Width, cfg.Height, cfg.View.MaxIter = 64, 48, 50
	want := expected(cfg)
	var good bytes.Buffer
	if err := png.Encode(&good, want); err != nil {
		t.Fatal(err)
	}
	if differ, _, err := comparePixels(good.Bytes(), want, 0); err != nil || differ != 0 {
		t.Fatalf("the picture against itself: %d pixels differ, %v", differ, err)
	}
	bad := image.NewRGBA(want.Rect)
	copy(bad.Pix, want.Pix)
	bad.Pix[4*(10*cfg.Width+20)+1] ^= 1
	var buf bytes.Buffer
	if err := png.Encode(&buf, bad); err != nil {
		t.Fatal(err)
	}
	differ, maxDiff, err := comparePixels(buf.Bytes(), want, 0)
	if err == nil || differ != 1 || maxDiff != 1 {
		t.Errorf("one channel off by one: %d pixels differ by at most %d, error %v; want 1, 1 and an error", differ, maxDiff, err)
	}
}
