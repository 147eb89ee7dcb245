package taskqueue_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// hammerTotal sets how many tasks TestHammer submits in all. The default
// keeps go test quick; the long run is
//
//	go test -run TestHammer -hammer.total=10000000 -timeout 1h ./taskqueue
var hammerTotal = flag.Int("hammer.total", 0, "tasks TestHammer submits in all (0: a quick run)")

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
	total := *hammerTotal
	if total == 0 {
		total = 1 << 20
		if testing.Short() || raceEnabled {
			total = 1 << 16
		}
	}
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

// isRefusal reports whether err says that a task did not run because it was
// canceled or refused.
func isRefusal(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, taskqueue.ErrClosed) || errors.Is(err, taskqueue.ErrQueueFull)
}
