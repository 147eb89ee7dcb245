package taskqueue_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/taskqueue"
)

func quietQueue(n int) *taskqueue.Queue {
	if n == 1 {
		return taskqueue.NewSerial(taskqueue.WithPanicHandler(func(*taskqueue.PanicError) {}))
	}
	return taskqueue.NewConcurrent(n, taskqueue.WithPanicHandler(func(*taskqueue.PanicError) {}))
}

func TestGroupJoinsEveryErrorInOrder(t *testing.T) {
	q := quietQueue(4)
	defer q.Close()
	g := taskqueue.NewGroup(context.Background(), q)
	var ran atomic.Int32
	for i := range 20 {
		g.Go(func(context.Context) error {
			ran.Add(1)
			switch i {
			case 3, 11:
				return fmt.Errorf("member %d", i)
			case 7:
				panic("member 7 panics")
			}
			return nil
		})
	}
	err := g.Wait()
	if ran.Load() != 20 {
		t.Fatalf("%d members ran, want 20: without WithCancelOnError every member runs", ran.Load())
	}
	var pe *taskqueue.PanicError
	if !errors.As(err, &pe) || !strings.Contains(pe.Error(), "member 7 panics") {
		t.Errorf("Wait() = %v; want it to hold member 7's *PanicError", err)
	}
	msg := err.Error()
	if i3, i11 := strings.Index(msg, "member 3"), strings.Index(msg, "member 11"); i3 < 0 || i11 < 0 || i3 > i11 {
		t.Errorf("Wait() = %q; want members 3 and 11, in submission order", msg)
	}
	if err := taskqueue.NewGroup(context.Background(), q).Wait(); err != nil {
		t.Errorf("an empty group's Wait() = %v", err)
	}
}

// After a member fails, no member that had not started runs: on a serial
// queue, that is every member after it.
func TestGroupCancelOnErrorStopsTheRest(t *testing.T) {
	for round := range 200 {
		q := quietQueue(1)
		g := taskqueue.NewGroup(context.Background(), q).WithCancelOnError()
		fail := rand.IntN(50)
		boom := fmt.Errorf("member %d failed", fail)
		var last atomic.Int32
		last.Store(-1)
		for i := range 50 {
			g.Go(func(context.Context) error {
				last.Store(int32(i))
				if i == fail {
					return boom
				}
				return nil
			})
		}
		if err := g.Wait(); err != boom {
			t.Fatalf("round %d: Wait() = %v, want the first error", round, err)
		}
		if got := last.Load(); got != int32(fail) {
			t.Fatalf("round %d: member %d ran after member %d failed", round, got, fail)
		}
		if !errors.Is(context.Cause(g.Context()), boom) {
			t.Fatalf("round %d: the group's context was not canceled with the error", round)
		}
		q.Close()
	}
}

// A hammer: many groups at once on one concurrent queue, members failing at
// random, submitted from several goroutines. Every member runs at most once,
// Wait reports the failure, and no member runs after its group's Wait
// returned. (That no member that had not started runs after the failure is
// shown exactly on serial queues, by TestGroupCancelOnErrorStopsTheRest: on
// a concurrent queue a member may pass its start between the failure and
// the cancel, which is allowed.)
func TestGroupHammer(t *testing.T) {
	q := quietQueue(4)
	defer q.Close()
	groups := 64
	if raceEnabled {
		groups = 16
	}
	var wg sync.WaitGroup
	ran := make([]atomic.Int32, groups)
	atWait := make([]int32, groups)
	for gi := range groups {
		wg.Go(func() {
			g := taskqueue.NewGroup(context.Background(), q).WithCancelOnError()
			ran := &ran[gi]
			fail := rand.IntN(400)
			member := func(i int) func(context.Context) error {
				return func(ctx context.Context) error {
					ran.Add(1)
					if i == fail {
						return errors.New("fail")
					}
					return nil
				}
			}
			var sub sync.WaitGroup
			for s := range 4 {
				sub.Go(func() {
					for i := s * 100; i < (s+1)*100; i++ {
						g.Go(member(i))
					}
				})
			}
			sub.Wait()
			err := g.Wait()
			atWait[gi] = ran.Load()
			if err == nil || err.Error() != "fail" {
				t.Errorf("group %d: Wait() = %v", gi, err)
			}
			if r := atWait[gi]; r < 1 || r > 400 {
				t.Errorf("group %d: %d members ran", gi, r)
			}
		})
	}
	wg.Wait()
	if err := q.Shutdown(context.Background()); err != nil { // every task of every group has ended
		t.Fatal(err)
	}
	for gi := range groups {
		if r := ran[gi].Load(); r != atWait[gi] {
			t.Errorf("group %d: %d members ran by its Wait, %d in all", gi, atWait[gi], r)
		}
	}
}

func TestGroupLimit(t *testing.T) {
	q := quietQueue(8)
	defer q.Close()
	g := taskqueue.NewGroup(context.Background(), q).WithLimit(3)
	var now, most atomic.Int32
	for range 200 {
		g.Go(func(context.Context) error {
			n := now.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(10 * time.Microsecond) // a real overlap, not a timing assertion
			now.Add(-1)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if most.Load() > 3 {
		t.Fatalf("%d members ran at once; the group's limit is 3", most.Load())
	}
}

func TestGroupOfResultsInSubmissionOrder(t *testing.T) {
	q := quietQueue(4)
	defer q.Close()
	g := taskqueue.NewGroupOf[int](context.Background(), q)
	for i := range 100 {
		g.Go(func(context.Context) (int, error) { return i * i, nil })
	}
	vals, err := g.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		if v != i*i {
			t.Fatalf("vals[%d] = %d, want %d", i, v, i*i)
		}
	}
}

// A continuation holds no slot while it waits: the I/O queue serves other
// work while the CPU stage of an earlier item is still running.
func TestThenHoldsNoSlot(t *testing.T) {
	ctx := context.Background()
	io, cpu := quietQueue(1), quietQueue(1)
	defer io.Close()
	defer cpu.Close()
	release := make(chan struct{})
	read := taskqueue.RunAsync(ctx, io, func(context.Context) (string, error) { return "data", nil })
	decoded := taskqueue.Then(ctx, read, cpu, func(_ context.Context, s string) (int, error) {
		<-release
		return len(s), nil
	})
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := io.RunSync(tctx, func(context.Context) error { return nil }); err != nil {
		t.Fatalf("the I/O queue did not serve while the CPU stage ran: %v", err)
	}
	close(release)
	if n, err := decoded.Result(tctx); n != 4 || err != nil {
		t.Fatalf("Result() = %d, %v; want 4, nil", n, err)
	}

	boom := errors.New("read failed")
	failed := taskqueue.RunAsync(ctx, io, func(context.Context) (string, error) { return "", boom })
	ran := false
	after := taskqueue.Then(ctx, failed, cpu, func(context.Context, string) (int, error) { ran = true; return 0, nil })
	if _, err := after.Result(tctx); err != boom || ran {
		t.Fatalf("after a failed stage: err %v, ran %v; want the stage's error and no run", err, ran)
	}

	h := io.RunAsync(ctx, func(context.Context) error { return boom })
	var got error
	c := h.Then(ctx, cpu, func(_ context.Context, err error) error { got = err; return nil })
	if err := c.Wait(tctx); err != nil || got != boom {
		t.Fatalf("Handle.Then: Wait %v, saw %v; want nil and the antecedent's error", err, got)
	}
}

func TestApplyRunsEveryIndexOnce(t *testing.T) {
	ctx := context.Background()
	for _, limit := range []int{1, 2, 8} {
		q := quietQueue(limit)
		for _, n := range []int{0, 1, 7, 1000, 100_003} {
			seen := make([]atomic.Int32, n)
			if err := taskqueue.Apply(ctx, q, n, func(i int) { seen[i].Add(1) }); err != nil {
				t.Fatal(err)
			}
			for i := range seen {
				if c := seen[i].Load(); c != 1 {
					t.Fatalf("limit %d, n %d: index %d ran %d times", limit, n, i, c)
				}
			}
		}
		q.Close()
	}
}

// Apply from a task of a serial queue: the queue's only slot is the
// caller's, so the caller does the work, and Apply must not wait for helpers
// that can never start.
func TestApplyFromOwnSerialTask(t *testing.T) {
	q := quietQueue(1)
	defer q.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var sum atomic.Int64
	err := q.RunSync(ctx, func(ctx context.Context) error {
		return taskqueue.Apply(ctx, q, 1000, func(i int) { sum.Add(int64(i)) })
	})
	if err != nil || sum.Load() != 999*1000/2 {
		t.Fatalf("err %v, sum %d", err, sum.Load())
	}
}

func TestApplyPanicAndCancel(t *testing.T) {
	q := quietQueue(2)
	defer q.Close()
	err := taskqueue.Apply(context.Background(), q, 10_000, func(i int) {
		if i == 5000 {
			panic("iteration 5000")
		}
	})
	var pe *taskqueue.PanicError
	if !errors.As(err, &pe) || !strings.Contains(pe.Error(), "iteration 5000") {
		t.Fatalf("Apply() = %v, want the panic", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var ran atomic.Int32
	if err := taskqueue.Apply(ctx, q, 10_000, func(int) { ran.Add(1) }); !errors.Is(err, context.Canceled) || ran.Load() != 0 {
		t.Fatalf("with a done context: err %v, %d iterations ran", err, ran.Load())
	}
}

func TestMapAndForEach(t *testing.T) {
	ctx := context.Background()
	q := quietQueue(4)
	defer q.Close()
	items := make([]int, 10_000)
	for i := range items {
		items[i] = i
	}
	out, err := taskqueue.Map(ctx, q, items, func(_ context.Context, v int) (string, error) { return fmt.Sprint(v), nil })
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range out {
		if s != fmt.Sprint(i) {
			t.Fatalf("out[%d] = %q", i, s)
		}
	}
	boom := errors.New("item 42")
	err = taskqueue.ForEach(ctx, q, items, func(_ context.Context, v int) error {
		if v == 42 {
			return boom
		}
		return nil
	})
	if err != boom {
		t.Fatalf("ForEach() = %v, want the item's error", err)
	}
	if out, err := taskqueue.Map(ctx, q, items, func(_ context.Context, v int) (int, error) {
		if v == 9000 {
			return 0, boom
		}
		return v, nil
	}); err != boom || out != nil {
		t.Fatalf("Map with an error: %v, %v", out, err)
	}
}

// Completed streams the members as they complete: each once, in completion
// order, while later members still run.
func TestGroupOfCompletedStreams(t *testing.T) {
	q := quietQueue(4)
	defer q.Close()
	g := taskqueue.NewGroupOf[int](context.Background(), q)
	gates := make([]chan struct{}, 5)
	for i := range gates {
		gates[i] = make(chan struct{})
		g.Go(func(context.Context) (int, error) {
			<-gates[i]
			if i == 3 {
				return 0, errors.New("member 3")
			}
			return i * 10, nil
		})
	}
	order := []int{2, 0, 3, 4, 1}
	var got []string
	next := 0
	close(gates[order[next]])
	for v, err := range g.Completed() {
		got = append(got, fmt.Sprint(v, err))
		if next++; next < len(order) {
			close(gates[order[next]]) // the next member ends only once this one was seen
		}
	}
	want := []string{"20 <nil>", "0 <nil>", "0 member 3", "40 <nil>", "10 <nil>"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Completed yielded %v, want %v", got, want)
	}
	if _, err := g.Wait(); err == nil || err.Error() != "member 3" {
		t.Fatalf("Wait() = %v", err)
	}
	n := 0
	for range g.Completed() {
		n++
	}
	if n != 5 {
		t.Fatalf("a second iteration yielded %d members, want 5", n)
	}
}
