package goid_test

import (
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/internal/goid"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestCurrentMatchesStack checks the fast read against the ID runtime.Stack
// prints, on the test goroutine and on many others at once.
func TestCurrentMatchesStack(t *testing.T) {
	if got, want := goid.Current(), goid.FromStack(); got != want {
		t.Fatalf("Current() = %d; runtime.Stack says %d", got, want)
	}
	if goid.HaveG && goid.Offset() <= 0 {
		t.Errorf("the probe found no offset of the goroutine ID (Offset() = %d): Current falls back to runtime.Stack", goid.Offset())
	}
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for range 100 {
		wg.Go(func() {
			if got, want := goid.Current(), goid.FromStack(); got != want {
				errs <- "mismatch"
			}
		})
	}
	wg.Wait()
	close(errs)
	if n := len(errs); n > 0 {
		t.Errorf("%d of 100 goroutines: Current() differs from runtime.Stack", n)
	}
}

// TestNeverReused starts goroutines one after the other, so that the
// runtime reuses their g structures, and checks that no ID comes back. It
// also checks that the g structures were in fact reused, which is what
// makes the g pointer unfit as an identity.
func TestNeverReused(t *testing.T) {
	const n = 2000
	ids := make(map[uint64]bool, n)
	reused := false
	var lastG uint64
	for range n {
		ch := make(chan [2]uint64)
		go func() {
			var g uint64
			if goid.HaveG {
				g = goid.GWord(0) // stack.lo: differs between live g structures
			}
			ch <- [2]uint64{goid.Current(), g}
		}()
		r := <-ch
		if ids[r[0]] {
			t.Fatalf("goroutine ID %d came back", r[0])
		}
		ids[r[0]] = true
		if r[1] != 0 && r[1] == lastG {
			reused = true
		}
		lastG = r[1]
	}
	if goid.HaveG && !reused {
		t.Log("no g structure was reused in this run; the check above was weaker than meant")
	}
}

func BenchmarkCurrent(b *testing.B) {
	b.ReportAllocs()
	var sink uint64
	for b.Loop() {
		sink += goid.Current()
	}
	_ = sink
}
