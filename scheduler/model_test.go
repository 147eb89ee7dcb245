package scheduler_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// modelItem is a Task of the model test: it records its start, then runs
// the functions sent to it on its goroutine until released.
type modelItem struct {
	barrier bool
	ended   bool // in the reference: finished or dequeued
	id      scheduler.ID
	release chan struct{}
	do      chan func()
	started atomic.Bool
}

func newModelItem(barrier bool) *modelItem {
	return &modelItem{barrier: barrier, release: make(chan struct{}), do: make(chan func())}
}

func (m *modelItem) Run() {
	m.started.Store(true)
	for {
		select {
		case f := <-m.do:
			f()
		case <-m.release:
			return
		}
	}
}

// onItem runs f on the goroutine of the running item m and waits for it.
func (m *modelItem) onItem(f func()) {
	done := make(chan struct{})
	m.do <- func() { defer close(done); f() }
	<-done
}

// liveGoroutines returns the IDs of the goroutines alive now.
func liveGoroutines() map[uint64]bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	live := map[uint64]bool{}
	for _, line := range strings.Split(string(buf), "\n") {
		if rest, ok := strings.CutPrefix(line, "goroutine "); ok {
			if id, err := strconv.ParseUint(strings.Fields(rest)[0], 10, 64); err == nil {
				live[id] = true
			}
		}
	}
	return live
}

// checkBooks fails if the slot books of s are wrong: a goroutine holding
// two slots, more records than slots, or a holder that has exited.
func checkBooks(t *testing.T, s *scheduler.Scheduler, step int, what string) []uint64 {
	t.Helper()
	holders, problem := s.Books()
	if problem != "" {
		t.Fatalf("step %d (%s): slot books: %s", step, what, problem)
	}
	live := liveGoroutines()
	for _, g := range holders {
		if !live[g] {
			t.Fatalf("step %d (%s): slot books: goroutine %d holds a slot and has exited", step, what, g)
		}
	}
	return holders
}

// refScheduler is the trivially correct reference: a FIFO slice of waiting
// items and the set of running ones, advanced by the rules of the contract.
type refScheduler struct {
	limit     int
	queue     []*modelItem
	running   []*modelItem
	exclusive bool
}

// advance starts what the contract says starts: the head of the queue while
// a slot is free; a barrier only when nothing runs, and then alone.
func (r *refScheduler) advance() {
	for len(r.queue) > 0 && !r.exclusive {
		h := r.queue[0]
		if h.barrier {
			if len(r.running) > 0 {
				return
			}
			r.exclusive = true
		} else if len(r.running) >= r.limit {
			return
		}
		r.queue = r.queue[1:]
		r.running = append(r.running, h)
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// checkScheduler runs the operations encoded in ops on a Scheduler and on the
// reference, inside a synctest bubble so that every step is observed once the
// scheduler's goroutines are quiet, and fails at the first difference.
func checkScheduler(t *testing.T, limit int, ops []byte) {
	synctest.Test(t, func(t *testing.T) {
		var panics atomic.Int32
		s := scheduler.New(limit, scheduler.WithPanicHandler(func(*scheduler.PanicError) { panics.Add(1) }))
		ref := &refScheduler{limit: limit}
		wantPanics := int32(0)
		var items []*modelItem
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%8, int(ops[i+1])
			what := ""
			switch op {
			case 0, 1: // enqueue an item, or a barrier one time in four
				it := newModelItem(op == 1 && arg%4 == 0)
				var task scheduler.Task = it
				if it.barrier {
					task = scheduler.Barrier(it)
				}
				id, err := s.Enqueue(task)
				if err != nil {
					t.Fatalf("step %d: Enqueue: %v", i, err)
				}
				it.id = id
				items = append(items, it)
				ref.queue = append(ref.queue, it)
				what = fmt.Sprintf("enqueue %d (barrier %v)", len(items)-1, it.barrier)
			case 2, 6: // finish a running item: return, panic or Goexit
				if len(ref.running) == 0 {
					continue
				}
				k := arg % len(ref.running)
				it := ref.running[k]
				switch {
				case op == 2:
					close(it.release)
				case arg%2 == 0:
					it.do <- func() { close(it.release); panic("model") }
					wantPanics++
				default:
					it.do <- func() { close(it.release); runtime.Goexit() }
				}
				ref.running = slices.Delete(ref.running, k, k+1)
				it.ended = true
				if it.barrier {
					ref.exclusive = false
				}
				what = fmt.Sprintf("finish item %d", slices.Index(items, it))
			case 3: // dequeue any item ever enqueued
				if len(items) == 0 {
					continue
				}
				it := items[arg%len(items)]
				k := slices.Index(ref.queue, it)
				if got, want := s.TryDequeue(it.id), k >= 0; got != want {
					t.Fatalf("step %d: TryDequeue(item %d) = %v; want %v", i, arg%len(items), got, want)
				}
				if k >= 0 {
					ref.queue = slices.Delete(ref.queue, k, k+1)
					it.ended = true
				}
				what = fmt.Sprintf("dequeue item %d", arg%len(items))
			case 4: // try to run on the caller
				ran := false
				got := s.TryRun(scheduler.Func(func() {
					ran = true
					checkBooks(t, s, i, "inside TryRun")
				}))
				want := !ref.exclusive && len(ref.queue) == 0 && len(ref.running) < limit
				if got != want || ran != got {
					t.Fatalf("step %d: TryRun = %v (ran %v); want %v", i, got, ran, want)
				}
				what = "try run"
			case 5, 7: // from a running item: TryRun runs in its place, and Holds
				if len(ref.running) == 0 {
					continue
				}
				it := ref.running[arg%len(ref.running)]
				var holds, ran, got bool
				it.onItem(func() {
					holds = s.Holds()
					got = s.TryRun(func() {
						ran = true
						checkBooks(t, s, i, "inside TryRun in place")
						// TryRun again, from the function run in place.
						s.TryRun(func() {})
					})
				})
				if !holds || !got || !ran {
					t.Fatalf("step %d: from a running item, Holds = %v, TryRun = %v (ran %v); want true, true, true", i, holds, got, ran)
				}
				what = "try run in place"
			}
			ref.advance()
			synctest.Wait()
			for k, it := range items {
				// An item has started if it runs, or if it ended and was not
				// dequeued (a dequeued one must never start).
				want := slices.Contains(ref.running, it) || (it.ended && isClosed(it.release))
				if got := it.started.Load(); got != want {
					t.Fatalf("step %d (%s): item %d started = %v; want %v\nqueue %d, running %d",
						i, what, k, got, want, len(ref.queue), len(ref.running))
				}
			}
			if got, want := s.Stats().Running, len(ref.running); got != want {
				t.Fatalf("step %d (%s): Running() = %d; want %d", i, what, got, want)
			}
			if got, want := s.Stats().Pending, len(ref.queue); got != want {
				t.Fatalf("step %d (%s): Pending() = %d; want %d", i, what, got, want)
			}
			if got, want := s.Active(), len(ref.running); got != want {
				t.Fatalf("step %d (%s): Active() = %d workers; want %d", i, what, got, want)
			}
			if holders := checkBooks(t, s, i, what); len(holders) != len(ref.running) {
				t.Fatalf("step %d (%s): %d slot holders for %d running items", i, what, len(holders), len(ref.running))
			}
			if got := panics.Load(); got != wantPanics {
				t.Fatalf("step %d (%s): %d panics reached the handler; want %d", i, what, got, wantPanics)
			}
		}
		// Let everything finish, so that the bubble ends with no goroutine.
		for _, it := range items {
			if !isClosed(it.release) {
				close(it.release)
			}
		}
		if err := s.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzScheduler(f *testing.F) {
	f.Add(uint8(1), []byte{0, 0, 0, 0, 2, 0, 3, 1, 4, 0, 2, 0})
	f.Add(uint8(3), []byte{0, 0, 1, 0, 0, 0, 2, 1, 2, 0, 4, 0, 2, 0})
	f.Fuzz(func(t *testing.T, limit uint8, ops []byte) {
		checkScheduler(t, int(limit%4)+1, ops[:min(len(ops), 400)])
	})
}

// TestSchedulerModelRandom runs random operation sequences against the
// reference, so that plain go test covers what the fuzzer explores.
func TestSchedulerModelRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	runs := 60
	if raceEnabled {
		runs = 20 // each step lists the goroutines: slow under the race detector
	}
	for i := range runs {
		ops := make([]byte, 300)
		for k := range ops {
			ops[k] = byte(r.UintN(256))
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			checkScheduler(t, i%4+1, ops)
		})
	}
}
