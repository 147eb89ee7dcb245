package taskqueue_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// TestGroupOfValuesInOrder: GroupOf.Wait returns the values in the order the
// members were added, whatever order they ended in.
func TestGroupOfValuesInOrder(t *testing.T) {
	forEachKind(t, func(t *testing.T, k queueKind) {
		g := taskqueue.NewGroupOf[int](t.Context(), k.new())
		for i := range 40 {
			g.Go(func(context.Context) (int, error) {
				time.Sleep(time.Duration(40-i) * time.Millisecond)
				return i * i, nil
			})
		}
		vals, err := g.Wait(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if v != i*i {
				t.Fatalf("Wait() values = %v; want the squares in order", vals)
			}
		}
	})
}

// TestGroupOfMembersAddMembers: members may add members; Wait waits for all
// of them, and GroupOf keeps the order of addition for values.
func TestGroupOfMembersAddMembers(t *testing.T) {
	q := taskqueue.NewConcurrent(3)
	g := taskqueue.NewGroupOf[int](context.Background(), q)
	var total atomic.Int32
	for i := range 50 {
		g.Go(func(context.Context) (int, error) {
			total.Add(1)
			if i%10 == 0 {
				g.Go(func(context.Context) (int, error) { total.Add(1); return 1000 + i, nil })
			}
			return i, nil
		})
	}
	vals, err := g.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if total.Load() != 55 || len(vals) != 55 {
		t.Fatalf("ran %d members, %d values, want 55", total.Load(), len(vals))
	}
	// Values of the 50 top-level members appear in order.
	var top []int
	for _, v := range vals {
		if v < 1000 {
			top = append(top, v)
		}
	}
	for i, v := range top {
		if v != i {
			t.Fatalf("values out of order of addition: %v", vals)
		}
	}
	q.Close()
}

// Completed yields each result as its member ends, before the slower ones end.
func TestGroupOfCompleted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		g := taskqueue.NewGroupOf[int](t.Context(), taskqueue.NewConcurrent(4))
		errSlow := errors.New("slow")
		for _, d := range []int{3, 1, 4, 2} {
			g.Go(func(context.Context) (int, error) {
				time.Sleep(time.Duration(d) * time.Second)
				if d == 3 {
					return d, errSlow
				}
				return d, nil
			})
		}
		var got []int
		for v, err := range g.Completed() {
			if at := time.Since(start); at != time.Duration(v)*time.Second {
				t.Errorf("result %d yielded at %v; want as it ended, at %ds", v, at, v)
			}
			if (err != nil) != (v == 3) {
				t.Errorf("result %d yielded with error %v", v, err)
			}
			got = append(got, v)
		}
		if want := []int{1, 2, 3, 4}; !slices.Equal(got, want) {
			t.Errorf("Completed yielded %v; want %v", got, want)
		}
		vals, err := g.Wait(context.Background())
		if !slices.Equal(vals, []int{3, 1, 4, 2}) || err != errSlow {
			t.Errorf("Wait() after Completed = %v, %v; want [3 1 4 2], slow", vals, err)
		}
	})
}

// Breaking out of the loop leaves the members running; a new iteration
// yields every result again.
func TestGroupOfCompletedBreak(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := taskqueue.NewGroupOf[int](t.Context(), taskqueue.NewConcurrent(2), taskqueue.WithCancelOnError())
		for i := range 6 {
			g.Go(func(context.Context) (int, error) {
				time.Sleep(time.Duration(i+1) * time.Second)
				return i, nil
			})
		}
		for range g.Completed() {
			break
		}
		n := 0
		for range g.Completed() {
			n++
		}
		if n != 6 {
			t.Errorf("a second iteration yielded %d results; want 6", n)
		}
	})
}

// TestGroupOfCompletedConcurrentIterations: Completed yields every result to
// each of several iterations that run at once, and Wait afterwards returns
// at once with the values.
func TestGroupOfCompletedConcurrentIterations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := taskqueue.NewConcurrent(4)
		g := taskqueue.NewGroupOf[int](context.Background(), q)
		for i := range 20 {
			g.Go(func(context.Context) (int, error) {
				time.Sleep(time.Duration(20-i) * time.Millisecond)
				if i == 7 {
					return -7, errors.New("seven")
				}
				return i, nil
			})
		}
		var wg sync.WaitGroup
		sums := make([]int, 3)
		counts := make([]int, 3)
		for r := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for v, err := range g.Completed() {
					counts[r]++
					if err == nil {
						sums[r] += v
					}
				}
			}()
		}
		wg.Wait()
		for r := range 3 {
			if counts[r] != 20 || sums[r] != 190-7 {
				t.Errorf("iteration %d: %d results, sum %d", r, counts[r], sums[r])
			}
		}
		vals, err := g.Wait(context.Background())
		if err == nil || err.Error() != "seven" || len(vals) != 20 || vals[7] != -7 || vals[19] != 19 {
			t.Errorf("Wait after Completed: %v %v", vals, err)
		}
		q.Close()
	})
}

// TestGroupOfMisuse: a GroupOf without a queue, a nil member and the zero
// GroupOf panic with a message naming the call.
func TestGroupOfMisuse(t *testing.T) {
	ctx := context.Background()
	q := taskqueue.NewSerial()
	var zero taskqueue.GroupOf[int]
	const zeroGroupOf = "taskqueue: use of a zero GroupOf; make one with NewGroupOf"
	checkMisuses(t, []misuse{
		{"NewGroupOf(nil)", func() { taskqueue.NewGroupOf[int](ctx, nil) }, "taskqueue: NewGroupOf with a nil queue"},
		{"GroupOf.Go(nil)", func() { taskqueue.NewGroupOf[int](ctx, q).Go(nil) }, "taskqueue: GroupOf.Go with a nil function"},
		{"zero GroupOf: Go", func() { zero.Go(func(context.Context) (int, error) { return 0, nil }) }, zeroGroupOf},
		{"zero GroupOf: Wait", func() { zero.Wait(ctx) }, zeroGroupOf},
		{"zero GroupOf: Completed", func() { zero.Completed() }, zeroGroupOf},
	})
	q.Close()
}

// TestGroupOfWaitCancelsTheMembersContext: when GroupOf's Wait returns, or
// a loop over Completed has seen every result, the context the members
// received is canceled.
func TestGroupOfWaitCancelsTheMembersContext(t *testing.T) {
	ends := map[string]func(g *taskqueue.GroupOf[int]){
		"Wait": func(g *taskqueue.GroupOf[int]) { g.Wait(context.Background()) },
		"Completed": func(g *taskqueue.GroupOf[int]) {
			for range g.Completed() {
			}
		},
	}
	for name, end := range ends {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := taskqueue.NewConcurrent(2)
				g := taskqueue.NewGroupOf[int](context.Background(), q)
				var members context.Context
				g.Go(func(ctx context.Context) (int, error) { members = ctx; return 1, nil })
				end(g)
				if members.Err() == nil {
					t.Errorf("%s returned; the members' context is not canceled", name)
				}
				q.Close()
			})
		})
	}
}

// TestGroupOfCompletedFromItsOwnSerialQueue: Completed takes no context and
// tells its caller by the group's context alone. From a task of the group's
// own serial queue, ranging over a group made with the task's context could
// only wait for itself, and panics, naming the call, as Wait does; over a
// group made with another context (here context.Background() with a
// deadline) the task cannot be told from an outsider: the iteration waits
// until that context ends and cancels the group, exactly, and yields
// nothing, the member never having run.
func TestGroupOfCompletedFromItsOwnSerialQueue(t *testing.T) {
	for _, made := range []string{"the task's context", "another context"} {
		t.Run(made, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := taskqueue.NewSerial()
				start := time.Now()
				var msg string
				var waited time.Duration
				yielded := 0
				q.RunAsync(t.Context(), func(task context.Context) error {
					ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
					defer cancel()
					if made == "the task's context" {
						ctx = task
					}
					g := taskqueue.NewGroupOf[int](ctx, q)
					g.Go(func(context.Context) (int, error) { return 1, nil })
					msg = testkit.PanicMessage(func() {
						for range g.Completed() {
							yielded++
						}
					})
					waited = time.Since(start)
					return nil
				}).Wait(t.Context())
				if made == "the task's context" {
					if want := "taskqueue: GroupOf.Completed from a task of the serial queue it waits for, which would wait for itself"; msg != want {
						t.Errorf("Completed panicked with %q; want %q", msg, want)
					}
				} else if msg != "" || waited != time.Hour || yielded != 0 {
					t.Errorf("Completed panicked with %q, ended after %v having yielded %d results; want no panic, the end after 1h, nothing yielded", msg, waited, yielded)
				}
				q.Close()
			})
		})
	}
}
