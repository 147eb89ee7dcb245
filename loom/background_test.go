package loom_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
)

// TestRunAsyncIsBoundedAndNeverBlocks: RunAsync returns at once and runs
// at most WithBackgroundLimit functions at once (8 by default), the rest
// in order as slots free; a panic in one goes to the panic handler;
// WaitBackground returns once none is queued or running.
func TestRunAsyncIsBoundedAndNeverBlocks(t *testing.T) {
	for _, limit := range []int{0, 1, 3} {
		synctest.Test(t, func(t *testing.T) {
			opts := []loom.Option{}
			want := int64(8) // the default
			if limit > 0 {
				opts, want = append(opts, loom.WithBackgroundLimit(limit)), int64(limit)
			}
			l, p := testLoom(t, opts...)
			g := testkit.Gauge{Name: "RunAsync", Limit: want}
			gate := make(chan struct{})
			var mu sync.Mutex
			var started []int
			for i := range 20 {
				if err := l.RunAsync(func() {
					g.Enter("a function")
					defer g.Leave()
					mu.Lock()
					started = append(started, i)
					mu.Unlock()
					<-gate
				}); err != nil {
					t.Fatal(err)
				}
			}
			synctest.Wait() // every RunAsync returned, and the functions that could start wait at the gate
			if got := g.Now(); got != want {
				t.Errorf("limit %d: %d background functions run at once; want %d", limit, got, want)
			}
			l.RunAsync(func() { panic("in the background") })
			close(gate)
			if err := l.WaitBackground(t.Context()); err != nil {
				t.Fatal(err)
			}
			if msg := g.Over(); msg != "" || g.Peak() != want {
				t.Errorf("limit %d: peak %d (%s); want %d", limit, g.Peak(), msg, want)
			}
			if limit == 1 && !slices.IsSorted(started) {
				t.Errorf("with one at a time, the functions started in the order %v; want the order of RunAsync", started)
			}
			if len(started) != 20 {
				t.Errorf("%d functions ran; want 20", len(started))
			}
			if got := p.Take(); len(got) != 1 || got[0].Value != "in the background" {
				t.Errorf("handler got %v", got)
			}
		})
	}
}

// TestWaitBackground: WaitBackground returns nil at once on a loom that
// never ran a background function, returns ctx.Err() when its context
// ends first, and still sees the functions queued before Close run.
func TestWaitBackground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := testLoom(t, loom.WithBackgroundLimit(1))
		if err := l.WaitBackground(context.Background()); err != nil {
			t.Errorf("WaitBackground with no runner = %v; want nil", err)
		}
		gate := make(chan struct{})
		var ran atomic.Int32
		l.RunAsync(func() { <-gate; ran.Add(1) })
		l.RunAsync(func() { ran.Add(1) }) // queued behind the first
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := l.WaitBackground(ctx); err != context.Canceled {
			t.Errorf("WaitBackground with a canceled context = %v; want context.Canceled", err)
		}
		l.Close()
		close(gate)
		if err := l.WaitBackground(t.Context()); err != nil || ran.Load() != 2 {
			t.Errorf("after Close: WaitBackground = %v, %d functions ran; want nil, 2", err, ran.Load())
		}
	})
}

// TestRunAsyncMisuse: RunAsync of a nil function panics; WithBackgroundLimit
// given to Configure after the first RunAsync panics, naming the option.
func TestRunAsyncMisuse(t *testing.T) {
	l, _ := testLoom(t, loom.WithBackgroundLimit(2))
	l.RunAsync(func() {})
	checkMisuse(t,
		misuse{func() { l.RunAsync(nil) }, "loom: RunAsync(nil)"},
		misuse{func() { l.Configure(loom.WithBackgroundLimit(3)) }, "loom: WithBackgroundLimit given to Configure after the first RunAsync"},
	)
	if err := l.WaitBackground(t.Context()); err != nil {
		t.Error(err)
	}
}
