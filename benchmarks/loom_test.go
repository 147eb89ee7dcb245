package benchmarks

import (
	"container/heap"
	"fmt"
	"iter"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// BenchmarkLoomFrame measures a frame with 10,000 or 100,000 pending delayed
// actions, about one in 300 due: the clock moves 1ms a frame, the due times
// are spread over 300ms, and each action re-arms 300ms later. It compares the
// loom with the Loom it ports (a list scanned each frame, List.Remove for
// each due action) and with container/heap over pointers.
func BenchmarkLoomFrame(b *testing.B) {
	const spread = 300 * time.Millisecond
	for _, pending := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("pending=%d/impl=loom", pending), func(b *testing.B) {
			l := loom.New(loom.ManualClock())
			r := rand.New(rand.NewPCG(1, 1))
			timers := make([]*loom.Timer, pending)
			for i := range timers {
				timers[i] = l.PostAfter(time.Duration(r.Int64N(int64(spread))), func() { timers[i].Reset(spread) })
			}
			b.ReportAllocs()
			for b.Loop() {
				l.UpdateDelta(time.Millisecond)
			}
			l.Close()
		})
		b.Run(fmt.Sprintf("pending=%d/impl=containerheap", pending), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			h := make(itemHeap, 0, pending)
			for range pending {
				it := &item{due: r.Int64N(int64(spread))}
				it.f = func() { it.due += int64(spread); heap.Push(&h, it) }
				heap.Push(&h, it)
			}
			var now int64
			b.ReportAllocs()
			for b.Loop() {
				now += int64(time.Millisecond)
				for len(h) > 0 && h[0].due <= now {
					heap.Pop(&h).(*item).f()
				}
			}
		})
		b.Run(fmt.Sprintf("pending=%d/impl=valueheap", pending), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			var h valueHeap
			for i := range pending {
				h.push(r.Int64N(int64(spread)), int32(i))
			}
			var now int64
			b.ReportAllocs()
			for b.Loop() {
				now += int64(time.Millisecond)
				for len(h) > 0 && h[0].due <= now {
					e := h.pop()
					h.push(e.due+int64(spread), e.id) // the action re-arms
				}
			}
		})
		if pending > 10_000 && testing.Short() {
			continue
		}
		b.Run(fmt.Sprintf("pending=%d/impl=listscan", pending), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			var list, current []*item
			for range pending {
				it := &item{due: r.Int64N(int64(spread))}
				it.f = func() { it.due += int64(spread); list = append(list, it) }
				list = append(list, it)
			}
			var now int64
			b.ReportAllocs()
			for b.Loop() {
				now += int64(time.Millisecond)
				current = current[:0]
				for _, it := range list {
					if it.due <= now {
						current = append(current, it)
					}
				}
				for _, c := range current { // List.Remove: a search each
					for k, it := range list {
						if it == c {
							list = append(list[:k], list[k+1:]...)
							break
						}
					}
				}
				for _, c := range current {
					c.f()
				}
			}
		})
	}
}

// valueHeap is the floor of a heap of delayed actions: a binary heap of
// values (a due time and the action's index), no pointer to follow.
type valueHeap []valueEntry

type valueEntry struct {
	due int64
	id  int32
}

func (h *valueHeap) push(due int64, id int32) {
	*h = append(*h, valueEntry{due, id})
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].due <= s[i].due {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *valueHeap) pop() valueEntry {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && s[c+1].due < s[c].due {
			c++
		}
		if s[i].due <= s[c].due {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return top
}

type item struct {
	due int64
	f   func()
}

type itemHeap []*item

func (h itemHeap) Len() int           { return len(h) }
func (h itemHeap) Less(i, j int) bool { return h[i].due < h[j].due }
func (h itemHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *itemHeap) Push(x any)        { *h = append(*h, x.(*item)) }
func (h *itemHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return it
}

// BenchmarkCoroutineStep measures one step of a coroutine that yields every
// frame, 10,000 of them a frame, against a bare iter.Pull next() and a
// goroutine resumed over a channel. Each starts its coroutines and runs them
// to their first yield before the timer: the steps timed are steady ones.
func BenchmarkCoroutineStep(b *testing.B) {
	const n = 10_000
	body := func(yield func(loom.Instruction) bool) {
		for yield(loom.NextFrame()) {
		}
	}
	b.Run("impl=loom", func(b *testing.B) {
		l := loom.New(loom.ManualClock())
		for range n {
			l.StartCoroutine(body)
		}
		l.UpdateDelta(time.Millisecond) // begins them, outside the timer, as the baseline's first step
		b.ReportAllocs()
		for b.Loop() {
			l.UpdateDelta(time.Millisecond)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/step")
		l.Close()
	})
	b.Run("impl=iterpull", func(b *testing.B) {
		nexts := make([]func() (loom.Instruction, bool), n)
		stops := make([]func(), n)
		for i := range nexts {
			nexts[i], stops[i] = iter.Pull(iter.Seq[loom.Instruction](body))
			nexts[i]() // runs the body to its first yield, outside the timer, as the loom's first frame
		}
		b.ReportAllocs()
		for b.Loop() {
			for _, next := range nexts {
				next()
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/step")
		for _, stop := range stops {
			stop()
		}
	})
	b.Run("impl=goroutine", func(b *testing.B) {
		type pair struct{ resume, yielded chan struct{} }
		pairs := make([]pair, n)
		for i := range pairs {
			p := pair{make(chan struct{}), make(chan struct{})}
			pairs[i] = p
			go func() {
				for range p.resume {
					p.yielded <- struct{}{}
				}
			}()
		}
		b.ReportAllocs()
		for b.Loop() {
			for _, p := range pairs {
				p.resume <- struct{}{}
				<-p.yielded
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/step")
		for _, p := range pairs {
			close(p.resume)
		}
	})
}

// BenchmarkCoroutineTimedWaits measures a frame with 100,000 coroutines
// parked on timed waits, of which about 1,000 are due each frame (the clock
// moves 1ms a frame; each waits 1 to 100ms, then 100ms again and again),
// against its floor: as many bare iter.Pull coroutines, parked in a perfect
// timing wheel (a bucket per frame), the same ones resumed in the same order
// each frame. What the loom adds to a resume is its bookkeeping.
func BenchmarkCoroutineTimedWaits(b *testing.B) {
	const n, spread = 100_000, 100
	firsts := make([]int, n)
	r := rand.New(rand.NewPCG(2, 2))
	for i := range firsts {
		firsts[i] = r.IntN(spread) + 1
	}
	b.Run("impl=loom", func(b *testing.B) {
		l := loom.New(loom.ManualClock())
		for _, first := range firsts {
			l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				if !yield(loom.WaitForSeconds(time.Duration(first) * time.Millisecond)) {
					return
				}
				for yield(loom.WaitForSeconds(spread * time.Millisecond)) {
				}
			})
		}
		l.UpdateDelta(0) // the coroutines begin and park
		b.ReportAllocs()
		for b.Loop() {
			l.UpdateDelta(time.Millisecond)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n/spread), "ns/resume")
		l.Close()
	})
	b.Run("impl=floor", func(b *testing.B) {
		nexts := make([]func() (int, bool), n)
		stops := make([]func(), n)
		var wheel [spread + 1][]int32
		for i, first := range firsts {
			nexts[i], stops[i] = iter.Pull(func(yield func(int) bool) {
				if !yield(first) {
					return
				}
				for yield(spread) {
				}
			})
			wait, _ := nexts[i]()
			wheel[wait%len(wheel)] = append(wheel[wait%len(wheel)], int32(i))
		}
		frame := 0
		b.ReportAllocs()
		for b.Loop() {
			frame++
			slot := frame % len(wheel)
			due := wheel[slot]
			for _, i := range due {
				wait, _ := nexts[i]()
				at := (frame + wait) % len(wheel)
				wheel[at] = append(wheel[at], i)
			}
			wheel[slot] = due[:0] // a wait is 1 to spread frames: nothing re-arms in slot
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n/spread), "ns/resume")
		for _, stop := range stops {
			stop()
		}
	})
}
