// Command mainlock measures what locking the main goroutine to the main OS
// thread costs a program whose main goroutine waits for tasks: package
// mainthread's init takes that lock, which is why package taskqueue no
// longer imports it. A goroutine locked to its thread is woken on that
// thread only, so each wait pays a thread wake-up where an unlocked
// goroutine is run by whichever thread is free.
//
// It times, on the main goroutine, RunAsync and Wait through a worker
// (every wait parks the main goroutine), and Go in bursts of 1,024 with a
// Wait for the last, with the main goroutine locked (runtime.LockOSThread,
// as mainthread's init does) and unlocked, alternating, and prints medians.
//
//	go run ./cmd/mainlock
package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

func main() {
	rounds := flag.Int("rounds", 7, "alternating rounds of each measure")
	n := flag.Int("n", 200_000, "operations per round")
	flag.Parse()
	ctx := context.Background()
	q := taskqueue.NewSerial()
	nop := func(context.Context) error { return nil }
	handoff := func() time.Duration {
		start := time.Now()
		for range *n {
			q.RunAsync(ctx, nop).Wait(ctx)
		}
		return time.Since(start) / time.Duration(*n)
	}
	burst := func() time.Duration {
		start := time.Now()
		for i := 0; i < *n; i += 1024 {
			for range 1023 {
				q.Go(func() {})
			}
			q.RunAsync(ctx, nop).Wait(ctx)
		}
		return time.Since(start) / time.Duration(*n)
	}
	var locked, unlocked [2][]time.Duration
	for range *rounds {
		runtime.LockOSThread() // as package mainthread's init does
		locked[0] = append(locked[0], handoff())
		locked[1] = append(locked[1], burst())
		runtime.UnlockOSThread()
		unlocked[0] = append(unlocked[0], handoff())
		unlocked[1] = append(unlocked[1], burst())
	}
	for i, name := range []string{"RunAsync+Wait from main", "Go in bursts of 1,024, then Wait"} {
		l, u := median(locked[i]), median(unlocked[i])
		fmt.Printf("%-34s locked %8v  unlocked %8v  ×%.2f\n", name, l, u, float64(l)/float64(u))
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
