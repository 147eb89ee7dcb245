package taskqueue_test

import (
	"context"
	"errors"
	"expvar"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// A serial queue runs its tasks one after the other, in submission order, so
// they can share state without locks.
func Example() {
	q := taskqueue.NewSerial()
	var log []string
	for _, step := range []string{"load", "parse", "render"} {
		q.Go(func() { log = append(log, step) })
	}
	q.Close() // waits until the tasks have run
	fmt.Println(strings.Join(log, " → "))
	// Output: load → parse → render
}

// Heavy work runs on a concurrent queue; each result goes to a serial queue
// that owns the output, so nothing needs a lock.
func Example_pipeline() {
	ctx := context.Background()
	work := taskqueue.NewConcurrent(4)
	out := taskqueue.NewSerial()
	total := 0
	var wg sync.WaitGroup
	for n := 1; n <= 100; n++ {
		wg.Add(1)
		work.Go(func() {
			square := n * n // the heavy part
			out.Go(func() { total += square; wg.Done() })
		})
	}
	wg.Wait()
	v, _ := taskqueue.RunSync(ctx, out, func(context.Context) (int, error) { return total, nil })
	fmt.Println(v)
	// Output: 338350
}

func ExampleNewConcurrent() {
	q := taskqueue.NewConcurrent(3)
	results := make([]int, 10)
	for i := range results {
		q.Go(func() { results[i] = i * i }) // each task writes its own slot
	}
	q.Close()
	fmt.Println(results)
	// Output: [0 1 4 9 16 25 36 49 64 81]
}

func ExampleQueue_Go() {
	q := taskqueue.NewSerial()
	q.Go(func() { fmt.Println("ran") })
	q.Close()
	fmt.Println(q.Go(func() {}))
	// Output:
	// ran
	// taskqueue: queue closed
}

func ExampleQueue_RunAsync() {
	q := taskqueue.NewSerial()
	h := q.RunAsync(context.Background(), func(ctx context.Context) error {
		return errors.New("disk full")
	})
	fmt.Println(h.Wait(context.Background()))
	// Output: disk full
}

func ExampleQueue_RunSync() {
	q := taskqueue.NewSerial()
	counter := 0
	for range 3 {
		q.RunSync(context.Background(), func(context.Context) error {
			counter++
			return nil
		})
	}
	fmt.Println(counter)
	// Output: 3
}

// A task of a serial queue waits for more work on the same queue. With the
// task's context, RunSync runs that work at once instead of deadlocking.
func ExampleQueue_RunSync_reentrant() {
	q := taskqueue.NewSerial()
	h := q.RunAsync(context.Background(), func(ctx context.Context) error {
		fmt.Println("outer task")
		return q.RunSync(ctx, func(context.Context) error {
			fmt.Println("inner task, on the same queue")
			return nil
		})
	})
	fmt.Println(h.Wait(context.Background()))
	// Output:
	// outer task
	// inner task, on the same queue
	// <nil>
}

func ExampleQueue_RunAfter() {
	q := taskqueue.NewSerial()
	start := time.Now()
	h := q.RunAfter(context.Background(), 10*time.Millisecond, func(context.Context) error {
		fmt.Println("waited at least 10ms:", time.Since(start) >= 10*time.Millisecond)
		return nil
	})
	h.Wait(context.Background())
	// Output: waited at least 10ms: true
}

// A barrier on a concurrent queue sees every task before it done, and no task
// after it started.
func ExampleQueue_RunBarrier() {
	ctx := context.Background()
	q := taskqueue.NewConcurrent(4)
	var mu sync.Mutex
	var written []int
	for i := range 8 {
		q.Go(func() { mu.Lock(); written = append(written, i); mu.Unlock() })
	}
	q.RunBarrier(ctx, func(context.Context) error {
		fmt.Println("tasks done before the barrier:", len(written))
		return nil
	})
	q.Close()
	// Output: tasks done before the barrier: 8
}

func ExampleQueue_CloseNow() {
	ctx := context.Background()
	q := taskqueue.NewSerial()
	started, release := make(chan struct{}), make(chan struct{})
	q.Go(func() { close(started); <-release })
	<-started
	h := q.RunAsync(ctx, func(context.Context) error { return nil })
	q.RunAfter(ctx, time.Hour, func(context.Context) error { return nil })

	fmt.Println("canceled:", q.CloseNow())
	fmt.Println(h.Err())
	close(release)
	q.Shutdown(ctx) // waits for the task that was running
	// Output:
	// canceled: 2
	// taskqueue: queue closed
}

func ExampleQueue_Shutdown() {
	q := taskqueue.NewSerial()
	release := make(chan struct{})
	q.Go(func() { <-release })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	fmt.Println(q.Shutdown(ctx))
	close(release)
	fmt.Println(q.Shutdown(context.Background()))
	// Output:
	// context deadline exceeded
	// <nil>
}

func ExampleQueue_Stats() {
	ctx := context.Background()
	q := taskqueue.NewSerial(taskqueue.WithName("demo"), taskqueue.WithPanicHandler(func(*taskqueue.PanicError) {}))
	q.RunSync(ctx, func(context.Context) error { return nil })
	q.RunAsync(ctx, func(context.Context) error { panic("bug") }).Wait(ctx)
	q.RunAfter(ctx, time.Hour, func(context.Context) error { return nil }).Cancel()
	q.Close()
	q.Go(func() {})
	fmt.Printf("%+v\n", q.Stats())
	// Output: {Name:demo Limit:1 Queued:0 Delayed:0 Running:0 Completed:2 Succeeded:1 Failed:0 Panicked:1 Canceled:1 Rejected:1 Wait:{Samples:0 P50:0s P99:0s Max:0s}}
}

func ExampleRunAsync() {
	ctx := context.Background()
	q := taskqueue.NewConcurrent(2)
	f := taskqueue.RunAsync(ctx, q, func(context.Context) (string, error) {
		return strings.ToUpper("gopher"), nil
	})
	v, err := f.Wait(ctx)
	fmt.Println(v, err)
	// Output: GOPHER <nil>
}

func ExampleRunSync() {
	q := taskqueue.NewSerial()
	n, err := taskqueue.RunSync(context.Background(), q, func(context.Context) (int, error) {
		return 6 * 7, nil
	})
	fmt.Println(n, err)
	// Output: 42 <nil>
}

func ExampleRunAfter() {
	ctx := context.Background()
	q := taskqueue.NewSerial()
	f := taskqueue.RunAfter(ctx, q, time.Millisecond, func(context.Context) (string, error) {
		return "later", nil
	})
	fmt.Println(f.Wait(ctx))
	// Output: later <nil>
}

func ExampleHandle_Cancel() {
	ctx := context.Background()
	q := taskqueue.NewSerial()
	h := q.RunAfter(ctx, time.Hour, func(context.Context) error { return nil })
	fmt.Println(h.Cancel(), h.Err())
	// Output: true context canceled
}

// A task whose context is done before it starts never runs.
func ExampleHandle_Done() {
	q := taskqueue.NewSerial()
	release := make(chan struct{})
	q.Go(func() { <-release })
	ctx, cancel := context.WithCancel(context.Background())
	h := q.RunAsync(ctx, func(context.Context) error {
		fmt.Println("never printed")
		return nil
	})
	done := h.Done()
	cancel()
	<-done // closed without waiting for the queue
	fmt.Println(h.Err())
	close(release)
	q.Close()
	// Output: context canceled
}

func ExampleFuture_Result() {
	ctx := context.Background()
	q := taskqueue.NewSerial()
	f := taskqueue.RunAsync(ctx, q, func(context.Context) ([]string, error) {
		return strings.Fields("a b c"), nil
	})
	words, err := f.Wait(ctx)
	fmt.Println(len(words), err)
	// Output: 3 <nil>
}

func ExampleWithMaxQueued() {
	q := taskqueue.NewSerial(taskqueue.WithMaxQueued(1), taskqueue.WithFailWhenFull())
	started, release := make(chan struct{}), make(chan struct{})
	q.Go(func() { close(started); <-release })
	<-started              // a running task takes no room
	q.Go(func() {})        // fills the queue
	err := q.Go(func() {}) // no room
	fmt.Println(err)
	close(release)
	q.Close()
	// Output: taskqueue: queue full
}

func ExampleWithPanicHandler() {
	q := taskqueue.NewSerial(taskqueue.WithPanicHandler(func(p *taskqueue.PanicError) {
		fmt.Println("recovered:", p.Value)
	}))
	q.Go(func() { panic("out of range") })
	q.Close()
	// Output: recovered: out of range
}

func ExampleDefaultSerial() {
	v, _ := taskqueue.RunSync(context.Background(), taskqueue.DefaultSerial(), func(context.Context) (string, error) {
		return "on the default serial queue", nil
	})
	fmt.Println(v)
	// Output: on the default serial queue
}

func ExampleDefaultConcurrent() {
	ctx := context.Background()
	q := taskqueue.DefaultConcurrent()
	futures := make([]*taskqueue.Future[int], 4)
	for i := range futures {
		futures[i] = taskqueue.RunAsync(ctx, q, func(context.Context) (int, error) { return i * 10, nil })
	}
	for _, f := range futures {
		v, _ := f.Wait(ctx)
		fmt.Print(v, " ")
	}
	fmt.Println()
	// Output: 0 10 20 30
}

// A queue made WithTarget runs on another queue's slots: here a thousand
// serial queues, one per entity, share two slots and no goroutine of their
// own.
func ExampleWithTarget() {
	ctx := context.Background()
	pool := taskqueue.NewConcurrent(2)
	players := make([]*taskqueue.Queue, 1000)
	scores := make([]int, len(players)) // each touched by its own serial queue only
	for i := range players {
		players[i] = taskqueue.NewSerial(taskqueue.WithTarget(pool))
	}
	for round := range 3 {
		for i, p := range players {
			p.Go(func() { scores[i] += round + 1 })
		}
	}
	pool.Shutdown(ctx) // waits for the children's tasks too
	fmt.Println(scores[0], scores[999])
	// Output: 6 6
}

// A Keyed runs the tasks of each key in order, different keys in parallel,
// with a lane only while a key has work.
func ExampleKeyed() {
	ctx := context.Background()
	pool := taskqueue.NewConcurrent(4)
	docs := taskqueue.NewKeyed[string](pool)
	var mu sync.Mutex
	edits := map[string][]int{}
	for i := range 6 {
		doc := []string{"a.txt", "b.txt"}[i%2]
		docs.Go(doc, func() {
			mu.Lock()
			defer mu.Unlock()
			edits[doc] = append(edits[doc], i)
		})
	}
	docs.RunSync(ctx, "a.txt", func(context.Context) error { return nil }) // after a.txt's edits
	pool.Close()
	fmt.Println(edits["a.txt"], edits["b.txt"], docs.Lanes())
	// Output: [0 2 4] [1 3 5] 0
}

// Visible assets load before distant ones on a busy pool.
func ExampleWithPriority() {
	ctx := context.Background()
	pool := taskqueue.NewSerial()
	near := taskqueue.NewSerial(taskqueue.WithTarget(pool), taskqueue.WithPriority(1))
	far := taskqueue.NewSerial(taskqueue.WithTarget(pool))
	var order []string
	pool.Suspend() // queue both first, to show the order
	far.Go(func() { order = append(order, "far") })
	near.Go(func() { order = append(order, "near") })
	pool.Resume()
	pool.Shutdown(ctx)
	fmt.Println(order)
	// Output: [near far]
}

func ExampleQueue_Suspend() {
	ctx := context.Background()
	q := taskqueue.NewSerial()
	q.Suspend()
	h := q.RunAsync(ctx, func(context.Context) error { return nil })
	fmt.Println("done while suspended:", h.IsDone())
	q.Resume()
	fmt.Println(h.Wait(ctx), h.IsDone())
	// Output:
	// done while suspended: false
	// <nil> true
}

func ExampleQueue_SetLimit() {
	q := taskqueue.NewConcurrent(2)
	q.SetLimit(8)
	fmt.Println(q.Stats().Limit)
	// Output: 8
}

func ExampleQueue_TryGo() {
	q := taskqueue.NewSerial()
	release := make(chan struct{})
	fmt.Println(q.TryGo(func() { <-release }))
	fmt.Println(q.TryGo(func() {})) // its only slot is taken: not queued
	close(release)
	q.Close()
	// Output:
	// true
	// false
}

// Waits shows a cycle: a task of a waits for b while a task of b waits for
// a. Their contexts end it.
func ExampleWaits() {
	ctx, cancel := context.WithCancel(context.Background())
	a, b := taskqueue.NewSerial(), taskqueue.NewSerial()
	inA, inB := make(chan struct{}), make(chan struct{})
	ha := a.RunAsync(ctx, func(ctx context.Context) error {
		close(inA)
		<-inB
		return b.RunSync(ctx, func(context.Context) error { return nil })
	})
	hb := b.RunAsync(ctx, func(ctx context.Context) error {
		close(inB)
		<-inA
		return a.RunSync(ctx, func(context.Context) error { return nil })
	})
	for len(taskqueue.Waits(a, b)) < 2 {
		runtime.Gosched()
	}
	for _, w := range taskqueue.Waits(a, b) {
		fmt.Println("waits for a:", w.Queue == a, "holds b:", len(w.Holds) == 1 && w.Holds[0] == b)
	}
	cancel()
	fmt.Println(ha.Wait(context.Background()), hb.Wait(context.Background()))
	// Unordered output:
	// waits for a: true holds b: true
	// waits for a: false holds b: false
	// context canceled context canceled
}

// expvarObserver publishes a queue's task counts and time through expvar,
// which serves them as JSON on /debug/vars.
type expvarObserver struct {
	vars *expvar.Map
}

func (o expvarObserver) TaskStarted(q *taskqueue.Queue) { o.vars.Add(q.Name()+".started", 1) }

func (o expvarObserver) TaskEnded(q *taskqueue.Queue, ran time.Duration, err error) {
	outcome := ".ok"
	if err != nil {
		outcome = ".failed"
	}
	o.vars.Add(q.Name()+outcome, 1)
	o.vars.Add(q.Name()+".ns", int64(ran))
}

func ExampleWithObserver() {
	vars := new(expvar.Map) // expvar.NewMap("queues") publishes it
	q := taskqueue.NewConcurrent(4, taskqueue.WithName("io"), taskqueue.WithObserver(expvarObserver{vars}))
	ctx := context.Background()
	for i := range 10 {
		q.RunAsync(ctx, func(context.Context) error {
			if i == 3 {
				return errors.New("not found")
			}
			return nil
		})
	}
	q.Close()
	fmt.Println(vars.Get("io.started"), vars.Get("io.ok"), vars.Get("io.failed"))
	// Output: 10 9 1
}

func ExampleWithName() {
	ctx := context.Background()
	q := taskqueue.NewSerial(taskqueue.WithName("assets"), taskqueue.WithPanicHandler(func(*taskqueue.PanicError) {}))
	err := q.RunAsync(ctx, func(context.Context) error { panic("corrupt file") }).Wait(ctx)
	var p *taskqueue.PanicError
	errors.As(err, &p)
	fmt.Println(p.Source, p.Value, q.Stats().Name)
	// Output: assets corrupt file assets
}
