package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// handleMachine checks a Handle's list of waiters against a plain model: the
// channel of Done is one channel, closed exactly when the task is done; each
// Wait's node is signaled once, at the finish; each callback runs once, at
// the finish or at once if the task is done; Err and IsDone agree.
type handleMachine struct {
	q        *taskqueue.Queue
	p        *taskqueue.HandleProbe
	done     <-chan struct{} // the channel of Done, once asked
	waits    []<-chan struct{}
	calls    []*int
	finished bool
	err      error
}

func (m *handleMachine) Done(t *rapid.T) {
	ch := m.p.Handle().Done()
	if m.done != nil && ch != m.done {
		t.Fatalf("Done returned two channels for one task (finished: %v)", m.finished)
	}
	if m.done == nil {
		m.done = ch
	}
}

func (m *handleMachine) Wait(t *rapid.T) {
	ch := m.p.PushWait()
	if (ch == nil) != m.finished {
		t.Fatalf("a Wait's node was refused = %v, with the task done = %v", ch == nil, m.finished)
	}
	if ch != nil {
		m.waits = append(m.waits, ch)
	}
}

func (m *handleMachine) Notify(t *rapid.T) {
	n := new(int)
	m.p.Notify(func() { *n++ })
	if m.finished && *n != 1 {
		t.Fatal("a callback added to a done task did not run at once")
	}
	m.calls = append(m.calls, n)
}

func (m *handleMachine) Finish(t *rapid.T) {
	if m.finished {
		t.Skip("a task finishes once")
	}
	var err error
	if rapid.Bool().Draw(t, "fails") {
		err = fmt.Errorf("failure %d", rapid.IntRange(0, 9).Draw(t, "n"))
	}
	watched := m.p.Finish(err)
	// The channel of Done watches nothing: whoever read it may have left.
	if want := len(m.waits) > 0 || len(m.calls) > 0; watched != want {
		t.Fatalf("Finish reported watched = %v; want %v", watched, want)
	}
	m.finished, m.err = true, err
}

func (m *handleMachine) Check(t *rapid.T) {
	h := m.p.Handle()
	if h.IsDone() != m.finished {
		t.Fatalf("IsDone = %v; want %v", h.IsDone(), m.finished)
	}
	if err := h.Err(); !errors.Is(err, m.err) || (err == nil) != (m.err == nil) {
		t.Fatalf("Err = %v; want %v", err, m.err)
	}
	if m.done != nil && testkit.IsClosed(m.done) != m.finished {
		t.Fatalf("Done's channel closed = %v with the task done = %v", testkit.IsClosed(m.done), m.finished)
	}
	for i, ch := range m.waits {
		select {
		case <-ch:
			if !m.finished {
				t.Fatalf("wait %d signaled before the finish", i)
			}
			m.waits[i] = closedSignal // received: it must never come again
		default:
			if m.finished && ch != closedSignal {
				t.Fatalf("wait %d not signaled after the finish", i)
			}
		}
	}
	for i, n := range m.calls {
		if want := 0; m.finished {
			want = 1
			if *n != want {
				t.Fatalf("callback %d ran %d times after the finish; want 1", i, *n)
			}
		} else if *n != want {
			t.Fatalf("callback %d ran %d times before the finish", i, *n)
		}
	}
}

// closedSignal stands for a wait's channel whose one signal was received.
var closedSignal = make(chan struct{})

// TestHandleModel runs random sequences of Done, Wait, callbacks and the
// finish on a handle, checking it against the model after every step.
func TestHandleModel(t *testing.T) {
	q := taskqueue.NewSerial()
	rapid.Check(t, func(t *rapid.T) {
		m := &handleMachine{q: q, p: taskqueue.NewHandleProbe(q)}
		t.Repeat(rapid.StateMachineActions(m))
	})
}

// TestWaitContextBoundsTheWait: Handle.Wait and Future.Wait return ctx.Err()
// when their context ends first, with the zero value; the task goes on, and
// its handle reports nil while pending.
func TestWaitContextBoundsTheWait(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		release := block(t, q)
		h := q.RunAsync(t.Context(), func(context.Context) error { return nil })
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := h.Wait(ctx); err != context.DeadlineExceeded {
			t.Errorf("Wait = %v; want DeadlineExceeded", err)
		}
		f := taskqueue.RunAsync(t.Context(), q, func(context.Context) (int, error) { return 1, nil })
		if v, err := f.Wait(ctx); v != 0 || err != context.DeadlineExceeded {
			t.Errorf("Result = %v, %v; want 0, DeadlineExceeded", v, err)
		}
		if h.Err() != nil {
			t.Errorf("Err() = %v while pending; want nil", h.Err())
		}
		release()
		if err := h.Wait(t.Context()); err != nil {
			t.Errorf("Wait after the queue freed = %v; want nil", err)
		}
	})
}

// TestContextDoneBeforeStart: a task whose context is done before it starts
// never runs: refused at submission, canceled at once when its handle is
// watched or IsDone looks, skipped when the queue reaches it; Stats counts
// those accepted as canceled.
func TestContextDoneBeforeStart(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		ran := false
		run := func(context.Context) error { ran = true; return nil }

		// Done at submission.
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := q.RunAsync(ctx, run).Err(); err != context.Canceled {
			t.Errorf("RunAsync with a canceled context: Err() = %v; want Canceled", err)
		}
		if err := q.RunSync(ctx, run); err != context.Canceled {
			t.Errorf("RunSync with a canceled context = %v; want Canceled", err)
		}

		// Done while queued: the handle completes without waiting for the
		// queue to reach the task.
		release := block(t, q)
		ctx, cancel = context.WithCancel(t.Context())
		h := q.RunAsync(ctx, run)
		done := h.Done()
		cancel()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("handle not done after its context was canceled")
		}
		if h.Err() != context.Canceled {
			t.Errorf("Err() = %v; want Canceled", h.Err())
		}
		if s := q.Stats(); s.Queued != 0 {
			t.Errorf("Stats().Queued = %d with the only queued task canceled; want 0", s.Queued)
		}

		// Done while queued, and seen first by IsDone: canceled at once too,
		// while the queue is still busy.
		ctx, cancel = context.WithCancel(t.Context())
		h = q.RunAsync(ctx, run)
		cancel()
		synctest.Wait()
		if !h.IsDone() || h.Err() != context.Canceled {
			t.Errorf("IsDone() = %v, Err() = %v after the context of a queued task ended; want true, Canceled", h.IsDone(), h.Err())
		}
		if s := q.Stats(); s.Queued != 0 {
			t.Errorf("Stats().Queued = %d with the only queued task canceled; want 0", s.Queued)
		}

		// Done while queued, with nobody watching: the queue skips it.
		ctx, cancel = context.WithCancel(t.Context())
		h = q.RunAsync(ctx, run)
		cancel()
		release()
		if err := h.Wait(t.Context()); err != context.Canceled {
			t.Errorf("Wait = %v; want Canceled", err)
		}
		synctest.Wait()
		if ran {
			t.Error("a task whose context was done before it started ran")
		}
		// The tasks refused at submission are not counted.
		if s := q.Stats(); s.Canceled != 3 || s.Completed != uint64(q.Stats().Limit) {
			t.Errorf("Stats() = %+v; want 3 canceled and %d completed (the blockers)", s, q.Stats().Limit)
		}
	})
}

// TestCancel: Cancel of a queued task reports true once and the task never
// runs; Cancel of a started task reports false; Stats counts the canceled
// task.
func TestCancel(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		release := block(t, q)
		ran := false
		h := q.RunAsync(t.Context(), func(context.Context) error { ran = true; return nil })
		if !h.Cancel() {
			t.Error("Cancel of a queued task = false; want true")
		}
		if h.Cancel() {
			t.Error("second Cancel = true; want false")
		}
		if h.Err() != context.Canceled {
			t.Errorf("Err() = %v; want Canceled", h.Err())
		}
		started := make(chan struct{})
		running := q.RunBarrier(t.Context(), func(context.Context) error { close(started); return nil })
		release()
		<-started
		if running.Cancel() {
			t.Error("Cancel of a started task = true; want false")
		}
		running.Wait(t.Context())
		synctest.Wait()
		if ran {
			t.Error("canceled task ran")
		}
		if s := q.Stats(); s.Queued != 0 || s.Canceled != 1 {
			t.Errorf("Stats() = %+v; want 0 queued, 1 canceled", s)
		}
	})
}

// TestCancelRacesTheStart: Cancel, racing the start of its task on real
// time, reports true exactly when the task never runs.
func TestCancelRacesTheStart(t *testing.T) {
	q := taskqueue.NewConcurrent(2)
	ctx := context.Background()
	for range 3000 {
		var ran atomic.Int32
		h := q.RunAsync(ctx, func(context.Context) error { ran.Add(1); return nil })
		ok := h.Cancel()
		if err := h.Wait(ctx); ok {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Cancel true, Err %v", err)
			}
		} else if err != nil {
			t.Fatalf("Cancel false, Err %v", err)
		}
		if err := q.RunSync(ctx, func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
		// Wait for the queue to settle: a barrier after it.
		if err := q.RunBarrier(ctx, func(context.Context) error { return nil }).Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if ok && ran.Load() != 0 {
			t.Fatalf("Cancel returned true but the task ran")
		}
		if !ok && ran.Load() != 1 {
			t.Fatalf("Cancel returned false but the task ran %d times", ran.Load())
		}
		if h.Cancel() {
			t.Fatalf("second Cancel returned true")
		}
	}
	q.Close()
}

// TestHandleDoneAndWaitsRace: Done, Wait with and without a context, and
// IsDone on one handle from several goroutines while other handles come and
// go (the race detector saw a pooled node of the handle's list reused).
func TestHandleDoneAndWaitsRace(t *testing.T) {
	q := taskqueue.NewConcurrent(2)
	ctx := context.Background()
	for round := range 200 {
		gate := make(chan struct{})
		h := q.RunAsync(ctx, func(context.Context) error { <-gate; return nil })
		h.Done()
		var wg sync.WaitGroup
		wg.Go(func() {
			h.Wait(ctx)
			q.RunAsync(ctx, func(context.Context) error { return nil }).Wait(ctx)
		})
		wg.Go(func() {
			c, cancel := context.WithCancel(ctx)
			defer cancel()
			h.Wait(c)
		})
		wg.Go(func() {
			for !h.IsDone() {
				h.Done()
				runtime.Gosched() // lets the other goroutines run where all share one thread (js/wasm)
			}
		})
		wg.Go(func() {
			h.Then(ctx, q, func(context.Context) error { return nil }).Wait(ctx)
		})
		if round%2 == 0 {
			close(gate)
		} else {
			go close(gate)
		}
		wg.Wait()
		select {
		case <-h.Done():
		default:
			t.Fatal("Done is not closed once the task is done")
		}
	}
	q.Close()
}

// TestCoroutineWaitsForAHandleCanceledByItsContext: loom.Waitable says "IsDone
// must then report true once the Done channel would be closed", and
// Handle.Done: "When the task's context is done before the task
// starts, the task is canceled and the channel closed without waiting for the
// queue to reach the task." A coroutine waiting for such a handle must resume
// while the queue is still busy.
func TestCoroutineWaitsForAHandleCanceledByItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		block := make(chan struct{})
		q.Go(func() { <-block })
		ctx, cancel := context.WithCancel(context.Background())
		h := q.RunAsync(ctx, func(context.Context) error { return nil })
		l := loom.New(loom.ManualClock())
		resumed := false
		l.StartCoroutine(func(yield func(loom.Instruction) bool) {
			if yield(loom.WaitFor(h)) {
				resumed = true
			}
		})
		l.UpdateDelta(time.Millisecond)
		cancel()
		synctest.Wait()
		for range 5 {
			l.UpdateDelta(time.Millisecond)
		}
		if !resumed {
			// The channel form would be closed: show it.
			d := h.Done()
			synctest.Wait()
			select {
			case <-d:
				t.Errorf("coroutine waiting with WaitFor(handle) did not resume after the handle's context ended, though Done() is closed (IsDone %v)", h.IsDone())
			default:
				t.Errorf("handle not done after its context ended")
			}
		}
		close(block)
		q.Close()
		l.Close()
	})
}

// TestHandleMisuse: the zero Handle is not usable; its methods panic, saying
// where handles come from.
func TestHandleMisuse(t *testing.T) {
	var zero taskqueue.Handle
	const zeroHandle = "taskqueue: use of a zero Handle; handles are made by a queue's RunAsync, RunAfter and RunBarrier"
	checkMisuses(t, []misuse{
		{"Wait", func() { zero.Wait(context.Background()) }, zeroHandle},
		{"Done", func() { zero.Done() }, zeroHandle},
		{"Err", func() { zero.Err() }, zeroHandle},
		{"IsDone", func() { zero.IsDone() }, zeroHandle},
		{"Cancel", func() { zero.Cancel() }, zeroHandle},
	})
}

// TestWaitAllocatesNothing: waiting for a task costs no allocation when
// neither context can be done, whether the task is done already or Wait
// blocks until it is (a helper goroutine ends the task once the fake clock
// shows that everything, Wait included, is blocked): a task submitted and
// waited for allocates what RunAsync alone does, one.
func TestWaitAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	for _, q := range []*taskqueue.Queue{taskqueue.NewSerial(), taskqueue.NewConcurrent(4)} {
		if a := testing.AllocsPerRun(100, func() { q.RunAsync(ctx, nop).Wait(ctx) }); a != 1 {
			t.Errorf("limit %d: RunAsync and Wait allocate %v times a call; want 1, RunAsync's", q.Stats().Limit, a)
		}
		q.Close()
	}
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		started, gate, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
		go func() {
			for {
				select {
				case <-started:
				case <-stop:
					return
				}
				time.Sleep(time.Second) // passes once Wait blocks
				gate <- struct{}{}
			}
		}()
		task := func(context.Context) error { started <- struct{}{}; <-gate; return nil }
		var blocked time.Duration
		a := testing.AllocsPerRun(100, func() {
			start := time.Now()
			q.RunAsync(ctx, task).Wait(ctx)
			blocked += time.Since(start)
		})
		close(stop)
		if a != 1 {
			t.Errorf("RunAsync and a Wait that blocks allocate %v times a call; want 1, RunAsync's", a)
		}
		if blocked != 101*time.Second {
			t.Errorf("the waits blocked %v in all; want 101s, a second each", blocked)
		}
		q.Close()
	})
}

// TestDoneOfATaskWhoseContextEndedIsClosed: once a queued task's context is
// done, the first call that looks at its handle cancels the task, and Done
// is one of them: the channel it returns is closed already, as IsDone would
// report, with no wait for the queue to reach the task or for another
// goroutine to see the context's end.
func TestDoneOfATaskWhoseContextEndedIsClosed(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		q := k.new()
		release := block(t, q)
		for round := range 100 {
			ctx, cancel := context.WithCancel(t.Context())
			h := q.RunAsync(ctx, nop)
			cancel()
			if !testkit.IsClosed(h.Done()) {
				t.Errorf("round %d: Done() of a queued task whose context had ended returned an open channel; IsDone() then = %v", round, h.IsDone())
				break
			}
			if err := h.Err(); err != context.Canceled {
				t.Errorf("round %d: Err() = %v once Done was closed; want Canceled", round, err)
				break
			}
		}
		release()
	})
}

// TestDoneReturnsTheSameChannel: every call of Done returns the same
// channel, before the task is done and after, however it ends: it returns,
// fails, is canceled (by Cancel or by its context, queued or delayed), or
// follows a task as a continuation.
func TestDoneReturnsTheSameChannel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewSerial()
		release := block(t, q)
		ctx, cancel := context.WithCancel(t.Context())
		fail := func(context.Context) error { return errors.New("failed") }
		prev := q.RunAsync(t.Context(), nop)
		handles := map[string]*taskqueue.Handle{
			"returns":                  q.RunAsync(t.Context(), nop),
			"fails":                    q.RunAsync(t.Context(), fail),
			"canceled by Cancel":       q.RunAsync(t.Context(), nop),
			"canceled by its context":  q.RunAsync(ctx, nop),
			"delayed":                  q.RunAfter(t.Context(), time.Second, nop),
			"delayed, canceled":        q.RunAfter(t.Context(), time.Hour, nop),
			"a barrier":                q.RunBarrier(t.Context(), nop),
			"a continuation":           prev.Then(t.Context(), q, nop),
			"a continuation, canceled": prev.Then(t.Context(), q, nop),
		}
		first := map[string]<-chan struct{}{}
		for name, h := range handles {
			first[name] = h.Done()
		}
		handles["canceled by Cancel"].Cancel()
		handles["delayed, canceled"].Cancel()
		handles["a continuation, canceled"].Cancel()
		cancel()
		release()
		time.Sleep(time.Second)
		synctest.Wait()
		for name, h := range handles {
			if !h.IsDone() {
				t.Errorf("%s: not done", name)
				continue
			}
			if got := h.Done(); got != first[name] || !testkit.IsClosed(got) {
				t.Errorf("%s: Done() after the end is another channel than before (or open)", name)
			}
		}
		q.Close()
	})
}

// TestDoneIsClosedOnceIsDone: the channel of Done, asked for while the task
// was pending, is closed by the time anyone sees the task done: the
// outcome keeps it, and whoever finds the outcome first closes it, the
// finisher or a Done racing with it.
func TestDoneIsClosedOnceIsDone(t *testing.T) {
	q := taskqueue.NewConcurrent(2)
	ctx := context.Background()
	for round := range 2000 {
		gate := make(chan struct{})
		h := q.RunAsync(ctx, func(context.Context) error { <-gate; return nil })
		first := h.Done()
		seen := make(chan bool)
		go func() {
			for !h.IsDone() {
				runtime.Gosched()
			}
			seen <- testkit.IsClosed(h.Done())
		}()
		close(gate)
		if !<-seen {
			t.Fatalf("round %d: Done() returned an open channel once IsDone reported true", round)
		}
		if h.Done() != first {
			t.Fatalf("round %d: Done() returned another channel once the task was done", round)
		}
	}
	q.Close()
}
