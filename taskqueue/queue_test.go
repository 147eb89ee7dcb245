package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestRunAsyncResult: the typed RunAsync gives the task's value once done,
// with Done closed; the untyped handle reports nil.
func TestRunAsyncResult(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		f := taskqueue.RunAsync(t.Context(), q, func(context.Context) (string, error) { return "hi", nil })
		if v, err := f.Wait(t.Context()); v != "hi" || err != nil {
			t.Errorf("Result = %q, %v; want \"hi\", nil", v, err)
		}
		select {
		case <-f.Done():
		default:
			t.Error("Done() not closed after Result")
		}
		h := q.RunAsync(t.Context(), func(context.Context) error { return nil })
		if err := h.Wait(t.Context()); err != nil || h.Err() != nil {
			t.Errorf("Wait = %v, Err = %v; want nil, nil", err, h.Err())
		}
	})
}

// TestSubmitToOwnQueueNeverBlocks: a task that submits to its own queue with
// RunAsync and Go never blocks, and every task it submitted runs.
func TestSubmitToOwnQueueNeverBlocks(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		var ran atomic.Int32
		h := q.RunAsync(t.Context(), func(ctx context.Context) error {
			for range 100 {
				q.RunAsync(ctx, func(context.Context) error { ran.Add(1); return nil })
				if err := q.Go(func() { ran.Add(1) }); err != nil {
					return err
				}
			}
			return nil
		})
		if err := h.Wait(t.Context()); err != nil {
			t.Fatalf("Wait = %v", err)
		}
		synctest.Wait()
		if got := ran.Load(); got != 200 {
			t.Errorf("%d tasks ran; want 200", got)
		}
	})
}

// TestSerialOrderAndVisibility: a serial queue runs a thousand tasks of Go
// and RunAsync in submission order, each seeing the writes of the one before
// without a lock (the race detector would see a missing happens-before).
func TestSerialOrderAndVisibility(t *testing.T) {
	for _, k := range kinds {
		if !k.serial {
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			q := k.new()
			var order []int // no lock: each task sees the writes of the one before
			for i := range 1000 {
				if i%3 == 0 {
					q.Go(func() { order = append(order, i) })
				} else {
					q.RunAsync(t.Context(), func(context.Context) error { order = append(order, i); return nil })
				}
			}
			if err := q.Close(); err != nil {
				t.Fatal(err)
			}
			for i, v := range order {
				if v != i {
					t.Fatalf("order[%d] = %d; want %d", i, v, i)
				}
			}
			if len(order) != 1000 {
				t.Errorf("%d tasks ran; want 1000", len(order))
			}
		})
	}
}

// TestConcurrencyLimit: a queue runs exactly its limit of tasks at once,
// never more.
func TestConcurrencyLimit(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		var running, peak atomic.Int32
		gate := make(chan struct{})
		for range 3 * q.Stats().Limit {
			q.Go(func() {
				n := running.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				<-gate
				running.Add(-1)
			})
		}
		synctest.Wait()
		if got := running.Load(); got != int32(q.Stats().Limit) {
			t.Errorf("%d tasks run at once; want %d", got, q.Stats().Limit)
		}
		close(gate)
		q.Close()
		if got := peak.Load(); got != int32(q.Stats().Limit) {
			t.Errorf("peak concurrency %d; want %d", got, q.Stats().Limit)
		}
	})
}

// A concurrent queue starts its tasks in submission order, at most n at once.
func TestConcurrentStartsInSubmissionOrder(t *testing.T) {
	const n, total = 3, 40
	q := taskqueue.NewConcurrent(n)
	started := make(chan int, total)
	gates := make([]chan struct{}, total)
	for i := range gates {
		gates[i] = make(chan struct{})
	}
	var running, maxRunning atomic.Int32
	for i := range total {
		if err := q.Go(func() {
			r := running.Add(1)
			for {
				m := maxRunning.Load()
				if r <= m || maxRunning.CompareAndSwap(m, r) {
					break
				}
			}
			started <- i
			<-gates[i]
			running.Add(-1)
		}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[int]bool{}
	for range n {
		seen[<-started] = true
	}
	for i := range n {
		if !seen[i] {
			t.Fatalf("first %d starts were %v, want 0..%d", n, seen, n-1)
		}
	}
	// Release them one at a time in reverse-ish order; each release lets exactly
	// the next task in submission order start.
	next := n
	runningSet := []int{}
	for i := range n {
		runningSet = append(runningSet, i)
	}
	for len(runningSet) > 0 {
		// release the last running
		r := runningSet[len(runningSet)-1]
		runningSet = runningSet[:len(runningSet)-1]
		close(gates[r])
		if next < total {
			got := <-started
			if got != next {
				t.Fatalf("after releasing task %d, task %d started, want %d", r, got, next)
			}
			runningSet = append([]int{got}, runningSet...)
			next++
		}
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if m := maxRunning.Load(); m > n {
		t.Fatalf("%d tasks ran at once on a queue of limit %d", m, n)
	}
}

// TestBarrier: a barrier starts once every task submitted before it has
// finished, and no task submitted after it starts before it returns, in
// every kind of queue; and on real time, on a concurrent queue whose tasks
// race the barrier's start and end.
func TestBarrier(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		var running atomic.Int32
		var alone atomic.Bool
		var before, after atomic.Int32
		gate := make(chan struct{})
		for range 4 {
			q.Go(func() { running.Add(1); <-gate; before.Add(1); running.Add(-1) })
		}
		h := q.RunBarrier(t.Context(), func(context.Context) error {
			alone.Store(running.Load() == 0 && before.Load() == 4 && after.Load() == 0)
			return nil
		})
		for range 4 {
			q.Go(func() { after.Add(1) })
		}
		synctest.Wait()
		close(gate)
		if err := h.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		q.Close()
		if !alone.Load() {
			t.Error("barrier did not run alone, after the tasks before it and before those after it")
		}
	})
	t.Run("concurrent=4/delayed", func(t *testing.T) {
		// A delayed task counts as submitted when it comes due: a barrier
		// submitted before that does not wait for it.
		synctest.Test(t, func(t *testing.T) {
			q := taskqueue.NewConcurrent(4)
			start := time.Now()
			var barrierAt, delayedAt time.Duration
			q.RunAfter(t.Context(), time.Hour, func(context.Context) error { delayedAt = time.Since(start); return nil })
			h := q.RunBarrier(t.Context(), func(context.Context) error { barrierAt = time.Since(start); return nil })
			if err := h.Wait(t.Context()); err != nil {
				t.Fatal(err)
			}
			q.Close()
			if barrierAt != 0 || delayedAt != time.Hour {
				t.Errorf("the barrier ran at %v, the delayed task at %v; want 0 and 1h", barrierAt, delayedAt)
			}
		})
	})
	t.Run("concurrent=4/rounds", func(t *testing.T) {
		for round := range 50 {
			q := taskqueue.NewConcurrent(4)
			ctx := context.Background()
			var before, after atomic.Int32
			var bad atomic.Int32
			var inBarrier atomic.Bool
			for range 20 {
				q.Go(func() {
					if inBarrier.Load() {
						bad.Add(1)
					}
					before.Add(1)
				})
			}
			h := q.RunBarrier(ctx, func(context.Context) error {
				inBarrier.Store(true)
				if before.Load() != 20 || after.Load() != 0 {
					bad.Add(100)
				}
				for range 10 {
					runtime.Gosched()
				}
				inBarrier.Store(false)
				return nil
			})
			for range 20 {
				q.RunAsync(ctx, func(context.Context) error {
					if inBarrier.Load() || !h.IsDone() {
						bad.Add(1)
					}
					after.Add(1)
					return nil
				})
			}
			q.Close()
			if bad.Load() != 0 {
				t.Fatalf("round %d: barrier broken (%d)", round, bad.Load())
			}
		}
	})
}

// TestTryGo: TryGo starts f when a slot is free with no task waiting before
// it, and otherwise reports false and never runs f: with every slot taken,
// on a suspended queue, on a closed one.
func TestTryGo(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		var ran atomic.Int32
		if !q.TryGo(func() { ran.Add(1) }) {
			t.Fatal("TryGo on an idle queue = false")
		}
		synctest.Wait()
		release := block(t, q)
		if q.TryGo(func() { ran.Add(1) }) {
			t.Error("TryGo on a queue with every slot taken = true")
		}
		release()
		synctest.Wait()
		if !q.TryGo(func() { ran.Add(1) }) {
			t.Error("TryGo once the slots were free again = false")
		}
		synctest.Wait()
		q.Suspend()
		if q.TryGo(func() { ran.Add(1) }) {
			t.Error("TryGo on a suspended queue = true")
		}
		q.Resume()
		q.Close()
		if q.TryGo(func() { ran.Add(1) }) {
			t.Error("TryGo on a closed queue = true")
		}
		if got := ran.Load(); got != 2 {
			t.Errorf("%d TryGo functions ran; want 2", got)
		}
	})
}

// TestTryGoTakesEveryFreeSlot: on an idle queue of n slots, n calls of TryGo
// in a row all start, and the next reports false and never runs its
// function. The second call used to report false, its slot still counted as
// queued; and a worker that had not yet taken its task used to make the next
// TryGo see no free slot (in 1 of 6 runs of a suite: [true true false true]),
// which the rounds on real time hunt for.
func TestTryGoTakesEveryFreeSlot(t *testing.T) {
	for _, n := range []int{1, 2, 4, 8} {
		t.Run(fmt.Sprintf("limit=%d", n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := taskqueue.NewConcurrent(n)
				gate := make(chan struct{})
				for i := range n {
					if !q.TryGo(func() { <-gate }) {
						t.Fatalf("TryGo %d = false with a free slot", i+1)
					}
				}
				if q.TryGo(func() { t.Error("a refused TryGo ran") }) {
					t.Errorf("TryGo %d = true with every slot taken", n+1)
				}
				synctest.Wait()
				if st := q.Stats(); st.Running != n || st.Queued != 0 {
					t.Errorf("Stats = %+v; want %d running, none queued", st, n)
				}
				close(gate)
				q.Close()
			})
		})
	}
	rounds := 3000
	if testing.Short() {
		rounds = 300
	}
	for round := range rounds {
		const n = 4
		q := taskqueue.NewConcurrent(n)
		release := make(chan struct{})
		var got [n + 1]bool
		for i := range got {
			got[i] = q.TryGo(func() { <-release })
		}
		close(release)
		if want := [n + 1]bool{true, true, true, true, false}; got != want {
			t.Fatalf("round %d: TryGo %d times on an idle queue of %d slots = %v; want %v", round, n+1, n, got, want)
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTryGoOnAChildNeverQueues: TryGo on a child whose target is full or
// suspended reports false and never runs f (it used to queue f for later).
func TestTryGoOnAChildNeverQueues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := taskqueue.NewConcurrent(1)
		child := taskqueue.NewConcurrent(2, taskqueue.WithTarget(target))
		release := block(t, target)
		if child.TryGo(func() { t.Error("a refused TryGo ran") }) {
			t.Error("TryGo on a child of a full target = true")
		}
		release()
		synctest.Wait()
		target.Suspend()
		if child.TryGo(func() { t.Error("a refused TryGo ran") }) {
			t.Error("TryGo on a child of a suspended target = true")
		}
		target.Resume()
		gate := make(chan struct{})
		if !child.TryGo(func() { <-gate }) {
			t.Error("TryGo on an idle child of an idle target = false")
		}
		synctest.Wait()
		close(gate)
		target.Close()
	})
}

// TestEverySubmissionRunsOnce: every way in (Go, TryGo, RunAsync, RunSync
// from outside, on the caller when idle, RunBarrier, and tasks that call
// RunSync in their place, themselves and from helpers, with contexts that are
// canceled while they wait for their turn), from several goroutines at once,
// on a serial queue and a concurrent one of limit 3. The gauge of functions
// running at once never passes the limit; a barrier runs alone; every call
// reports either that its function ran (nil) or an error without running it,
// never both and never neither; and once idle, Stats add up (Completed =
// Succeeded + Failed + Panicked, nothing queued or running). A broken
// implementation overlaps an in-place function with the queue's other tasks,
// runs a call that reported its context's error (or loses one that reported
// nil), or counts a task twice.
func TestEverySubmissionRunsOnce(t *testing.T) {
	for _, limit := range []int{1, 3} {
		for round := 0; round < 8; round++ {
			t.Run(fmt.Sprintf("limit=%d/round=%d", limit, round), func(t *testing.T) {
				var q *taskqueue.Queue
				if limit == 1 {
					q = taskqueue.NewSerial(taskqueue.WithPanicHandler(func(*taskqueue.PanicError) {}))
				} else {
					q = taskqueue.NewConcurrent(limit, taskqueue.WithPanicHandler(func(*taskqueue.PanicError) {}))
				}
				g := newGauge("queue", limit)
				var bad atomic.Value
				fail := func(s string) { bad.CompareAndSwap(nil, s) }
				var barrierAlone atomic.Bool
				barrierAlone.Store(true)
				body := func(what string) {
					g.Enter(what)
					runtime.Gosched()
					g.Leave()
				}
				// check runs one call whose function marks it ran, and checks
				// that it ran exactly when the call reports nil.
				check := func(what string, call func(f func()) error) {
					var ran atomic.Int32
					err := call(func() { ran.Add(1); body(what) })
					switch {
					case err == nil && ran.Load() != 1:
						fail(fmt.Sprintf("%s: nil error, ran %d times", what, ran.Load()))
					case err != nil && ran.Load() != 0:
						fail(fmt.Sprintf("%s: %v, and ran %d times", what, err, ran.Load()))
					}
				}
				var wg sync.WaitGroup
				for w := 0; w < 4; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						rng := rand.New(rand.NewPCG(uint64(round), uint64(w)))
						var hs []*taskqueue.Handle
						var hran []*atomic.Int32
						for i := 0; i < 60; i++ {
							switch rng.IntN(6) {
							case 0:
								if err := q.Go(func() { body("Go") }); err != nil {
									fail("Go: " + err.Error())
								}
							case 1:
								q.TryGo(func() { body("TryGo") })
							case 2:
								ran := new(atomic.Int32)
								hran = append(hran, ran)
								hs = append(hs, q.RunAsync(context.Background(), func(context.Context) error { ran.Add(1); body("RunAsync"); return nil }))
							case 3:
								check("outsider RunSync", func(f func()) error {
									return q.RunSync(context.Background(), func(context.Context) error { f(); return nil })
								})
							case 4:
								ran := new(atomic.Int32)
								hran = append(hran, ran)
								hs = append(hs, q.RunBarrier(context.Background(), func(context.Context) error {
									ran.Add(1)
									if g.Now() != 0 {
										barrierAlone.Store(false)
									}
									body("barrier")
									return nil
								}))
							default:
								check("task with helpers", func(f func()) error {
									return q.RunSync(context.Background(), func(ctx context.Context) error {
										f()
										var hw sync.WaitGroup
										for h := 0; h < 3; h++ {
											hw.Add(1)
											go func() {
												defer hw.Done()
												for j := 0; j < 5; j++ {
													c, cancel := context.WithCancel(ctx)
													if j%2 == 1 {
														go func() { runtime.Gosched(); cancel() }()
													}
													check("in-place RunSync", func(f func()) error {
														err := q.RunSync(c, func(context.Context) error { f(); return nil })
														if err != nil && !errors.Is(err, context.Canceled) {
															fail("in-place RunSync: " + err.Error())
														}
														return err
													})
													cancel()
												}
											}()
										}
										check("in-place RunSync from the task", func(f func()) error {
											return q.RunSync(ctx, func(context.Context) error { f(); return nil })
										})
										hw.Wait()
										return nil
									})
								})
							}
						}
						for k, h := range hs {
							if err := h.Wait(context.Background()); err != nil || hran[k].Load() != 1 {
								fail(fmt.Sprintf("handle: %v, ran %d times", err, hran[k].Load()))
							}
						}
					}()
				}
				wg.Wait()
				if err := q.Close(); err != nil {
					t.Fatal(err)
				}
				checkGauges(t, g)
				if v := bad.Load(); v != nil {
					t.Fatal(v)
				}
				if !barrierAlone.Load() {
					t.Errorf("a barrier started while another function ran")
				}
				st := q.Stats()
				if st.Completed != st.Succeeded+st.Failed+st.Panicked || st.Queued != 0 || st.Running != 0 || st.Delayed != 0 {
					t.Errorf("Stats of an idle queue do not add up: %+v", st)
				}
			})
		}
	}
}

// TestCanceledTasksBehindAStuckHeadFreeTheirMemory: a bounded queue whose
// head does not move, and a million tasks submitted and canceled behind it.
// Their entries once stayed in the list until the head moved, 16 bytes each
// plus the tasks; now the heap must not grow with them.
func TestCanceledTasksBehindAStuckHeadFreeTheirMemory(t *testing.T) {
	skipHeapTestUnderRace(t)
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	ctx := context.Background()
	q := taskqueue.NewSerial(taskqueue.WithMaxQueued(4), taskqueue.WithFailWhenFull())
	release := make(chan struct{})
	started := make(chan struct{})
	q.Go(func() { close(started); <-release }) // the running task, stuck
	<-started
	q.Go(func() {}) // the head of the list, stuck behind it
	before := liveHeap()
	for range n {
		h := q.RunAsync(ctx, func(context.Context) error { return nil })
		if !h.Cancel() {
			t.Fatalf("Cancel of a queued task = false (%v)", h.Err())
		}
	}
	grown := liveHeap() - before
	close(release)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	perEntry := float64(grown) / float64(n)
	t.Logf("the heap grew by %d bytes over %d canceled tasks behind a stuck head: %.3f B each", grown, n, perEntry)
	if perEntry > 0.5 {
		t.Errorf("the heap grew by %d bytes over %d canceled tasks behind a stuck head (%.2f B each); want it not to grow with them", grown, n, perEntry)
	}
	if st := q.Stats(); st.Canceled != uint64(n) {
		t.Errorf("Canceled = %d; want %d", st.Canceled, n)
	}
}

// TestHammer submits tasks from many goroutines, in every form, to queues of
// every kind, while tasks call RunSync on their own queue and on another,
// panic, call runtime.Goexit, and are canceled through their handles and
// contexts, and while the queue is closed, part way through, in one of three
// ways. Each submission is an operation of the table hammerOps; at the end a
// checker proves the invariants:
//
//   - every task ran at most once, and a task with a handle ran exactly when
//     its handle says it started (nil, an error of its own, a panic or
//     Goexit); otherwise the handle reports a cancellation, ErrClosed or
//     ErrQueueFull;
//   - the counts balance: every submission ran, was canceled or was refused,
//     and the queue's Stats agree with what the tasks saw;
//   - on a serial queue each submitter's immediate tasks ran in order;
//   - the queue ends idle, with no slot held and no RunSync waiting.
func TestHammer(t *testing.T) {
	total := hammerSize(1<<16, 1<<20)
	cases := []struct {
		kind   queueKind
		closer string
		opts   []taskqueue.Option
	}{
		{kinds[0], "close", nil},
		{kinds[0], "closeNow", []taskqueue.Option{taskqueue.WithMaxQueued(512)}},
		{kinds[2], "closeNow", nil},
		{kinds[2], "shutdown", []taskqueue.Option{taskqueue.WithMaxQueued(4096), taskqueue.WithFailWhenFull()}},
		{kinds[3], "close", nil},
		{kinds[5], "closeNow", nil},
	}
	var all hammerCounts
	for i, c := range cases {
		name := fmt.Sprintf("%s/%s/bounded=%v", c.kind.name, c.closer, c.opts != nil)
		t.Run(name, func(t *testing.T) {
			counts := hammerQueue(t, c.kind, c.closer, c.opts, (total+len(cases)-1)/len(cases), uint64(i))
			all.add(counts)
		})
	}
	t.Logf("in all: %s", &all)
}

// A hammerOp is one way of submitting a task, with its share of the
// operations.
type hammerOp struct {
	name   string
	weight int
	submit func(h *hammer, r *rand.Rand, task func(context.Context) error) *taskqueue.Handle
}

var hammerOps = []hammerOp{
	{"go", 20, func(h *hammer, r *rand.Rand, task func(context.Context) error) *taskqueue.Handle {
		h.q.Go(func() { task(context.Background()) })
		return nil
	}},
	{"async", 20, func(h *hammer, r *rand.Rand, task func(context.Context) error) *taskqueue.Handle {
		return h.q.RunAsync(context.Background(), task)
	}},
	{"cancel", 8, func(h *hammer, r *rand.Rand, task func(context.Context) error) *taskqueue.Handle {
		hd := h.q.RunAsync(context.Background(), task)
		hd.Cancel()
		return hd
	}},
	{"context", 8, func(h *hammer, r *rand.Rand, task func(context.Context) error) *taskqueue.Handle {
		ctx, cancel := context.WithCancel(context.Background())
		hd := h.q.RunAsync(ctx, task)
		if r.IntN(2) == 0 {
			hd.Done() // watch the context
		}
		cancel()
		return hd
	}},
	{"after", 8, func(h *hammer, r *rand.Rand, task func(context.Context) error) *taskqueue.Handle {
		ctx, cancel := context.WithCancel(context.Background())
		hd := h.q.RunAfter(ctx, time.Duration(r.IntN(50))*time.Microsecond, task)
		if r.IntN(4) == 0 {
			cancel()
		} else {
			hd.Cancel() // too late, mostly: the task ran or waits
			h.cancels = append(h.cancels, cancel)
		}
		return hd
	}},
	{"barrier", 4, func(h *hammer, r *rand.Rand, task func(context.Context) error) *taskqueue.Handle {
		return h.q.RunBarrier(context.Background(), task)
	}},
	{"sync", 4, func(h *hammer, r *rand.Rand, task func(context.Context) error) *taskqueue.Handle {
		h.syncErr(h.q.RunSync(context.Background(), task))
		return nil
	}},
	{"typed", 4, func(h *hammer, r *rand.Rand, task func(context.Context) error) *taskqueue.Handle {
		f := taskqueue.RunAsync(context.Background(), h.q, func(ctx context.Context) (int, error) { return 1, task(ctx) })
		return &f.Handle
	}},
	// Tasks that call RunSync on their own queue, where it runs in their
	// place (on a concurrent queue with free slots too, where the slot
	// books were once corrupted), and on another queue, which waits.
	{"nested-own", 8, func(h *hammer, r *rand.Rand, task func(context.Context) error) *taskqueue.Handle {
		return h.q.RunAsync(context.Background(), func(ctx context.Context) error {
			h.shared.nested.Add(1) // the outer task and the inner RunSync both complete
			return h.q.RunSync(ctx, task)
		})
	}},
	{"nested-other", 6, func(h *hammer, r *rand.Rand, task func(context.Context) error) *taskqueue.Handle {
		return h.q.RunAsync(context.Background(), func(ctx context.Context) error {
			h.other.RunSync(ctx, func(context.Context) error { runtime.Gosched(); return nil })
			return task(ctx)
		})
	}},
	{"panic", 5, func(h *hammer, r *rand.Rand, task func(context.Context) error) *taskqueue.Handle {
		return h.q.RunAsync(context.Background(), func(ctx context.Context) error {
			task(ctx)
			h.shared.panicked.Add(1)
			panic(errHammer)
		})
	}},
	{"goexit", 5, func(h *hammer, r *rand.Rand, task func(context.Context) error) *taskqueue.Handle {
		return h.q.RunAsync(context.Background(), func(ctx context.Context) error {
			task(ctx)
			h.shared.goexited.Add(1)
			runtime.Goexit()
			return nil
		})
	}},
}

var errHammer = errors.New("hammer")

// hammer is one submitter's state.
type hammer struct {
	q, other *taskqueue.Queue
	t        *testing.T
	cancels  []context.CancelFunc
	shared   *hammerShared
}

// hammerShared counts what the tasks did, for the checker.
type hammerShared struct {
	nested, panicked, goexited atomic.Uint64
}

func (h *hammer) syncErr(err error) {
	if err != nil && !isRefusal(err) {
		h.t.Errorf("RunSync = %v", err)
	}
}

// hammerCounts are what a hammer run did.
type hammerCounts struct {
	submitted, ran, refused uint64
	byOp                    map[string]uint64
	stats                   taskqueue.Stats
}

func (c *hammerCounts) add(d hammerCounts) {
	c.submitted += d.submitted
	c.ran += d.ran
	c.refused += d.refused
	c.stats.Completed += d.stats.Completed
	c.stats.Succeeded += d.stats.Succeeded
	c.stats.Failed += d.stats.Failed
	c.stats.Panicked += d.stats.Panicked
	c.stats.Canceled += d.stats.Canceled
	c.stats.Rejected += d.stats.Rejected
}

func (c *hammerCounts) String() string {
	return fmt.Sprintf("%d submitted: %d ran exactly once, %d canceled or refused; queues' stats: completed %d (succeeded %d, failed %d, panicked %d), canceled %d, rejected %d",
		c.submitted, c.ran, c.refused, c.stats.Completed, c.stats.Succeeded, c.stats.Failed, c.stats.Panicked, c.stats.Canceled, c.stats.Rejected)
}

// hammerRecord follows one submitter's tasks.
type hammerRecord struct {
	runs       []atomic.Int32 // times each task ran
	lastRun    atomic.Int64   // the last immediate task of this submitter that ran, on a serial queue
	misordered atomic.Int32
}

func hammerQueue(t *testing.T, k queueKind, closer string, opts []taskqueue.Option, total int, seed uint64) hammerCounts {
	const submitters = 8
	silent := taskqueue.WithPanicHandler(func(*taskqueue.PanicError) {})
	q := k.new(append(opts, silent)...)
	other := taskqueue.NewConcurrent(2) // never waits for q: no cycle
	perSubmitter := (total + submitters - 1) / submitters
	records := make([]*hammerRecord, submitters)
	var submitted atomic.Int64
	closeAt := int64(total * 9 / 10)
	var closeOnce sync.Once
	closeQueue := func() {
		switch closer {
		case "closeNow":
			q.CloseNow()
		case "shutdown":
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
				defer cancel()
				q.Shutdown(ctx) // gives up at once, mostly; the final Shutdown waits
			}()
		default:
			go q.Close() // it waits for the delayed tasks; Shutdown below waits for it
		}
	}
	weights := 0
	for _, op := range hammerOps {
		weights += op.weight
	}
	var byOp [len(hammerOpsNames)]atomic.Uint64
	var shared hammerShared

	var wg sync.WaitGroup
	for s := range submitters {
		rec := &hammerRecord{runs: make([]atomic.Int32, perSubmitter)}
		rec.lastRun.Store(-1)
		records[s] = rec
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(s)))
			h := &hammer{q: q, other: other, t: t, shared: &shared}
			// Handles are checked once they are well behind, which keeps
			// memory flat without making the submitter wait often.
			const window = 1024
			type pending struct {
				h *taskqueue.Handle
				n int
			}
			var inFlight []pending
			check := func(p pending) {
				err := p.h.Wait(context.Background())
				ran := rec.runs[p.n].Load()
				switch {
				case ran == 1 && (err == nil || errors.Is(err, errHammer) || errors.Is(err, taskqueue.ErrGoexit)):
				case ran == 0 && err != nil && isRefusal(err):
				default:
					t.Errorf("submitter %d task %d: ran %d times, handle reports %v", s, p.n, ran, err)
				}
			}
			for n := range perSubmitter {
				if submitted.Add(1) == closeAt {
					closeOnce.Do(closeQueue)
				}
				pick := r.IntN(weights)
				op := 0
				for ; pick >= hammerOps[op].weight; op++ {
					pick -= hammerOps[op].weight
				}
				byOp[op].Add(1)
				ordered := k.serial && hammerOps[op].name != "after"
				task := func(context.Context) error {
					rec.runs[n].Add(1)
					if ordered {
						if last := rec.lastRun.Swap(int64(n)); last >= int64(n) {
							rec.misordered.Add(1)
						}
					}
					return nil
				}
				if hd := hammerOps[op].submit(h, r, task); hd != nil {
					inFlight = append(inFlight, pending{hd, n})
					if len(inFlight) == window {
						for _, p := range inFlight[:window/2] {
							check(p)
						}
						inFlight = append(inFlight[:0], inFlight[window/2:]...)
					}
				}
			}
			for _, p := range inFlight {
				check(p)
			}
			for _, cancel := range h.cancels {
				cancel()
			}
		})
	}
	wg.Wait()
	closeOnce.Do(closeQueue)
	if err := q.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}

	// The checker.
	var c hammerCounts
	c.submitted = uint64(submitted.Load())
	for s, rec := range records {
		for n := range rec.runs {
			switch runs := rec.runs[n].Load(); runs {
			case 0:
				c.refused++
			case 1:
				c.ran++
			default:
				t.Errorf("submitter %d task %d ran %d times", s, n, runs)
			}
		}
		if m := rec.misordered.Load(); m > 0 {
			t.Errorf("submitter %d: %d tasks ran before an earlier one", s, m)
		}
	}
	st := q.Stats()
	c.stats = st
	// Each task that ran completed once, and the outer task of each nested
	// RunSync once more; every submission completed, was canceled or was
	// refused.
	nested := shared.nested.Load()
	if want := c.ran + nested; st.Completed != want {
		t.Errorf("Stats().Completed = %d; want the %d tasks that ran + %d outer tasks of nested RunSync", st.Completed, c.ran, nested)
	}
	if got, want := st.Completed+st.Canceled+st.Rejected, c.submitted+nested; got != want {
		t.Errorf("completed %d + canceled %d + rejected %d = %d; want %d submissions + %d nested", st.Completed, st.Canceled, st.Rejected, got, c.submitted, nested)
	}
	if st.Completed != st.Succeeded+st.Failed+st.Panicked {
		t.Errorf("Stats() = %+v: Completed is not Succeeded + Failed + Panicked", st)
	}
	if got, want := st.Panicked, shared.panicked.Load(); got != want {
		t.Errorf("Stats().Panicked = %d; %d tasks panicked", got, want)
	}
	if got, want := st.Failed, shared.goexited.Load(); got != want {
		t.Errorf("Stats().Failed = %d; %d tasks called Goexit (the only failures)", got, want)
	}
	if st.Queued != 0 || st.Delayed != 0 || st.Running != 0 {
		t.Errorf("Stats() = %+v after Shutdown; want nothing queued, delayed or running", st)
	}
	if st.Canceled == 0 || st.Rejected == 0 || st.Panicked == 0 || st.Failed == 0 {
		t.Errorf("Stats() = %+v; the hammer should have canceled, refused, panicked and failed tasks", st)
	}
	if q.Slots() != 0 {
		t.Errorf("%d slots held once the queue is idle", q.Slots())
	}
	if ws := taskqueue.Waits(q, other); len(ws) != 0 {
		t.Errorf("RunSync calls still waiting: %v", ws)
	}
	c.byOp = map[string]uint64{}
	for i := range byOp {
		c.byOp[hammerOps[i].name] = byOp[i].Load()
	}
	t.Logf("%s; by operation %v", &c, c.byOp)
	return c
}

// hammerOpsNames sizes the per-operation counters; it must list the
// operations of hammerOps.
var hammerOpsNames = [...]string{"go", "async", "cancel", "context", "after", "barrier", "sync", "typed", "nested-own", "nested-other", "panic", "goexit"}

// TestQueueMisuse: the calls of a queue that the documentation says panic do,
// naming the call and the value; so do the methods of the zero Queue, which
// say how to make one.
func TestQueueMisuse(t *testing.T) {
	ctx := context.Background()
	q := taskqueue.NewSerial()
	var zero taskqueue.Queue
	const zeroQueue = "taskqueue: use of a zero Queue; make one with NewSerial or NewConcurrent"
	checkMisuses(t, []misuse{
		{"NewConcurrent(0)", func() { taskqueue.NewConcurrent(0) }, "taskqueue: NewConcurrent(0): concurrency must be positive"},
		{"NewConcurrent(-1)", func() { taskqueue.NewConcurrent(-1) }, "taskqueue: NewConcurrent(-1): concurrency must be positive"},
		{"Go(nil)", func() { q.Go(nil) }, "taskqueue: Go with a nil function"},
		{"TryGo(nil)", func() { q.TryGo(nil) }, "taskqueue: TryGo with a nil function"},
		{"RunAsync(nil)", func() { q.RunAsync(ctx, nil) }, "taskqueue: RunAsync with a nil function"},
		{"RunBarrier(nil)", func() { q.RunBarrier(ctx, nil) }, "taskqueue: RunBarrier with a nil function"},
		{"RunAsync[int](nil)", func() { taskqueue.RunAsync[int](ctx, q, nil) }, "taskqueue: RunAsync with a nil function"},
		{"zero Queue: Go", func() { zero.Go(func() {}) }, zeroQueue},
		{"zero Queue: RunSync", func() { zero.RunSync(ctx, nop) }, zeroQueue},
		{"zero Queue: Stats", func() { zero.Stats() }, zeroQueue},
		{"zero Queue: Close", func() { zero.Close() }, zeroQueue},
	})
	q.Close()
}

// TestSubmissionAllocations: Go costs no allocation and RunAsync one (the
// task with its handle), on a serial and a concurrent queue, as their docs
// say; BenchmarkGo and BenchmarkRunAsync measure the time and the bytes.
func TestSubmissionAllocations(t *testing.T) {
	ctx := context.Background()
	for _, q := range []*taskqueue.Queue{taskqueue.NewSerial(), taskqueue.NewConcurrent(4)} {
		done := make(chan struct{})
		f := func() { done <- struct{}{} }
		if a := testing.AllocsPerRun(100, func() { q.Go(f); <-done }); a != 0 {
			t.Errorf("limit %d: Go allocates %v times a call; want 0", q.Stats().Limit, a)
		}
		task := func(context.Context) error { done <- struct{}{}; return nil }
		if a := testing.AllocsPerRun(100, func() { q.RunAsync(ctx, task); <-done }); a != 1 {
			t.Errorf("limit %d: RunAsync allocates %v times a call; want 1", q.Stats().Limit, a)
		}
		// The one allocation is of 96 bytes: the next size class is 112, and
		// the worker goroutines a queue starts add a few bytes on average.
		// The race detector's own allocations count in the bytes.
		if b := bytesPerRun(1000, func() { q.RunAsync(ctx, task); <-done }); b >= 112 && !testkit.RaceEnabled {
			t.Errorf("limit %d: RunAsync allocates %v bytes a call; want under 112, its one allocation of 96", q.Stats().Limit, b)
		}
		q.Close()
	}
}

// bytesPerRun returns the bytes that f allocates a call, on average over
// runs calls, after one call to warm it up.
func bytesPerRun(runs int, f func()) uint64 {
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(runs)
}

// TestIdleQueueHoldsNothing: once its work is done, a queue of every kind
// holds no goroutine and no timer, after every way of submitting work, a
// delayed task canceled and one run included, and needs no Close: nothing
// runs, waits or is queued, it holds no timer, and the bubble ends with it
// open (a goroutine left blocked would fail the bubble as deadlocked; that
// the workers end with their work is the scheduler's
// TestWorkersStartOnDemandAndExit).
func TestIdleQueueHoldsNothing(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		ctx := t.Context()
		q := k.new()
		q.Go(func() {})
		q.TryGo(func() {})
		q.RunAsync(ctx, nop).Then(ctx, q, nop)
		q.RunBarrier(ctx, nop)
		q.RunSync(ctx, nop)
		q.RunAfter(ctx, time.Second, nop)
		q.RunAfter(ctx, time.Hour, nop).Cancel()
		g := taskqueue.NewGroup(ctx, q)
		g.Go(nop)
		g.Wait(ctx)
		taskqueue.Apply(ctx, q, 100, func(int) {})
		time.Sleep(time.Second)
		synctest.Wait()
		if st := q.Stats(); st.Running != 0 || st.Queued != 0 || st.Delayed != 0 {
			t.Errorf("Stats() = %+v with the queue idle; want nothing running, queued or delayed", st)
		}
		if q.HasTimer() {
			t.Error("an idle queue holds a timer")
		}
	})
}

// TestUnlimitedQueue: NewConcurrent(math.MaxInt) is a queue with no limit:
// its limit is taken as 1<<30, and each task starts at once, however many
// run (the order of starts is TestConcurrentStartsInSubmissionOrder's);
// SetLimit caps a limit the same way.
func TestUnlimitedQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(math.MaxInt)
		if l := q.Stats().Limit; l != 1<<30 {
			t.Errorf("Stats().Limit of NewConcurrent(math.MaxInt) = %d; want 1<<30", l)
		}
		gate := make(chan struct{})
		var started atomic.Int32
		for range 100 {
			q.Go(func() { started.Add(1); <-gate })
		}
		synctest.Wait()
		if st := q.Stats(); st.Running != 100 || st.Queued != 0 || started.Load() != 100 {
			t.Errorf("Stats() with 100 tasks blocked = %+v, %d started; want all 100 running, none queued", st, started.Load())
		}
		close(gate)
		q.SetLimit(2)
		q.SetLimit(math.MaxInt)
		if l := q.Stats().Limit; l != 1<<30 {
			t.Errorf("Stats().Limit after SetLimit(math.MaxInt) = %d; want 1<<30", l)
		}
		q.Close()
	})
}

// TestZeroQueueNamePanics: Name, like every method of the zero Queue,
// panics, saying how to make a Queue.
func TestZeroQueueNamePanics(t *testing.T) {
	var zero taskqueue.Queue
	if msg := testkit.PanicMessage(func() { _ = zero.Name() }); msg != "taskqueue: use of a zero Queue; make one with NewSerial or NewConcurrent" {
		t.Errorf("Name on the zero Queue panicked with %q; want the zero Queue's message", msg)
	}
}
