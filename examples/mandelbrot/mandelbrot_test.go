package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

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
		view: view{centerRe: -0.75, width: 3.5, maxIter: 300},
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

func TestRenderReportsWriteErrors(t *testing.T) {
	cfg := testConfig(t, 2)
	cfg.out = filepath.Join(t.TempDir(), "no such dir", "out.png")
	err := render(context.Background(), cfg, new(bytes.Buffer), false)
	if !os.IsNotExist(err) {
		t.Errorf("render into a missing directory = %v; want a not-exist error", err)
	}
}

func TestTiles(t *testing.T) {
	rs := tiles(100, 50, 32)
	if len(rs) != 8 {
		t.Fatalf("%d tiles; want 8", len(rs))
	}
	area := 0
	for _, r := range rs {
		area += r.Dx() * r.Dy()
	}
	if area != 100*50 {
		t.Errorf("tiles cover %d pixels; want 5000", area)
	}
}
