package loom

import (
	"fmt"
	"sync/atomic"
)

// A Progress is how far a long piece of work has gone, reported by the
// goroutine that does it (a queue's task, a coroutine) and read by a frame,
// without locks: the Go counterpart of UniTask's IProgress. It holds a count
// of units done and a total, both read together in one atomic load, so a
// frame never sees the count of one moment with the total of another; each
// method is one atomic operation, or a compare-and-swap loop for Add.
//
// A coroutine waits for the work with yield(WaitUntil(p.Finished)), and draws
// a bar from p.Fraction() each frame.
//
// The zero Progress has no total and is ready to use. A Progress must not be
// copied after first use. Counts and totals range from 0 to 1<<31 - 1,
// the largest int on every platform.
type Progress struct {
	// v holds done in its high 32 bits and, in its low 32 bits, total+1, or
	// 0 while no total is set.
	v atomic.Uint64
}

// maxProgress is the largest count and the largest total of a Progress, the
// largest int on every platform.
const maxProgress = 1<<31 - 1

// SetTotal sets the amount of work, keeping the count done. It panics if n
// is negative or above 1<<31 - 1.
func (p *Progress) SetTotal(n int) {
	checkProgress("SetTotal", n)
	for {
		old := p.v.Load()
		if p.v.CompareAndSwap(old, old&^(1<<32-1)|uint64(n)+1) {
			return
		}
	}
}

// Add adds n units to the count done. It panics if n is negative or if the
// count would pass 1<<31 - 1, leaving p as it was.
func (p *Progress) Add(n int) {
	checkProgress("Add", n)
	for {
		old := p.v.Load()
		done := old>>32 + uint64(n)
		if done > maxProgress {
			panic(fmt.Sprintf("loom: Progress.Add(%d): the count would pass 1<<31 - 1", n))
		}
		if p.v.CompareAndSwap(old, done<<32|old&(1<<32-1)) {
			return
		}
	}
}

// Load returns the count done and the total, as they were at one instant;
// the total is -1 while none is set, so that it differs from a total of 0,
// which Fraction and Finished treat as work done.
func (p *Progress) Load() (done, total int) {
	v := p.v.Load()
	return int(v >> 32), int(v&(1<<32-1)) - 1
}

// Fraction returns done/total, from 0 to 1: 0 while no total is set, 1 for
// a total of 0 or a count at or past the total.
func (p *Progress) Fraction() float64 {
	v := p.v.Load()
	t := v & (1<<32 - 1)
	switch done := v >> 32; {
	case t == 0:
		return 0
	case done >= t-1:
		return 1
	default:
		return float64(done) / float64(t-1)
	}
}

// Finished reports whether a total is set and the count done has reached it.
func (p *Progress) Finished() bool {
	v := p.v.Load()
	t := v & (1<<32 - 1)
	return t > 0 && v>>32 >= t-1
}

// checkProgress panics if n is not a valid count for the method named call.
func checkProgress(call string, n int) {
	if n < 0 || n > maxProgress {
		panic(fmt.Sprintf("loom: Progress.%s(%d): out of range [0, 1<<31 - 1]", call, n))
	}
}
