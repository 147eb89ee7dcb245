package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestHammer submits about a million tasks from many goroutines, in every
// form, while tasks are canceled through their handles and contexts and the
// queue is closed (gracefully or at once) part way through. At the end:
//
//   - every task ran at most once, and a task with a handle ran exactly when
//     its handle reports no error; otherwise the handle reports a
//     cancellation, ErrClosed or ErrQueueFull;
//   - the queue's counts balance exactly: every submission ran, was canceled
//     or was refused;
//   - on a serial queue, each submitter's tasks ran in submission order.
func TestHammer(t *testing.T) {
	total := 1 << 20
	if testing.Short() {
		total = 1 << 16
	}
	cases := []struct {
		kind     queueKind
		closeNow bool
		opts     []taskqueue.Option
	}{
		{kinds[0], false, nil},
		{kinds[0], true, []taskqueue.Option{taskqueue.WithMaxQueued(512, taskqueue.WaitWhenFull)}},
		{kinds[2], true, nil},
		{kinds[2], false, []taskqueue.Option{taskqueue.WithMaxQueued(4096, taskqueue.FailWhenFull)}},
	}
	for i, c := range cases {
		name := fmt.Sprintf("%s/closeNow=%v/bounded=%v", c.kind.name, c.closeNow, c.opts != nil)
		t.Run(name, func(t *testing.T) {
			hammerQueue(t, c.kind, c.closeNow, c.opts, total/len(cases), uint64(i))
		})
	}
}

// hammerRecord follows one submitter's tasks.
type hammerRecord struct {
	runs       []atomic.Int32 // times each task ran
	lastRun    atomic.Int64   // the last immediate task of this submitter that ran, on a serial queue
	misordered atomic.Int32
}

func hammerQueue(t *testing.T, k queueKind, closeNow bool, opts []taskqueue.Option, total int, seed uint64) {
	const submitters = 8
	var p panics
	q := k.new(append(opts, p.handler())...)
	perSubmitter := total / submitters
	records := make([]*hammerRecord, submitters)
	var submitted atomic.Int64
	closeAt := int64(total * 9 / 10)
	var closeOnce sync.Once
	closeQueue := func() {
		if closeNow {
			q.CloseNow()
		} else {
			go q.Close() // it waits for the delayed tasks; Shutdown below waits for it
		}
	}

	var wg sync.WaitGroup
	for s := range submitters {
		rec := &hammerRecord{runs: make([]atomic.Int32, perSubmitter)}
		rec.lastRun.Store(-1)
		records[s] = rec
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(s)))
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
				case err == nil && ran == 1:
				case err != nil && ran == 0 && isRefusal(err):
				default:
					t.Errorf("submitter %d task %d: ran %d times, handle reports %v", s, p.n, ran, err)
				}
			}
			for n := range perSubmitter {
				if submitted.Add(1) == closeAt {
					closeOnce.Do(closeQueue)
				}
				immediate := true
				task := func(context.Context) error {
					rec.runs[n].Add(1)
					if k.serial && immediate {
						if last := rec.lastRun.Swap(int64(n)); last >= int64(n) {
							rec.misordered.Add(1)
						}
					}
					return nil
				}
				var h *taskqueue.Handle
				switch op := r.IntN(100); {
				case op < 30:
					if q.Go(func() { task(nil) }) != nil {
						continue
					}
				case op < 60:
					h = q.RunAsync(context.Background(), task)
				case op < 70:
					h = q.RunAsync(context.Background(), task)
					h.Cancel()
				case op < 80:
					ctx, cancel := context.WithCancel(context.Background())
					h = q.RunAsync(ctx, task)
					if r.IntN(2) == 0 {
						h.Done() // watch the context
					}
					cancel()
				case op < 88:
					immediate = false
					ctx, cancel := context.WithCancel(context.Background())
					h = q.RunAfter(ctx, time.Duration(r.IntN(50))*time.Microsecond, task)
					if r.IntN(4) == 0 {
						cancel()
					}
					defer cancel()
				case op < 92:
					h = q.RunBarrier(context.Background(), task)
				case op < 96:
					if err := q.RunSync(context.Background(), task); err != nil && !isRefusal(err) {
						t.Errorf("RunSync = %v", err)
					}
				default:
					f := taskqueue.RunAsync(context.Background(), q, func(ctx context.Context) (int, error) {
						return n, task(ctx)
					})
					h = &f.Handle
				}
				if h != nil {
					inFlight = append(inFlight, pending{h, n})
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
		})
	}
	wg.Wait()
	closeOnce.Do(closeQueue)
	if err := q.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	var ran uint64
	for s, rec := range records {
		for n := range rec.runs {
			switch c := rec.runs[n].Load(); c {
			case 0:
			case 1:
				ran++
			default:
				t.Errorf("submitter %d task %d ran %d times", s, n, c)
			}
		}
		if m := rec.misordered.Load(); m > 0 {
			t.Errorf("submitter %d: %d tasks ran before an earlier one", s, m)
		}
	}
	st := q.Stats()
	if st.Completed != ran {
		t.Errorf("Stats().Completed = %d; want %d, the tasks that ran", st.Completed, ran)
	}
	if got := st.Completed + st.Canceled + st.Rejected; got != uint64(submitted.Load()) {
		t.Errorf("completed %d + canceled %d + rejected %d = %d; want the %d submissions",
			st.Completed, st.Canceled, st.Rejected, got, submitted.Load())
	}
	if st.Queued != 0 || st.Delayed != 0 || st.Running != 0 || st.Panicked != 0 {
		t.Errorf("Stats() = %+v after Shutdown; want nothing queued, delayed, running or panicked", st)
	}
	if st.Canceled == 0 || st.Rejected == 0 {
		t.Errorf("Stats() = %+v; the hammer should have canceled and refused tasks", st)
	}
	t.Logf("%+v", st)
}

// isRefusal reports whether err says that a task did not run because it was
// canceled or refused.
func isRefusal(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, taskqueue.ErrClosed) || errors.Is(err, taskqueue.ErrQueueFull)
}
