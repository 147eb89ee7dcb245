// Command mandelbrot renders the Mandelbrot set into a PNG file, the way a
// game or GUI program splits work between threads with this module: a
// concurrent queue renders tiles, each finished tile is applied to the frame
// buffer on the main thread by the main-thread loom (a few per frame, under a
// frame budget), a coroutine runs the phases and draws the progress every
// frame from two loom.Progress values (tiles rendered, reported by the
// workers; tiles applied), and a serial queue writes the file.
//
//	go run ./examples/mandelbrot                # writes mandelbrot.png here
//	go run ./examples/mandelbrot -size 1920x1080 -iter 2000 -o big.png
//
// With the default flags it writes the picture the README shows,
// examples/mandelbrot/mandelbrot.png.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"

	"github.com/taskqueue-go/taskqueue/examples/internal/fractal"
	"github.com/taskqueue-go/taskqueue/mainthread"
)

// defaults is the configuration the flags start from, which draws the
// README's picture.
func defaults() config {
	return config{
		width: 1024, height: 768, tile: 64, workers: runtime.GOMAXPROCS(0), perFrame: 8,
		view: fractal.View{CenterRe: -0.75, CenterIm: 0, Width: 3.5, MaxIter: 500},
		out:  "mandelbrot.png",
	}
}

func main() {
	cfg := defaults()
	size := flag.String("size", fmt.Sprintf("%dx%d", cfg.width, cfg.height), "image size, WIDTHxHEIGHT")
	flag.IntVar(&cfg.workers, "workers", cfg.workers, "tiles rendered at once")
	flag.IntVar(&cfg.tile, "tile", cfg.tile, "tile side, in pixels")
	flag.IntVar(&cfg.view.MaxIter, "iter", cfg.view.MaxIter, "iterations before a point counts as inside the set")
	flag.IntVar(&cfg.perFrame, "perframe", cfg.perFrame, "tiles applied to the frame buffer per frame")
	flag.StringVar(&cfg.out, "o", cfg.out, "the PNG file to write")
	flag.Parse()
	if _, err := fmt.Sscanf(*size, "%dx%d", &cfg.width, &cfg.height); err != nil || cfg.width < 1 || cfg.height < 1 {
		fmt.Fprintf(os.Stderr, "mandelbrot: -size %q: want WIDTHxHEIGHT, such as 1024x768\n", *size)
		os.Exit(2)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"workers", cfg.workers}, {"tile", cfg.tile}, {"iter", cfg.view.MaxIter}, {"perframe", cfg.perFrame}} {
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
