// Command framerate measures what main-thread calls cost a renderer's frame
// rate. Each frame makes N calls to the main thread, back to back, as a GL
// backend does (gopxl/pixel makes one per GL operation, dozens to hundreds
// a frame), each running about -work of work there; the program reports the
// frames per second of package mainthread (mainthread.Call, served by
// mainthread.Run) and of a goroutine locked to its thread that serves a
// channel, with a done channel per call (the design of
// golang.design/x/mainthread and faiface/mainthread), side by side: the two
// run in alternating rounds of one run, and the table gives the median of
// each and the median of the rounds' ratios. It prints figures and fails on
// no clock.
//
//	go run ./cmd/framerate
//	GOMAXPROCS=1 go run ./cmd/framerate
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit/baseline"
	"github.com/taskqueue-go/taskqueue/mainthread"
)

func main() {
	calls := flag.String("n", "10,100,500", "main-thread calls per frame, comma-separated")
	work := flag.Duration("work", 300*time.Nanosecond, "work each call does on the main thread")
	rounds := flag.Int("rounds", 7, "alternating rounds of each side")
	round := flag.Duration("round", 200*time.Millisecond, "how long each side renders in a round")
	verbose := flag.Bool("v", false, "print each round's frames per second")
	flag.Parse()
	var ns []int
	for _, f := range strings.Split(*calls, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "framerate: -n %q: want positive counts\n", *calls)
			os.Exit(2)
		}
		ns = append(ns, n)
	}
	iters := baseline.SpinRounds(*work)
	mainthread.Run(func() {
		fmt.Printf("GOMAXPROCS=%d, %d CPUs; each call %v of work on the main thread; %d rounds of %v a side\n",
			runtime.GOMAXPROCS(0), runtime.NumCPU(), *work, *rounds, *round)
		fmt.Printf("%12s %16s %22s %8s %14s %14s\n", "calls/frame", "mainthread fps", "locked goroutine fps", "×", "µs/call main", "µs/call locked")
		s := baseline.NewLockedThread()
		defer s.Close()
		for _, n := range ns {
			viaMain := func() {
				f := func() error { baseline.Spin(iters); return nil }
				ctx := context.Background()
				for range n {
					mainthread.Call(ctx, f)
				}
			}
			viaLocked := func() {
				for range n {
					s.Call(func() { baseline.Spin(iters) })
				}
			}
			var m, l, ratio []float64
			for r := range *rounds {
				fm, fl := fps(viaMain, *round), fps(viaLocked, *round)
				m, l, ratio = append(m, fm), append(l, fl), append(ratio, fm/fl)
				if *verbose {
					fmt.Printf("%12d round %d: mainthread %.0f fps, locked goroutine %.0f fps\n", n, r+1, fm, fl)
				}
			}
			mm, ml := median(m), median(l)
			fmt.Printf("%12d %16.0f %22.0f %8.2f %14.2f %14.2f\n", n, mm, ml, median(ratio),
				1e6/mm/float64(n), 1e6/ml/float64(n))
		}
	})
}

// fps renders frames for about d and returns how many it rendered a second.
func fps(frame func(), d time.Duration) float64 {
	frames := 0
	start := time.Now()
	for time.Since(start) < d {
		frame()
		frames++
	}
	return float64(frames) / time.Since(start).Seconds()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
