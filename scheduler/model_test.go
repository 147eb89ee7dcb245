package scheduler_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// modelItem is a Task of the model test: it records its start and blocks
// until released.
type modelItem struct {
	barrier bool
	ended   bool // in the reference: finished or dequeued
	id      scheduler.ID
	release chan struct{}
	started atomic.Bool
}

func (m *modelItem) Run() {
	m.started.Store(true)
	<-m.release
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
		s := scheduler.New(limit)
		ref := &refScheduler{limit: limit}
		var items []*modelItem
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%5, int(ops[i+1])
			what := ""
			switch op {
			case 0, 1: // enqueue an item, or a barrier one time in four
				it := &modelItem{barrier: op == 1 && arg%4 == 0, release: make(chan struct{})}
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
			case 2: // finish a running item
				if len(ref.running) == 0 {
					continue
				}
				k := arg % len(ref.running)
				it := ref.running[k]
				close(it.release)
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
				got := s.TryRun(scheduler.Func(func() { ran = true }))
				want := !ref.exclusive && len(ref.queue) == 0 && len(ref.running) < limit
				if got != want || ran != got {
					t.Fatalf("step %d: TryRun = %v (ran %v); want %v", i, got, ran, want)
				}
				what = "try run"
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
	for i := range 60 {
		ops := make([]byte, 300)
		for k := range ops {
			ops[k] = byte(r.UintN(256))
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			checkScheduler(t, i%4+1, ops)
		})
	}
}
