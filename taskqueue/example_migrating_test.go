package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sync"
	"sync/atomic"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// The Examples of this file are the programs of docs/migrating.md, one per
// peer library, ported onto this module. The guide shows the same code; these
// are the copies that compile and run.

// dir is a directory of the in-memory tree that ExampleGroup_fromErrgroup
// walks.
type dir struct {
	name    string
	files   int
	err     error // what reading the directory fails with, if it does
	subdirs []*dir
}

// walk counts the files under root, walking subdirectories on the group's
// members while slots are free and in the caller's member when none is, as
// errgroup's TryGo lets a walker do.
func walk(ctx context.Context, q *taskqueue.Queue, root *dir) (int64, error) {
	var files atomic.Int64
	g := taskqueue.NewGroup(ctx, q, taskqueue.WithCancelOnError())
	var visit func(ctx context.Context, d *dir) error
	visit = func(ctx context.Context, d *dir) error {
		if err := ctx.Err(); err != nil {
			return err // another member failed: stop early
		}
		if d.err != nil {
			return &fs.PathError{Op: "open", Path: d.name, Err: d.err}
		}
		files.Add(int64(d.files))
		for _, sub := range d.subdirs {
			if !g.TryGo(func(ctx context.Context) error { return visit(ctx, sub) }) {
				if err := visit(ctx, sub); err != nil { // no free slot: walk it here
					return err
				}
			}
		}
		return nil
	}
	g.Go(func(ctx context.Context) error { return visit(ctx, root) })
	err := g.Wait(ctx) // no member runs after Wait returns
	return files.Load(), err
}

// A walker built on errgroup's WithContext, SetLimit and TryGo, ported: the
// limit is the queue's, the first failure cancels the members' context and
// keeps unstarted members from running, and Wait returns once no member runs.
func ExampleGroup_fromErrgroup() {
	ctx := context.Background()
	q := taskqueue.NewConcurrent(4) // g.SetLimit(4)

	tree := &dir{name: "root", files: 2, subdirs: []*dir{
		{name: "root/a", files: 3, subdirs: []*dir{{name: "root/a/x", files: 4}}},
		{name: "root/b", files: 5},
		{name: "root/c", files: 6, subdirs: []*dir{{name: "root/c/y", files: 7}, {name: "root/c/z", files: 8}}},
	}}
	n, err := walk(ctx, q, tree)
	fmt.Println(n, err)

	tree.subdirs[1].err = fs.ErrPermission
	_, err = walk(ctx, q, tree)
	fmt.Println(err, errors.Is(err, fs.ErrPermission))
	// Output:
	// 35 <nil>
	// open root/b: permission denied true
}

// A pond v2 program, ported: Go, SubmitErr and a result group on one queue,
// a panic read from its fields, and a submission after the stop.
func Example_fromPond() {
	ctx := context.Background()
	q := taskqueue.NewConcurrent(4) // pond.NewPool(4), and NewResultPool[int](4)

	var hits atomic.Int64
	q.Go(func() { hits.Add(1) }) // pool.Go

	h := q.RunAsync(ctx, func(context.Context) error { // pool.SubmitErr
		return errors.New("tile 3: bad header")
	})
	fmt.Println(h.Wait(ctx)) // task.Wait()

	// pool.NewGroup(): pond's groups stop at their first error.
	g := taskqueue.NewGroupOf[int](ctx, q, taskqueue.WithCancelOnError())
	for i := 1; i <= 5; i++ {
		g.Go(func(context.Context) (int, error) { return i * i, nil }) // group.Submit
	}
	fmt.Println(g.Wait(ctx)) // group.Wait(): in the order submitted

	// Awaited: this caller waits, so the panic is the future's alone.
	f := taskqueue.RunAsync(taskqueue.Awaited(ctx), q, func(context.Context) (int, error) {
		panic("bad tile")
	})
	_, err := f.Wait(ctx)
	var pe *taskqueue.PanicError
	fmt.Println(errors.As(err, &pe), pe.Value) // the stack is in pe.Stack, not in the text

	q.Close()                                 // pool.StopAndWait()
	fmt.Println(hits.Load(), q.Go(func() {})) // ErrClosed, where pond says ErrPoolStopped
	// Output:
	// tile 3: bad header
	// [1 4 9 16 25] <nil>
	// true bad tile
	// 1 taskqueue: queue closed
}

// A conc pool with results, a context, cancel-on-error and a goroutine
// limit, ported: results come in the order the members were added, and a
// member's panic is an error that Wait returns, where conc re-panics.
func ExampleGroupOf_fromConcPool() {
	ctx := context.Background()
	q := taskqueue.NewConcurrent(math.MaxInt) // conc's pools have no limit but their own

	sizes := map[string]int{"ann": 3, "bob": 5, "cy": 2}
	lookup := func(ctx context.Context, user string) (int, error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		n, ok := sizes[user]
		if !ok {
			panic("no user " + user)
		}
		return n, nil
	}

	// pool.NewWithResults[int]().WithContext(ctx).WithCancelOnError().WithMaxGoroutines(2)
	g := taskqueue.NewGroupOf[int](ctx, q, taskqueue.WithCancelOnError(), taskqueue.WithGroupLimit(2))
	for _, user := range []string{"cy", "ann", "bob"} {
		g.Go(func(ctx context.Context) (int, error) { return lookup(ctx, user) })
	}
	fmt.Println(g.Wait(ctx))

	g = taskqueue.NewGroupOf[int](ctx, q)
	for _, user := range []string{"ann", "dee"} {
		g.Go(func(ctx context.Context) (int, error) { return lookup(ctx, user) })
	}
	got, err := g.Wait(ctx)
	var pe *taskqueue.PanicError
	fmt.Println(got, err, errors.As(err, &pe))
	// Output:
	// [2 3 5] <nil>
	// [3 0] panic: no user dee true
}

// A conc stream, ported: tasks run concurrently on one queue and return
// callbacks, which run one at a time, in the order the tasks were submitted,
// on a serial queue.
func Example_fromConcStream() {
	ctx := context.Background()
	work := taskqueue.NewConcurrent(4) // stream.New().WithMaxGoroutines(4)
	out := taskqueue.NewSerial()       // the stream's one callback goroutine

	for _, n := range []int{5, 1, 4, 2, 3} {
		// s.Go(func() stream.Callback { ... })
		task := taskqueue.RunAsync(taskqueue.Awaited(ctx), work, func(context.Context) (func(), error) {
			sq := n * n // the concurrent part
			return func() { fmt.Println(n, sq) }, nil
		})
		out.Go(func() { // callbacks keep the order of submission
			callback, err := task.Wait(ctx)
			if err != nil {
				fmt.Println(err) // the task panicked: conc's Wait would re-panic
				return
			}
			callback()
		})
	}
	out.Close() // s.Wait(): every task and callback has run
	// Output:
	// 5 25
	// 1 1
	// 4 16
	// 2 4
	// 3 9
}

// conc's iter.Map, iter.MapErr and iter.ForEach, ported to Map and Apply on
// the default concurrent queue, which, as conc's iterators, runs up to
// GOMAXPROCS at once. Map stops at the first failure, where MapErr calls f for
// every element and joins the errors.
func ExampleMap_fromConcIter() {
	ctx := context.Background()
	q := taskqueue.DefaultConcurrent()
	words := []string{"go", "loom", "queue"}

	lengths, err := taskqueue.Map(ctx, q, words, func(_ context.Context, w string) (int, error) {
		return len(w), nil
	})
	fmt.Println(lengths, err)

	_, err = taskqueue.Map(ctx, q, []string{"1", "x", "3"}, func(_ context.Context, s string) (int, error) {
		if s == "x" {
			return 0, fmt.Errorf("parse %q: not a number", s)
		}
		return int(s[0] - '0'), nil
	})
	fmt.Println(err)

	// iter.ForEach(lengths, func(n *int) { *n *= 10 })
	err = taskqueue.Apply(ctx, q, len(lengths), func(i int) { lengths[i] *= 10 })
	fmt.Println(lengths, err)
	// Output:
	// [2 4 5] <nil>
	// parse "x": not a number
	// [20 40 50] <nil>
}

// A gammazero/workerpool program, ported: Submit, SubmitWait, a pause and
// StopWait; a task that waits for its own queue runs the work in its place,
// and a submission after the stop returns an error instead of panicking.
func Example_fromWorkerpool() {
	ctx := context.Background()
	q := taskqueue.NewSerial() // workerpool.New(1); NewConcurrent(n) for New(n)

	for _, name := range []string{"a", "b", "c"} {
		q.Go(func() { fmt.Println("load", name) }) // wp.Submit
	}
	q.RunSync(ctx, func(ctx context.Context) error { // wp.SubmitWait
		fmt.Println("after the loads")
		// With the task's ctx, a RunSync on the task's own queue runs in
		// its place; SubmitWait from a task of a New(1) pool never returns.
		return q.RunSync(ctx, func(context.Context) error {
			fmt.Println("nested, in place")
			return nil
		})
	})

	q.Suspend() // wp.Pause(ctx), until Resume rather than until ctx ends
	q.Go(func() { fmt.Println("after Resume") })
	fmt.Println("waiting:", q.Stats().Queued) // wp.WaitingQueueSize()
	q.Resume()

	q.Close()                    // wp.StopWait()
	fmt.Println(q.Go(func() {})) // wp.Submit would panic, wp.Do return ErrStopped
	// Output:
	// load a
	// load b
	// load c
	// after the loads
	// nested, in place
	// waiting: 1
	// after Resume
	// taskqueue: queue closed
}

// An ants program, ported: a pool with a panic handler, a WaitGroup over the
// submissions, a function pool's Invoke, and a non-blocking submission.
func Example_fromAnts() {
	ctx := context.Background()
	panics := make(chan any, 1)
	// ants.NewPool(2, ants.WithPanicHandler(...)): the handler gets the stack too.
	q := taskqueue.NewConcurrent(2, taskqueue.WithPanicHandler(func(p *taskqueue.PanicError) {
		panics <- p.Value
	}))

	// ants.NewPoolWithFuncGeneric[int](2, add) and Invoke(i): a closure per call.
	var sum atomic.Int64
	add := func(n int) { sum.Add(int64(n)) }
	g := taskqueue.NewGroup(ctx, q) // the sync.WaitGroup around p.Submit
	for i := 1; i <= 100; i++ {
		g.Go(func(context.Context) error { add(i); return nil }) // never blocks
	}
	fmt.Println(g.Wait(ctx), sum.Load())

	q.Go(func() { panic("bad input") }) // p.Submit
	fmt.Println("recovered:", <-panics)

	// ants.WithNonblocking(true): start now or say so.
	hold := make(chan struct{})
	q.Go(func() { <-hold })
	q.Go(func() { <-hold })
	fmt.Println(q.TryGo(func() {})) // both slots are taken: ErrPoolOverload in ants
	close(hold)

	q.Close()                    // p.Release(), then wait for the tasks: ReleaseTimeout
	fmt.Println(q.Go(func() {})) // ErrPoolClosed in ants
	// Output:
	// <nil> 5050
	// recovered: bad input
	// false
	// taskqueue: queue closed
}

// A queue with no limit starts every task at once: here 100 tasks that each
// wait for all the others, which no smaller limit could run.
func ExampleNewConcurrent_noLimit() {
	q := taskqueue.NewConcurrent(math.MaxInt)
	fmt.Println(q.Stats().Limit) // a limit above 1<<30 is taken as 1<<30

	var started sync.WaitGroup
	started.Add(100)
	var ran atomic.Int64
	for range 100 {
		q.Go(func() {
			started.Done()
			started.Wait() // every task is running at once
			ran.Add(1)
		})
	}
	q.Close()
	fmt.Println(ran.Load())
	// Output:
	// 1073741824
	// 100
}
