package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/examples/internal/fractal"
	"github.com/taskqueue-go/taskqueue/mainthread"
)

// TestMain serves the main thread, which the renderer's frame buffer needs.
func TestMain(m *testing.M) {
	mainthread.Run(func() {
		goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
	})
}

func testConfig(t *testing.T, workers int) config {
	return config{
		width: 200, height: 150, tile: 32, workers: workers, perFrame: 4,
		view: fractal.View{CenterRe: -0.75, Width: 3.5, MaxIter: 300},
		out:  filepath.Join(t.TempDir(), "out.png"),
	}
}

// TestImageIsDeterministic renders the same picture with one worker and with
// eight: the files must be byte for byte the same, whatever order the tiles
// came in.
func TestImageIsDeterministic(t *testing.T) {
	var files [][]byte
	for _, workers := range []int{1, 8} {
		cfg := testConfig(t, workers)
		var status bytes.Buffer
		if err := render(context.Background(), cfg, &status, false); err != nil {
			t.Fatalf("render with %d workers: %v", workers, err)
		}
		b, err := os.ReadFile(cfg.out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Fatalf("%s is not a PNG file", cfg.out)
		}
		files = append(files, b)

		// Not on a terminal: a line per 10% step, ending at 100%.
		lines := strings.Split(strings.TrimSpace(status.String()), "\n")
		if n := len(lines); n < 2 || n > 11 {
			t.Errorf("%d status lines; want one per 10%% step:\n%s", n, status.String())
		}
		if last := lines[len(lines)-1]; !strings.HasPrefix(last, "100%  35/35 tiles") {
			t.Errorf("last status line %q; want 100%% of 35 tiles", last)
		}
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("the image differs between 1 and 8 workers")
	}
}

var (
	barLine  = regexp.MustCompile(`^\[(#*)(\.*)\] +(\d+)%  (\d+)/(\d+) tiles  .* frame (\d+) `)
	textLine = regexp.MustCompile(`^ *(\d+)%  (\d+)/(\d+) tiles  .* frame (\d+) `)
)

// TestBarAndTextAgree checks every progress update, on a terminal and off
// one: the bar, the percentage and the tile count say the same thing, and
// the count never goes back.
func TestBarAndTextAgree(t *testing.T) {
	for _, terminal := range []bool{true, false} {
		t.Run(fmt.Sprintf("terminal=%v", terminal), func(t *testing.T) {
			cfg := testConfig(t, 4)
			var status bytes.Buffer
			if err := render(context.Background(), cfg, &status, terminal); err != nil {
				t.Fatal(err)
			}
			var updates []string
			if terminal {
				for u := range strings.SplitSeq(strings.TrimSuffix(status.String(), "\n"), "\r") {
					if u != "" {
						updates = append(updates, strings.TrimSuffix(u, "\x1b[K"))
					}
				}
			} else {
				updates = strings.Split(strings.TrimSpace(status.String()), "\n")
			}
			if len(updates) < 2 {
				t.Fatalf("%d progress updates; want several:\n%q", len(updates), status.String())
			}
			last := -1
			for _, u := range updates {
				var percent, applied, total int
				if terminal {
					m := barLine.FindStringSubmatch(u)
					if m == nil {
						t.Fatalf("progress update %q does not look like a bar and a status line", u)
					}
					percent, applied, total = atoi(m[3]), atoi(m[4]), atoi(m[5])
					if filled, want := len(m[1]), applied*barWidth/total; filled != want || len(m[1])+len(m[2]) != barWidth {
						t.Errorf("%q: bar has %d of %d cells filled; want %d for %d/%d tiles", u, filled, len(m[1])+len(m[2]), want, applied, total)
					}
				} else {
					m := textLine.FindStringSubmatch(u)
					if m == nil {
						t.Fatalf("progress line %q does not look like a status line", u)
					}
					percent, applied, total = atoi(m[1]), atoi(m[2]), atoi(m[3])
				}
				if want := applied * 100 / total; percent != want {
					t.Errorf("%q: %d%% for %d/%d tiles; want %d%%", u, percent, applied, total, want)
				}
				if applied < last {
					t.Errorf("%q: tile count went back from %d", u, last)
				}
				last = applied
			}
			if last != 35 {
				t.Errorf("last update counts %d tiles; want all 35", last)
			}
		})
	}
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

func TestDevNullIsNotATerminal(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Errorf("isTerminal(%s) = true; want false", os.DevNull)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(w) {
		t.Error("isTerminal(a pipe) = true; want false")
	}
}

// TestREADMEPicture renders with the default flags and compares the result
// with the picture the README shows, pixel by pixel. A few pixels may
// differ where a processor fuses multiplications and additions (arm64 does,
// amd64 does not), on the edge of the set.
func TestREADMEPicture(t *testing.T) {
	cfg := defaults()
	cfg.out = filepath.Join(t.TempDir(), "default.png")
	if err := render(context.Background(), cfg, new(bytes.Buffer), false); err != nil {
		t.Fatal(err)
	}
	got, want := decode(t, cfg.out), decode(t, "mandelbrot.png")
	if got.Bounds() != want.Bounds() {
		t.Fatalf("the default picture is %v; the README's is %v: regenerate it with go run . in examples/mandelbrot", got.Bounds(), want.Bounds())
	}
	differ := 0
	b := got.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if got.At(x, y) != want.At(x, y) {
				differ++
			}
		}
	}
	if limit := b.Dx() * b.Dy() / 1000; differ > limit {
		t.Errorf("%d pixels of the default picture differ from the README's (limit %d): regenerate it with go run . in examples/mandelbrot", differ, limit)
	}
}

func decode(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

func TestRenderReportsWriteErrors(t *testing.T) {
	cfg := testConfig(t, 2)
	cfg.out = filepath.Join(t.TempDir(), "no such dir", "out.png")
	err := render(context.Background(), cfg, new(bytes.Buffer), false)
	if !os.IsNotExist(err) {
		t.Errorf("render into a missing directory = %v; want a not-exist error", err)
	}
}
