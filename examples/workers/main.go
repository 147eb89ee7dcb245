// Command workers shows the most common shape of a game or tool built on
// this module: workers on a concurrent queue load assets, each posting its
// result to the main thread's loop, where the game's state lives; a
// coroutine on that loop shows the progress and, once every worker is done,
// uses what they produced.
//
//	go run ./examples/workers
//
// The ordering rule that makes this safe without a lock: a function posted
// to the loom before a task's handle is done runs before a coroutine
// waiting on that handle resumes. So when the coroutine resumes after
// WaitAll, every worker's result is in the map.
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

func main() {
	assets := flag.Int("assets", 24, "assets to load")
	workers := flag.Int("workers", 4, "workers loading them")
	flag.Parse()
	var err error
	mainthread.Run(func() { err = run(context.Background(), os.Stdout, *assets, *workers) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "workers:", err)
		os.Exit(1)
	}
}

// run loads n assets on a queue of the given number of workers and reports
// on w, from a coroutine of the main thread's loop.
func run(ctx context.Context, w io.Writer, n, workers int) error {
	q := taskqueue.NewConcurrent(workers, taskqueue.WithName("assets"))
	defer q.Close()

	loaded := map[string][32]byte{} // the game's state: the main thread's alone
	var progress loom.Progress
	progress.SetTotal(n)

	handles := make([]loom.Waitable, n)
	for i := range n {
		name := fmt.Sprintf("asset-%02d", i)
		handles[i] = q.RunAsync(ctx, func(context.Context) error {
			sum := load(name) // the slow part, off the main thread
			progress.Add(1)
			// Posted before the task returns: applied before the coroutine
			// waiting on this task's handle resumes.
			return taskqueue.RunAsyncOnMainThread(func() { loaded[name] = sum })
		})
	}

	game := mainthread.Loom().StartCoroutineContext(ctx, func(yield func(loom.Instruction) bool) {
		shown := -1
		for { // a frame of the game: draw the progress
			done, total := progress.Load() // one instant: what is drawn is what ends the loop
			if done != shown {
				shown = done
				fmt.Fprintf(w, "loading: %3.0f%%\n", 100*float64(done)/float64(max(total, 1)))
			}
			if done >= total {
				break
			}
			if !yield(loom.NextFrame()) {
				return
			}
		}
		if !yield(loom.WaitAll(handles...)) {
			return
		}
		if err := loom.Await(ctx, handles...); err != nil { // done: returns at once
			fmt.Fprintln(w, "a load failed:", err)
			return
		}
		names := make([]string, 0, len(loaded))
		for name := range loaded {
			names = append(names, name)
		}
		slices.Sort(names)
		all := sha256.New()
		for _, name := range names {
			sum := loaded[name]
			all.Write(sum[:])
		}
		fmt.Fprintf(w, "loaded %d assets, digest %x\n", len(loaded), all.Sum(nil)[:8])
	})
	if err := loom.Await(ctx, game); err != nil {
		return err
	}
	if len(loaded) != n {
		return fmt.Errorf("%d of %d assets reached the main thread", len(loaded), n)
	}
	return nil
}

// load stands for decoding an asset: it hashes a megabyte made from the
// name, the same bytes on every run.
func load(name string) [32]byte {
	h := sha256.New()
	block := sha256.Sum256([]byte(name))
	for range 1 << 15 {
		h.Write(block[:])
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}
