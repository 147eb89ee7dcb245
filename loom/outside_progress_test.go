package loom_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/loom"
)

// Progress: documented zero value, limits and panics that leave it as it was,
// and Load that never mixes a count of one moment with a total of another.
func TestOutsideProgressContract(t *testing.T) {
	var p loom.Progress
	if d, tot := p.Load(); d != 0 || tot != -1 || p.Fraction() != 0 || p.Finished() {
		t.Fatalf("zero Progress: %d/%d fraction %v finished %v", d, tot, p.Fraction(), p.Finished())
	}
	p.SetTotal(0)
	if p.Fraction() != 1 || !p.Finished() {
		t.Errorf("total 0: fraction %v finished %v", p.Fraction(), p.Finished())
	}
	p = loom.Progress{}
	p.SetTotal(10)
	p.Add(3)
	if testkit.PanicValue(func() { p.Add(-1) }) == nil {
		t.Error("Add(-1) did not panic")
	}
	if testkit.PanicValue(func() { p.Add(maxProgress) }) == nil {
		t.Error("Add past the largest count did not panic")
	}
	if d, tot := p.Load(); d != 3 || tot != 10 {
		t.Errorf("after refused Adds: %d/%d, want 3/10", d, tot)
	}
	if testkit.PanicValue(func() { p.SetTotal(-1) }) == nil || testkit.PanicValue(func() { p.SetTotal(maxProgress + 1) }) == nil {
		t.Error("SetTotal out of range did not panic")
	}
	if d, tot := p.Load(); d != 3 || tot != 10 {
		t.Errorf("after refused SetTotals: %d/%d, want 3/10", d, tot)
	}
	p.Add(12)
	if p.Fraction() != 1 || !p.Finished() {
		t.Errorf("count past total: fraction %v", p.Fraction())
	}
	p = loom.Progress{}
	p.SetTotal(maxProgress)
	p.Add(maxProgress)
	if d, tot := p.Load(); d != maxProgress || tot != maxProgress || !p.Finished() || p.Fraction() != 1 {
		t.Errorf("at the largest count: %d/%d", d, tot)
	}
	if testkit.PanicValue(func() { p.Add(1) }) == nil {
		t.Error("Add(1) at the largest count did not panic")
	}

	// One writer raises the total, then the count to it; readers must never
	// see a count above the total, which a Load mixing a later count with an
	// earlier total would show.
	var q loom.Progress
	q.SetTotal(0)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var bad, reads int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < maxProgress-1; i++ {
			select {
			case <-stop:
				return
			default:
			}
			q.SetTotal(i + 1)
			q.Add(1)
			runtime.Gosched() // lets the other goroutines run where all share one thread (js/wasm)
		}
	}()
	for range 200000 {
		d, tot := q.Load()
		reads++
		runtime.Gosched() // lets the other goroutines run where all share one thread (js/wasm)
		if d > tot {
			bad++
		}
	}
	close(stop)
	wg.Wait()
	if bad != 0 {
		t.Errorf("%d of %d Loads mixed a count and a total", bad, reads)
	}
	// Concurrent Adds all count.
	var r loom.Progress
	r.SetTotal(8 * 10000)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10000 {
				r.Add(1)
			}
		}()
	}
	wg.Wait()
	if !r.Finished() {
		d, tot := r.Load()
		t.Errorf("concurrent Adds: %d/%d", d, tot)
	}
}

// A coroutine waiting with WaitUntil(p.Finished) resumes in the first frame after
// workers finish; a Task's Wait from a goroutine, and Await, give its result.
func TestOutsideProgressAndTaskAwait(t *testing.T) {
	l := loom.New(loom.ManualClock())
	var p loom.Progress
	p.SetTotal(100)
	task := loom.StartTask(l, func(yield func(loom.Instruction) bool) (int, error) {
		if !yield(loom.WaitUntil(p.Finished)) {
			return 0, errors.New("stopped")
		}
		d, _ := p.Load()
		return d, nil
	})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				p.Add(1)
			}
		}()
	}
	got := make(chan int, 1)
	go func() {
		v, err := task.Wait(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- v
	}()
	awaited := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		awaited <- loom.Await(ctx, task)
	}()
	wg.Wait()
	for !task.IsDone() {
		l.UpdateDelta(time.Millisecond)
	}
	if v := <-got; v != 100 {
		t.Errorf("task result %d", v)
	}
	if err := <-awaited; err != nil {
		t.Errorf("Await: %v", err)
	}
	if v, err := task.Result(); v != 100 || err != nil {
		t.Errorf("Result %v %v", v, err)
	}
	l.Close()
}
