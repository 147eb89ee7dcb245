// Command mandelbrot renders the Mandelbrot set into a PNG file, the way a
// game or GUI program splits work between threads with this module: a
// concurrent queue renders tiles, each finished tile is applied to the frame
// buffer on the main thread by the main-thread loom (a few per frame, under a
// frame budget), a coroutine runs the phases, a delayed action refreshes the
// status line, and a serial queue writes the file.
//
//	go run ./examples/mandelbrot
//	go run ./examples/mandelbrot -size 1920x1080 -iter 2000 -o big.png
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"

	"github.com/taskqueue-go/taskqueue/mainthread"
)

func main() {
	var (
		size     = flag.String("size", "1024x768", "image size, WIDTHxHEIGHT")
		workers  = flag.Int("workers", runtime.GOMAXPROCS(0), "tiles rendered at once")
		tile     = flag.Int("tile", 64, "tile side, in pixels")
		iter     = flag.Int("iter", 500, "iterations before a point counts as inside the set")
		perFrame = flag.Int("perframe", 8, "tiles applied to the frame buffer per frame")
		out      = flag.String("o", "mandelbrot.png", "the PNG file to write")
	)
	flag.Parse()
	cfg := config{tile: *tile, workers: *workers, perFrame: *perFrame, out: *out,
		view: view{centerRe: -0.75, centerIm: 0, width: 3.5, maxIter: *iter}}
	if _, err := fmt.Sscanf(*size, "%dx%d", &cfg.width, &cfg.height); err != nil || cfg.width < 1 || cfg.height < 1 {
		fmt.Fprintf(os.Stderr, "mandelbrot: -size %q: want WIDTHxHEIGHT, such as 1024x768\n", *size)
		os.Exit(2)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"workers", cfg.workers}, {"tile", cfg.tile}, {"iter", cfg.view.maxIter}, {"perframe", cfg.perFrame}} {
		if f.v < 1 {
			fmt.Fprintf(os.Stderr, "mandelbrot: -%s %d: want a positive number\n", f.name, f.v)
			os.Exit(2)
		}
	}

	var err error
	mainthread.Run(func() {
		err = render(context.Background(), cfg, os.Stdout, isTerminal(os.Stdout))
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "mandelbrot:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s (%dx%d)\n", cfg.out, cfg.width, cfg.height)
}

// isTerminal reports whether f is a terminal, where the progress bar is
// redrawn in place.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
