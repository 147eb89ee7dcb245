package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// A group loads assets on a concurrent queue and stops at the first
// failure: the assets not started by then are never loaded.
func ExampleGroup() {
	q := taskqueue.NewSerial() // serial, so that the output is deterministic
	defer q.Close()
	g := taskqueue.NewGroup(context.Background(), q).WithCancelOnError()
	for _, name := range []string{"a.png", "b.png", "missing.png", "c.png"} {
		g.Go(func(ctx context.Context) error {
			if strings.HasPrefix(name, "missing") {
				return fmt.Errorf("load %s: not found", name)
			}
			fmt.Println("loaded", name)
			return nil
		})
	}
	fmt.Println(g.Wait())
	// Output:
	// loaded a.png
	// loaded b.png
	// load missing.png: not found
}

// A GroupOf returns its members' values in submission order, whatever order
// they finish in.
func ExampleGroupOf() {
	q := taskqueue.NewConcurrent(4)
	defer q.Close()
	g := taskqueue.NewGroupOf[int](context.Background(), q)
	for _, s := range []string{"one", "three", "seven"} {
		g.Go(func(context.Context) (int, error) { return len(s), nil })
	}
	lengths, err := g.Wait()
	fmt.Println(lengths, err)
	// Output: [3 5 5] <nil>
}

// Two stages on two queues: the decode stage starts when the read is done,
// and nothing holds a slot of the I/O queue while it waits.
func ExampleThen() {
	ctx := context.Background()
	io, cpu := taskqueue.NewConcurrent(2), taskqueue.NewConcurrent(4)
	defer io.Close()
	defer cpu.Close()
	read := taskqueue.RunAsync(ctx, io, func(context.Context) ([]byte, error) {
		return []byte("hello, frame"), nil
	})
	decoded := taskqueue.Then(ctx, read, cpu, func(_ context.Context, b []byte) (string, error) {
		return strings.ToUpper(string(b)), nil
	})
	fmt.Println(decoded.Result(ctx))
	// Output: HELLO, FRAME <nil>
}

// Apply runs a million tiny iterations in a few dozen tasks, with the
// calling goroutine taking part.
func ExampleApply() {
	q := taskqueue.NewConcurrent(4)
	defer q.Close()
	var sum atomic.Int64
	err := taskqueue.Apply(context.Background(), q, 1_000_000, func(i int) { sum.Add(int64(i)) })
	fmt.Println(sum.Load(), err)
	// Output: 499999500000 <nil>
}

// Map returns results in the order of the items; the first error stops it.
func ExampleMap() {
	q := taskqueue.NewConcurrent(4)
	defer q.Close()
	squares, err := taskqueue.Map(context.Background(), q, []int{1, 2, 3, 4}, func(_ context.Context, v int) (int, error) {
		return v * v, nil
	})
	fmt.Println(squares, err)
	_, err = taskqueue.Map(context.Background(), q, []int{1, -1}, func(_ context.Context, v int) (int, error) {
		if v < 0 {
			return 0, errors.New("negative")
		}
		return v, nil
	})
	fmt.Println(err)
	// Output:
	// [1 4 9 16] <nil>
	// negative
}
