// Command queues is a tour of the taskqueue package: a concurrent queue
// hashes chunks of data while a serial queue owns the results, a delayed task
// reports progress, and a task re-enters its own serial queue.
//
//	go run ./examples/queues
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

func main() {
	chunks := flag.Int("chunks", 64, "number of data chunks to hash")
	size := flag.Int("size", 1<<20, "bytes per chunk")
	workers := flag.Int("workers", 4, "tasks the concurrent queue runs at once")
	flag.Parse()
	if err := run(*chunks, *size, *workers); err != nil {
		log.Fatal(err)
	}
}

func run(chunks, size, workers int) error {
	ctx := context.Background()
	hashers := taskqueue.NewConcurrent(workers)
	results := taskqueue.NewSerial() // owns digests and done: no lock needed

	digests := make([][32]byte, chunks)
	done := 0
	start := time.Now()

	// A delayed task that re-arms itself reports progress until the work ends.
	var report func(context.Context) error
	report = func(ctx context.Context) error {
		n, _ := taskqueue.RunSync(ctx, results, func(context.Context) (int, error) { return done, nil })
		if n < chunks {
			fmt.Printf("progress: %d/%d chunks\n", n, chunks)
			results.RunAfter(ctx, 50*time.Millisecond, report)
		}
		return nil
	}
	results.RunAfter(ctx, 50*time.Millisecond, report)

	for i := range chunks {
		hashers.Go(func() {
			data := make([]byte, size)
			for k := range data {
				data[k] = byte(i + k)
			}
			sum := sha256.Sum256(data)
			results.Go(func() { digests[i] = sum; done++ })
		})
	}
	if err := hashers.Close(); err != nil {
		return err
	}

	// A task of the serial queue waits synchronously for more work on the
	// same queue: RunSync runs it in place instead of deadlocking.
	total, err := taskqueue.RunSync(ctx, results, func(ctx context.Context) (byte, error) {
		var x byte
		err := results.RunSync(ctx, func(context.Context) error {
			for _, d := range digests {
				x ^= d[0]
			}
			return nil
		})
		return x, err
	})
	if err != nil {
		return err
	}
	if err := results.Close(); err != nil {
		return err
	}
	fmt.Printf("hashed %d chunks of %d bytes in %v; xor of first bytes: %#02x\n",
		chunks, size, time.Since(start).Round(time.Millisecond), total)
	st := results.Stats()
	fmt.Printf("results queue: %d tasks completed, %d canceled\n", st.Completed, st.Canceled)
	return nil
}
