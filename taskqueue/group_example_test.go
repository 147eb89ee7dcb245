package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// A group waits for all its members; their errors come back joined, in the
// order the members were added.
func ExampleGroup() {
	q := taskqueue.NewConcurrent(4)
	g := taskqueue.NewGroup(context.Background(), q)
	for _, name := range []string{"hero.png", "missing.png", "level.json", "gone.ogg"} {
		g.Go(func(context.Context) error {
			if strings.HasPrefix(name, "missing") || strings.HasPrefix(name, "gone") {
				return fmt.Errorf("load %s: not found", name)
			}
			return nil
		})
	}
	fmt.Println(g.Wait(context.Background()))
	// Output:
	// load missing.png: not found
	// load gone.ogg: not found
}

// With WithCancelOnError the first failure stops the group: members that
// have not started never run, and running ones see their context canceled.
func ExampleWithCancelOnError() {
	q := taskqueue.NewSerial()
	g := taskqueue.NewGroup(context.Background(), q, taskqueue.WithCancelOnError())
	var ran atomic.Int32
	for i := range 10 {
		g.Go(func(context.Context) error {
			ran.Add(1)
			if i == 2 {
				return errors.New("step 2 failed")
			}
			return nil
		})
	}
	fmt.Println(g.Wait(context.Background()), "after", ran.Load(), "members")
	// Output: step 2 failed after 3 members
}

// A limit per group keeps a burst of members from taking every slot of a
// shared queue.
func ExampleWithGroupLimit() {
	shared := taskqueue.NewConcurrent(8)
	g := taskqueue.NewGroup(context.Background(), shared, taskqueue.WithGroupLimit(2))
	var now, peak atomic.Int32
	for range 20 {
		g.Go(func(context.Context) error {
			n := now.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			runtime.Gosched() // lets the other members start, if the limit allowed it
			now.Add(-1)
			return nil
		})
	}
	g.Wait(context.Background())
	fmt.Println("more than 2 at once:", peak.Load() > 2)
	// Output: more than 2 at once: false
}

// A typed group returns its members' values in the order they were added,
// however they ended.
func ExampleGroupOf() {
	q := taskqueue.NewConcurrent(4)
	g := taskqueue.NewGroupOf[int](context.Background(), q)
	for _, s := range []string{"a", "bbb", "cc"} {
		g.Go(func(context.Context) (int, error) { return len(s), nil })
	}
	sizes, err := g.Wait(context.Background())
	fmt.Println(sizes, err)
	// Output: [1 3 2] <nil>
}

// Completed streams the results as the members end: the failure of one asset
// shows as soon as it happens, not when a loop over handles reaches it. Here
// each load waits for a gate that the loop opens, standing in for a network
// that finishes the loads in an order of its own.
func ExampleGroupOf_Completed() {
	q := taskqueue.NewConcurrent(3)
	g := taskqueue.NewGroupOf[string](context.Background(), q)
	names := []string{"slow.png", "broken.png", "quick.png"}
	gates := map[string]chan struct{}{}
	for _, name := range names {
		gate := make(chan struct{})
		gates[name] = gate
		g.Go(func(context.Context) (string, error) {
			<-gate
			if name == "broken.png" {
				return "", fmt.Errorf("decode %s: bad header", name)
			}
			return name, nil
		})
	}
	close(gates["quick.png"])
	next := map[string]string{"quick.png": "broken.png", "": "slow.png"}
	for name, err := range g.Completed() {
		if err != nil {
			fmt.Println("failed:", err)
		} else {
			fmt.Println("loaded", name)
		}
		if n, ok := next[name]; ok {
			close(gates[n])
		}
	}
	// Output:
	// loaded quick.png
	// failed: decode broken.png: bad header
	// loaded slow.png
}

// A continuation hands the result of an I/O stage to a CPU stage without
// holding the I/O queue's slot while the CPU queue is busy.
func ExampleHandle_Then() {
	ctx := context.Background()
	io, cpu := taskqueue.NewConcurrent(2), taskqueue.DefaultConcurrent()
	var raw string
	read := io.RunAsync(ctx, func(context.Context) error { raw = "hello"; return nil })
	upper := read.Then(ctx, cpu, func(context.Context) error {
		fmt.Println(strings.ToUpper(raw))
		return nil
	})
	upper.Wait(ctx)
	// Output: HELLO
}

// The typed Then passes the value of one stage to the next.
func ExampleThen() {
	ctx := context.Background()
	io, cpu := taskqueue.NewConcurrent(2), taskqueue.NewConcurrent(2)
	data := taskqueue.RunAsync(ctx, io, func(context.Context) ([]byte, error) {
		return []byte(`{"hp":100}`), nil // read from disk
	})
	size := taskqueue.Then(ctx, data, cpu, func(_ context.Context, b []byte) (int, error) {
		return len(b), nil // parse
	})
	fmt.Println(size.Wait(ctx))
	// Output: 10 <nil>
}

// Apply runs a million tiny iterations in a few dozen chunks, the caller
// taking part.
func ExampleApply() {
	var sum atomic.Int64
	err := taskqueue.Apply(context.Background(), taskqueue.DefaultConcurrent(), 1_000_000, func(i int) {
		sum.Add(int64(i))
	})
	fmt.Println(sum.Load(), err)
	// Output: 499999500000 <nil>
}

// Map returns the results in the order of the items.
func ExampleMap() {
	words := []string{"queue", "group", "map"}
	lens, err := taskqueue.Map(context.Background(), taskqueue.DefaultConcurrent(), words,
		func(_ context.Context, w string) (int, error) { return len(w), nil })
	fmt.Println(lens, err)
	// Output: [5 5 3] <nil>
}

// Map stops at the first error: items not started by then never start. With
// nothing to return, it is a parallel for-each.
func ExampleMap_forEach() {
	q := taskqueue.NewSerial()
	_, err := taskqueue.Map(context.Background(), q, []string{"a.txt", "b.txt", "c.txt"},
		func(_ context.Context, name string) (struct{}, error) {
			fmt.Println("save", name)
			if name == "b.txt" {
				return struct{}{}, errors.New("disk full")
			}
			return struct{}{}, nil
		})
	fmt.Println(err)
	// Output:
	// save a.txt
	// save b.txt
	// disk full
}
