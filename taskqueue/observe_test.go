package taskqueue_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// recorder is an Observer that keeps what it saw.
type recorder struct {
	mu      sync.Mutex
	started int
	ended   []error
}

func (r *recorder) TaskStarted(*taskqueue.Queue) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started++
}

func (r *recorder) TaskEnded(_ *taskqueue.Queue, _ time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, err)
}

// TestObserverSeesEveryTask: every kind of task, however it ends, is seen
// to start and end once, with its outcome.
func TestObserverSeesEveryTask(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		ctx := context.Background()
		var rec recorder
		q := k.new(taskqueue.WithObserver(&rec), taskqueue.WithPanicHandler(func(*taskqueue.PanicError) {}))
		errBoom := errors.New("boom")
		q.RunSync(ctx, func(context.Context) error { return nil }) // inline
		q.RunAsync(ctx, func(context.Context) error { return errBoom }).Wait(ctx)
		q.RunAsync(ctx, func(context.Context) error { panic("p") }).Wait(ctx)
		q.RunAsync(ctx, func(context.Context) error { runtime.Goexit(); return nil }).Wait(ctx)
		taskqueue.RunAsync(ctx, q, func(context.Context) (int, error) { return 1, nil }).Wait(ctx)
		q.Go(func() {})
		synctest.Wait()
		if !q.TryGo(func() {}) {
			t.Fatal("TryGo on an idle queue = false")
		}
		synctest.Wait()
		release := block(t, q)
		done := make(chan error)
		go func() { done <- q.RunSync(ctx, func(context.Context) error { return errBoom }) }() // waits its turn
		synctest.Wait()
		release()
		if err := <-done; err != errBoom {
			t.Errorf("RunSync = %v", err)
		}
		q.Close()
		rec.mu.Lock()
		defer rec.mu.Unlock()
		tasks := 8 + q.Stats().Limit // the blockers too
		if rec.started != tasks || len(rec.ended) != tasks {
			t.Fatalf("observer saw %d starts and %d ends; want %d each", rec.started, len(rec.ended), tasks)
		}
		var nils, booms, panics, goexits int
		for _, err := range rec.ended {
			var p *taskqueue.PanicError
			switch {
			case err == nil:
				nils++
			case err == errBoom:
				booms++
			case errors.As(err, &p) && p.Value == "p":
				panics++
			case err == taskqueue.ErrGoexit:
				goexits++
			default:
				t.Errorf("observer saw the outcome %v", err)
			}
		}
		if booms != 2 || panics != 1 || goexits != 1 || nils != tasks-4 {
			t.Errorf("outcomes: %d nil, %d errors, %d panics, %d Goexit; want %d, 2, 1, 1", nils, booms, panics, goexits, tasks-4)
		}
	})
}

// TestTaskLabelsAreKept: a task of a named queue, submitted with a context
// that carries pprof labels, runs with its labels and the queue's; the
// worker then goes back to the queue's alone.
func TestTaskLabelsAreKept(t *testing.T) {
	q := taskqueue.NewSerial(taskqueue.WithName("players"))
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("player", "7"))
	profile := func() string {
		var buf bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&buf, 1)
		return buf.String()
	}
	var during, after string
	gate := make(chan struct{})
	q.RunAsync(ctx, func(context.Context) error { during = profile(); return nil })
	q.Go(func() { after = profile(); close(gate) })
	<-gate
	if !strings.Contains(during, `labels: {"player":"7", "queue":"players"}`) {
		t.Errorf("during the task, no goroutine carries both labels:\n%s", during)
	}
	if !strings.Contains(after, `labels: {"queue":"players"}`) || strings.Contains(after, `"player":"7"`) {
		t.Errorf("after the task, the worker's labels are not the queue's alone:\n%s", after)
	}
	q.Close()
}

// TestUnnamedChildKeepsTheSubmittersLabels: a task of an unnamed child of a
// named queue, submitted with a context that carries pprof labels, runs on
// the target's worker with those labels and the target's name, as a task
// of the named queue itself does; the worker then goes back to the name
// alone.
func TestUnnamedChildKeepsTheSubmittersLabels(t *testing.T) {
	root := taskqueue.NewConcurrent(2, taskqueue.WithName("pool"))
	defer root.Close()
	child := taskqueue.NewSerial(taskqueue.WithTarget(root))
	grandchild := taskqueue.NewSerial(taskqueue.WithTarget(child))
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("player", "7"))
	for _, q := range []*taskqueue.Queue{child, grandchild} {
		var during, after string
		q.RunAsync(ctx, func(context.Context) error { during = testkit.Labels(); return nil })
		q.RunAsync(context.Background(), func(context.Context) error { after = testkit.Labels(); return nil }).Wait(context.Background())
		if during != `{"player":"7", "queue":"pool"}` || after != `{"queue":"pool"}` {
			t.Errorf("labels during a labeled task %s, during the next task %s; want the submitter's with the pool's name, then the name alone", during, after)
		}
	}
}

// TestInPlaceRunSyncLabels: a function that RunSync runs in a task's place
// carries the labels a worker of its queue would give it (its queue's name,
// or that of the nearest named queue above, with the caller's labels), and
// the task gets its own labels back once it returns, as does a caller
// outside any queue.
func TestInPlaceRunSyncLabels(t *testing.T) {
	root := taskqueue.NewConcurrent(2, taskqueue.WithName("root"))
	named := taskqueue.NewSerial(taskqueue.WithName("kid"), taskqueue.WithTarget(root))
	unnamed := taskqueue.NewSerial(taskqueue.WithTarget(named))
	defer root.Close()
	user := pprof.WithLabels(context.Background(), pprof.Labels("user", "u1"))
	for _, c := range []struct {
		name     string
		ctx      context.Context
		on       *taskqueue.Queue
		task     string // the task's labels (a task of root)
		inPlace  string
		outsider string // the function's labels when an outsider calls RunSync on the idle queue
	}{
		{"own queue", context.Background(), root, `{"queue":"root"}`, `{"queue":"root"}`, `{"queue":"root"}`},
		{"own queue, labeled", user, root, `{"queue":"root", "user":"u1"}`, `{"queue":"root", "user":"u1"}`, `{"queue":"root", "user":"u1"}`},
		{"named child", context.Background(), named, `{"queue":"root"}`, `{"queue":"kid"}`, `{"queue":"kid"}`},
		{"named child, labeled", user, named, `{"queue":"root", "user":"u1"}`, `{"queue":"kid", "user":"u1"}`, `{"queue":"kid", "user":"u1"}`},
		{"unnamed grandchild", context.Background(), unnamed, `{"queue":"root"}`, `{"queue":"kid"}`, `{"queue":"kid"}`},
		{"unnamed grandchild, labeled", user, unnamed, `{"queue":"root", "user":"u1"}`, `{"queue":"kid", "user":"u1"}`, `{"queue":"kid", "user":"u1"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before, inPlace, after string
			err := root.RunAsync(c.ctx, func(ctx context.Context) error {
				before = testkit.Labels()
				err := c.on.RunSync(ctx, func(context.Context) error { inPlace = testkit.Labels(); return nil })
				after = testkit.Labels()
				return err
			}).Wait(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if before != c.task || after != c.task || inPlace != c.inPlace {
				t.Errorf("the task's labels %s, in its place %s, after %s; want %s, %s, %s", before, inPlace, after, c.task, c.inPlace, c.task)
			}
			pprof.SetGoroutineLabels(c.ctx)
			defer pprof.SetGoroutineLabels(context.Background())
			want := testkit.Labels()
			var inline string
			c.on.RunSync(c.ctx, func(context.Context) error { inline = testkit.Labels(); return nil })
			if got := testkit.Labels(); inline != c.outsider || got != want {
				t.Errorf("an outsider's RunSync: the function's labels %s, the caller's after %s; want %s, %s", inline, got, c.outsider, want)
			}
		})
	}
}

// TestPanicReportNamesTheQueue: the default panic handler reports through
// log/slog, with the queue's name, which is also the Source of the
// *PanicError.
func TestPanicReportNamesTheQueue(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, nil)))
	defer slog.SetDefault(old)
	ctx := context.Background()
	q := taskqueue.NewSerial(taskqueue.WithName("assets"))
	// Nobody waits for these tasks: their panics go to the log.
	h := q.RunAsync(ctx, func(context.Context) error { panic("corrupt file") })
	q.Go(func() { panic("from Go") })
	q.Close()
	var p *taskqueue.PanicError
	if err := h.Err(); !errors.As(err, &p) || p.Source != "assets" || p.Error() != "panic in assets: corrupt file" {
		t.Errorf("Err = %v; want a *PanicError from assets, in one line", err)
	}
	out := buf.String()
	for _, want := range []string{`"queue":"assets"`, `"panic":"corrupt file"`, `"panic":"from Go"`, `"level":"ERROR"`, `"stack":"goroutine `} {
		if !strings.Contains(out, want) {
			t.Errorf("slog output %s lacks %s", out, want)
		}
	}
}

// TestTaskTraceRegions: with runtime/trace on, each task of a named queue
// is a trace region of the queue's name.
func TestTaskTraceRegions(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("no trace here: %v", err)
	}
	q := taskqueue.NewConcurrent(2, taskqueue.WithName("asset-loader"))
	for range 3 {
		q.Go(func() {})
		q.RunAsync(context.Background(), nop)
	}
	q.Close()
	trace.Stop()
	if !bytes.Contains(buf.Bytes(), []byte("asset-loader")) {
		t.Error("the trace holds no region named for the queue")
	}
}

// onceObserver's TaskStarted panics, or calls runtime.Goexit, for the first
// task it sees, and does nothing after.
type onceObserver struct {
	goexit bool
	done   atomic.Bool
	ended  testkit.Log // the outcomes TaskEnded heard
}

func (o *onceObserver) TaskStarted(*taskqueue.Queue) {
	if o.done.Swap(true) {
		return
	}
	if o.goexit {
		runtime.Goexit()
	}
	panic("in TaskStarted")
}

func (o *onceObserver) TaskEnded(_ *taskqueue.Queue, _ time.Duration, err error) {
	o.ended.Add(fmt.Sprint(err))
}

// TestObserverPanicOrGoexitIsTheTasks: a panic in an Observer's TaskStarted
// is the task's own, and so is a runtime.Goexit there: the task's function
// does not run, its handle completes with the *PanicError or ErrGoexit,
// TaskEnded hears of that end, as it does of every task whose TaskStarted
// was called, Stats counts it as Panicked or Failed, and the queue goes on.
func TestObserverPanicOrGoexitIsTheTasks(t *testing.T) {
	for _, goexit := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			obs := &onceObserver{goexit: goexit}
			q := taskqueue.NewSerial(taskqueue.WithObserver(obs))
			ran := false
			err := q.RunAsync(t.Context(), func(context.Context) error { ran = true; return nil }).Wait(t.Context())
			var pe *taskqueue.PanicError
			switch {
			case ran:
				t.Error("the task ran after its TaskStarted panicked or called Goexit")
			case goexit && err != taskqueue.ErrGoexit:
				t.Errorf("Goexit in TaskStarted: Wait = %v; want ErrGoexit", err)
			case !goexit && (!errors.As(err, &pe) || pe.Value != "in TaskStarted"):
				t.Errorf("panic in TaskStarted: Wait = %v; want its *PanicError", err)
			}
			if err := q.RunSync(t.Context(), nop); err != nil {
				t.Errorf("RunSync after = %v; want nil: the queue goes on", err)
			}
			q.Close()
			want := taskqueue.Stats{Limit: 1, Completed: 2, Succeeded: 1, Panicked: 1}
			if goexit {
				want.Panicked, want.Failed = 0, 1
			}
			if got := q.Stats(); got != want {
				t.Errorf("Stats() = %+v; want %+v", got, want)
			}
			first := "panic: in TaskStarted" // the *PanicError, as Error prints it
			if goexit {
				first = taskqueue.ErrGoexit.Error()
			}
			if got := obs.ended.Take(); !slices.Equal(got, []string{first, "<nil>"}) {
				t.Errorf("TaskEnded heard %q; want %q and <nil>", got, first)
			}
		})
	}
}

// TestPanicHandlerGoexitPassesTheSlotOn: a panic handler that calls
// runtime.Goexit ends its goroutine, and the task's slot passes on, as for
// a task that calls it: the queue runs its next task.
func TestPanicHandlerGoexitPassesTheSlotOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial(taskqueue.WithPanicHandler(func(*taskqueue.PanicError) { runtime.Goexit() }))
		q.Go(func() { panic("reported") })
		var ran atomic.Bool
		q.Go(func() { ran.Store(true) })
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		if !ran.Load() {
			t.Error("the task after the one whose panic handler called Goexit did not run")
		}
		if st := q.Stats(); st.Completed != 2 || st.Panicked != 1 || st.Succeeded != 1 {
			t.Errorf("Stats() = %+v; want 2 completed: 1 panicked, 1 succeeded", st)
		}
	})
}

// endGoexitObserver's TaskEnded calls runtime.Goexit for the first task it
// sees, and does nothing after.
type endGoexitObserver struct{ done atomic.Bool }

func (o *endGoexitObserver) TaskStarted(*taskqueue.Queue) {}

func (o *endGoexitObserver) TaskEnded(*taskqueue.Queue, time.Duration, error) {
	if !o.done.Swap(true) {
		runtime.Goexit()
	}
}

// TestObserverTaskEndedGoexitIsTheTasks: a runtime.Goexit in an Observer's
// TaskEnded ends the task as the task's own Goexit would: its handle
// completes with ErrGoexit, though its function returned nil, Stats counts
// it as Failed, and the queue goes on.
func TestObserverTaskEndedGoexitIsTheTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial(taskqueue.WithObserver(&endGoexitObserver{}))
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		ran := false
		if err := q.RunAsync(ctx, func(context.Context) error { ran = true; return nil }).Wait(ctx); err != taskqueue.ErrGoexit {
			t.Errorf("Goexit in TaskEnded: Wait = %v; want ErrGoexit", err)
		}
		if !ran {
			t.Error("the task did not run")
		}
		if err := q.RunSync(ctx, nop); err != nil {
			t.Errorf("RunSync after = %v; want nil: the queue goes on", err)
		}
		q.Close()
		if got, want := q.Stats(), (taskqueue.Stats{Limit: 1, Completed: 2, Succeeded: 1, Failed: 1}); got != want {
			t.Errorf("Stats() = %+v; want %+v", got, want)
		}
	})
}

// TestRunSyncOnTheCallerKeepsItsLabels: RunSync that runs its function on
// the calling goroutine (an idle named queue) gives the caller back its own
// pprof labels when it returns, not the queue's.
func TestRunSyncOnTheCallerKeepsItsLabels(t *testing.T) {
	q := taskqueue.NewSerial(taskqueue.WithName("players"))
	var before, after string
	onCaller := false
	pprof.Do(context.Background(), pprof.Labels("player", "7"), func(ctx context.Context) {
		before = testkit.Labels()
		q.RunSync(ctx, func(context.Context) error {
			onCaller = onCallerStack("TestRunSyncOnTheCallerKeepsItsLabels")
			return nil
		})
		after = testkit.Labels()
	})
	if !onCaller {
		t.Fatal("RunSync on an idle queue did not run its function on the caller")
	}
	if before != `{"player":"7"}` || after != before {
		t.Errorf("the caller's labels: %s before RunSync, %s after; want {\"player\":\"7\"} both times", before, after)
	}
	q.Close()
}

// crashEnv, set in a child process of TestPanicHandlerPanicIsNotRecovered,
// makes it run the panic.
const crashEnv = "TASKQUEUE_TEST_CRASH"

// TestPanicHandlerPanicIsNotRecovered: a panic in a panic handler ends the
// program, as the docs say, rather than vanish: a child process that lets
// one happen must die of it.
func TestPanicHandlerPanicIsNotRecovered(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		q := taskqueue.NewSerial(taskqueue.WithPanicHandler(func(*taskqueue.PanicError) { panic("the handler panicked") }))
		q.Go(func() { panic("a task") })
		q.Close() // returns only if the handler's panic was recovered
		return
	}
	if runtime.GOOS == "js" {
		t.Skip("js/wasm runs no child processes")
	}
	out, err := testkit.RunChild(t, []string{crashEnv + "=1"}, "-test.run=^TestPanicHandlerPanicIsNotRecovered$")
	if err == nil || !strings.Contains(string(out), "panic: the handler panicked") {
		t.Errorf("the child ended with %v, and printed:\n%s", err, out)
	}
}

// endPanicker is an Observer whose TaskEnded panics.
type endPanicker struct{}

func (endPanicker) TaskStarted(*taskqueue.Queue) {}

func (endPanicker) TaskEnded(*taskqueue.Queue, time.Duration, error) { panic("TaskEnded panicked") }

// TestObserverTaskEndedPanicGoesToTheHandler: a panic in an Observer's
// TaskEnded reaches the queue's panic handler, once per task, whether the
// task ran on a worker or on its caller, and the task's outcome stays.
func TestObserverTaskEndedPanicGoesToTheHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p testkit.Panics[*taskqueue.PanicError]
		q := taskqueue.NewSerial(taskqueue.WithObserver(endPanicker{}), taskqueue.WithPanicHandler(p.Add))
		ctx := t.Context()
		q.Go(func() {})
		synctest.Wait()
		if err := q.RunAsync(ctx, func(context.Context) error { return nil }).Wait(ctx); err != nil {
			t.Errorf("RunAsync's Wait = %v; want nil, the task's own outcome", err)
		}
		if err := q.RunSync(ctx, func(context.Context) error { return errors.New("own") }); err == nil || err.Error() != "own" {
			t.Errorf("RunSync = %v; want the function's own error", err)
		}
		q.Close()
		got := p.Take()
		if len(got) != 3 {
			t.Fatalf("the handler got %d panics; want 3, one per task", len(got))
		}
		for _, pe := range got {
			if pe.Value != "TaskEnded panicked" {
				t.Errorf("the handler got %v; want the Observer's panic", pe.Value)
			}
		}
		if s := q.Stats(); s.Succeeded != 2 || s.Failed != 1 || s.Panicked != 0 {
			t.Errorf("Stats() = %+v; want 2 succeeded, 1 failed, none panicked", s)
		}
	})
}
