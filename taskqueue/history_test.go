package taskqueue_test

// Linearizability of histories: concurrent operations on a queue, a keyed
// lane and a group, recorded with their times, checked against sequential
// models with porcupine. A task's start is observed inside its function,
// after the scheduler took it, so a start is an interval from the task's
// submission (before which it cannot start) to that observation; an end is
// observed inside the function too, before the slot is freed, which only
// makes the next start later.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// The operations of a queue's history.
type qop struct {
	kind string // "submit", "start", "end", "cancel", "closeNow"
	key  int    // the lane, for keyed histories; 0 otherwise
	id   int
}

type qout struct {
	ok     bool // cancel succeeded
	closed bool // submit: the task never ran and its handle reports ErrClosed
	n      int  // closeNow's count
}

// qstate is the state of the sequential model of one queue (one lane): the
// tasks queued, in order, those running, and whether it is closed.
type qstate struct {
	pending []int
	running []int
	closed  bool
}

func (s qstate) equal(o qstate) bool {
	return slices.Equal(s.pending, o.pending) && slices.Equal(s.running, o.running) && s.closed == o.closed
}

// queueModel is the model of a queue that runs at most limit tasks at once,
// starting them in submission order.
func queueModel(limit int) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return qstate{} },
		Step: func(state, input, output any) (bool, any) {
			s := state.(qstate)
			in, out := input.(qop), output.(qout)
			switch in.kind {
			case "submit":
				// After CloseNow a submission is refused with ErrClosed;
				// before, it is accepted, and CloseNow may drop it later
				// with that same error.
				if s.closed {
					return out.closed, s
				}
				return true, qstate{append(slices.Clone(s.pending), in.id), s.running, s.closed}
			case "start":
				if len(s.pending) == 0 || s.pending[0] != in.id || len(s.running) >= limit {
					return false, s
				}
				return true, qstate{slices.Clone(s.pending[1:]), append(slices.Clone(s.running), in.id), s.closed}
			case "end":
				i := slices.Index(s.running, in.id)
				if i < 0 {
					return false, s
				}
				return true, qstate{s.pending, slices.Delete(slices.Clone(s.running), i, i+1), s.closed}
			case "cancel":
				i := slices.Index(s.pending, in.id)
				if (i >= 0) != out.ok {
					return false, s
				}
				if i < 0 {
					return true, s
				}
				return true, qstate{slices.Delete(slices.Clone(s.pending), i, i+1), s.running, s.closed}
			case "closeNow":
				if out.n != len(s.pending) {
					return false, s
				}
				return true, qstate{nil, s.running, true}
			}
			return false, s
		},
		Equal: func(a, b any) bool { return a.(qstate).equal(b.(qstate)) },
		DescribeOperation: func(input, output any) string {
			in, out := input.(qop), output.(qout)
			return fmt.Sprintf("%s(%d/%d) -> %v", in.kind, in.key, in.id, out)
		},
		Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
			byKey := map[int][]porcupine.Operation{}
			var keys []int
			for _, op := range h {
				k := op.Input.(qop).key
				if _, ok := byKey[k]; !ok {
					keys = append(keys, k)
				}
				byKey[k] = append(byKey[k], op)
			}
			var parts [][]porcupine.Operation
			for _, k := range keys {
				parts = append(parts, byKey[k])
			}
			return parts
		},
	}
}

// historyRecorder collects a history, with times from one monotonic clock.
type historyRecorder struct {
	base time.Time
	mu   sync.Mutex
	ops  []porcupine.Operation
}

func (r *historyRecorder) now() int64 { return int64(time.Since(r.base)) }

// add records an operation and returns its index in the history.
func (r *historyRecorder) add(client int, in qop, out qout, call, ret int64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: ret})
	return len(r.ops) - 1
}

// queueHistory runs subs submitters of perSub tasks each on a queue made by
// submit (per key, for keyed queues), with cancels and, if closeNow, one
// CloseNow part-way, and returns the history and the handles' outcomes.
func queueHistory(r *rand.Rand, subs, perSub, keys int, closeNow bool,
	run func(ctx context.Context, key int, f func(context.Context) error) *taskqueue.Handle,
	cancelAll func() int) ([]porcupine.Operation, error) {
	rec := &historyRecorder{base: time.Now()}
	type task struct {
		h        *taskqueue.Handle
		canceled bool
		ran      atomic.Bool
		submit   int // its submit operation in the history
	}
	tasks := make([]*task, subs*perSub)
	var wg sync.WaitGroup
	var closeOnce sync.Once
	closed := atomic.Bool{}
	var closeN int
	seeds := make([]uint64, subs)
	for i := range seeds {
		seeds[i] = r.Uint64()
	}
	for s := range subs {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seeds[s], 7))
			for i := range perSub {
				id := s*perSub + i
				key := 0
				if keys > 1 {
					key = r.IntN(keys)
				}
				tk := &task{}
				tasks[id] = tk
				spin := r.IntN(3)
				call := rec.now()
				tk.h = run(context.Background(), key, func(context.Context) error {
					tk.ran.Store(true)
					rec.add(subs+1, qop{"start", key, id}, qout{}, call, rec.now())
					for range spin * 100 {
						_ = rand.Int()
					}
					at := rec.now()
					rec.add(subs+1, qop{"end", key, id}, qout{}, at, at)
					return nil
				})
				tk.submit = rec.add(s, qop{"submit", key, id}, qout{}, call, rec.now())
				if r.IntN(4) == 0 {
					c := rec.now()
					ok := tk.h.Cancel()
					tk.canceled = ok
					rec.add(s, qop{"cancel", key, id}, qout{ok: ok}, c, rec.now())
				}
				if closeNow && s == 0 && i == perSub/2 {
					closeOnce.Do(func() {
						c := rec.now()
						closeN = cancelAll()
						closed.Store(true)
						rec.add(subs, qop{"closeNow", 0, -1}, qout{n: closeN}, c, rec.now())
					})
				}
			}
		})
	}
	wg.Wait()
	// Every task has ended once its handle is done: nothing adds to the
	// history after these waits.
	for _, tk := range tasks {
		tk.h.Wait(context.Background())
	}
	for id, tk := range tasks {
		err := tk.h.Err()
		switch {
		case tk.ran.Load() && err != nil:
			return nil, fmt.Errorf("task %d ran and its handle reports %v", id, err)
		case tk.canceled && !errors.Is(err, context.Canceled):
			return nil, fmt.Errorf("task %d was canceled and its handle reports %v", id, err)
		case !tk.ran.Load() && err == nil:
			return nil, fmt.Errorf("task %d never ran and its handle reports success", id)
		}
		rec.ops[tk.submit].Output = qout{closed: !tk.ran.Load() && errors.Is(err, taskqueue.ErrClosed)}
	}
	return rec.ops, nil
}

// checkHistory fails t, logging the history in call order, if porcupine
// finds it not linearizable under model, and reports whether the check
// ended with a verdict: it gives up on a history after three seconds.
func checkHistory(t *testing.T, model porcupine.Model, ops []porcupine.Operation) (checked bool) {
	t.Helper()
	res := porcupine.CheckOperationsTimeout(model, ops, 3*time.Second)
	switch res {
	case porcupine.Illegal:
		sorted := slices.Clone(ops)
		slices.SortFunc(sorted, func(a, b porcupine.Operation) int { return int(a.Call - b.Call) })
		for _, op := range sorted {
			t.Logf("[%6d %6d] %s", op.Call/1000, op.Return/1000, model.DescribeOperation(op.Input, op.Output))
		}
		t.Fatalf("history of %d operations is not linearizable", len(ops))
	case porcupine.Unknown:
		t.Logf("the check of a history of %d operations gave up", len(ops))
		return false
	}
	return true
}

// checkedEnough fails t unless all but a few of runs histories were checked
// to a verdict: a check that gives up proves nothing.
func checkedEnough(t *testing.T, checked, runs int) {
	t.Helper()
	if checked < runs-runs/50 {
		t.Errorf("%d of %d histories checked to a verdict; want all but %d", checked, runs, runs/50)
	}
}

// historyRuns is how many histories each test records and checks.
func historyRuns() int {
	if testing.Short() {
		return 50
	}
	return 250
}

// historyTasks is how many tasks each of a history's three submitters
// submits. The check's search grows steeply with the operations that
// overlap in a history: with 12 tasks a submitter, one serial history in
// 60 to 300 took more than 10 s to check, and the check gave up, having
// checked nothing, while with 6 one in several thousand takes a second,
// none ten.
const historyTasks = 6

// TestSerialQueueHistories: submissions, cancels, CloseNow and the starts
// and ends of tasks on a serial queue form linearizable histories of a FIFO
// that runs one task at a time.
func TestSerialQueueHistories(t *testing.T) {
	queueHistories(t, 1, taskqueue.NewSerial)
}

// TestConcurrentQueueHistories: the same on a queue of limit 3: at most 3
// run at once, started in submission order.
func TestConcurrentQueueHistories(t *testing.T) {
	queueHistories(t, 3, func(opts ...taskqueue.Option) *taskqueue.Queue { return taskqueue.NewConcurrent(3, opts...) })
}

func queueHistories(t *testing.T, limit int, newQueue func(...taskqueue.Option) *taskqueue.Queue) {
	checkHistories(t, rand.New(rand.NewPCG(uint64(limit), 11)), 1, queueModel(limit), func(i int) historySubject {
		q := newQueue()
		s := historySubject{run: func(ctx context.Context, _ int, f func(context.Context) error) *taskqueue.Handle {
			return q.RunAsync(ctx, f)
		}, close: q.Close}
		if i%2 == 0 {
			s.closeNow = q.CloseNow
		}
		return s
	})
}

// A historySubject is what a history is recorded on: run submits a task
// (to a key's lane), closeNow, if not nil, is called part-way, and close
// ends the subject.
type historySubject struct {
	run      func(ctx context.Context, key int, f func(context.Context) error) *taskqueue.Handle
	closeNow func() int
	close    func() error
}

// checkHistories records historyRuns histories of tasks over keys lanes,
// each on the i-th subject made by subject, and checks each against model;
// it fails t if a history is not linearizable, or if too few came to a
// verdict.
func checkHistories(t *testing.T, r *rand.Rand, keys int, model porcupine.Model, subject func(i int) historySubject) {
	t.Helper()
	ops, checked := 0, 0
	for i := range historyRuns() {
		s := subject(i)
		h, err := queueHistory(r, 3, historyTasks, keys, s.closeNow != nil, s.run, s.closeNow)
		if err != nil {
			t.Fatal(err)
		}
		if checkHistory(t, model, h) {
			checked++
		}
		ops += len(h)
		if err := s.close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d histories, %d operations, %d checked to a verdict", historyRuns(), ops, checked)
	checkedEnough(t, checked, historyRuns())
}

// TestKeyedLaneHistories: on keyed lanes over a target of limit 2, each
// key's operations form a linearizable history of a serial queue.
func TestKeyedLaneHistories(t *testing.T) {
	checkHistories(t, rand.New(rand.NewPCG(5, 11)), 3, queueModel(1), func(int) historySubject {
		target := taskqueue.NewConcurrent(2)
		k := taskqueue.NewKeyed[int](target)
		return historySubject{run: k.RunAsync, close: target.Close}
	})
}

// TestHistoryCheckCanFail: a history that breaks the model is found
// illegal: the check is not one that passes whatever it is given.
func TestHistoryCheckCanFail(t *testing.T) {
	ops := []porcupine.Operation{
		{Input: qop{"submit", 0, 1}, Output: qout{}, Call: 0, Return: 1},
		{Input: qop{"submit", 0, 2}, Output: qout{}, Call: 2, Return: 3},
		{Input: qop{"start", 0, 2}, Output: qout{}, Call: 4, Return: 5}, // out of order
		{Input: qop{"start", 0, 1}, Output: qout{}, Call: 6, Return: 7},
	}
	if porcupine.CheckOperations(queueModel(2), ops) {
		t.Error("a history that starts the second task first checked as linearizable")
	}
	ops[2], ops[3] = ops[3], ops[2]
	ops[2].Call, ops[2].Return, ops[3].Call, ops[3].Return = 4, 5, 6, 7
	if !porcupine.CheckOperations(queueModel(2), ops) {
		t.Error("a history in order checked as not linearizable")
	}
}
