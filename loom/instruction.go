package loom

import (
	"fmt"
	"time"
)

// An Instruction is what a coroutine yields: when to resume it. Instructions
// are small values; yielding one costs no allocation. The zero Instruction
// resumes the coroutine in the next frame, as NextFrame does.
type Instruction struct {
	kind waitKind
	n    int64 // nanoseconds or frames
	ref  any   // the predicate, the coroutine, the waitable or the KeepWaiter
}

type waitKind uint8

const (
	waitNextFrame waitKind = iota
	waitSeconds            // scaled time
	waitRealtime           // unscaled time
	waitFrames
	waitUntil
	waitWhile
	waitFor // a *Coroutine or anything with Done
	waitCustom
)

// A KeepWaiter is a custom instruction, polled once per frame: the coroutine
// resumes in the first frame in which KeepWaiting reports false (Unity's
// CustomYieldInstruction.keepWaiting). KeepWaiting runs on the loom's
// goroutine.
type KeepWaiter interface {
	KeepWaiting() bool
}

// Waitable is anything that reports its end by closing a channel, such as a
// *Coroutine or a taskqueue.Handle.
type Waitable interface {
	Done() <-chan struct{}
}

// NextFrame resumes the coroutine in the next frame (Unity's yield return
// null), never in the current one.
func NextFrame() Instruction { return Instruction{} }

// WaitForSeconds resumes the coroutine in the first frame whose scaled time
// (see Loom.Time) is at least d after the frame in which it yielded; with
// d <= 0, in the next frame. A time scale of 0 freezes the wait.
func WaitForSeconds(d time.Duration) Instruction {
	return Instruction{kind: waitSeconds, n: int64(d)}
}

// WaitForSecondsRealtime is WaitForSeconds on unscaled time, which the time
// scale does not slow or pause.
func WaitForSecondsRealtime(d time.Duration) Instruction {
	return Instruction{kind: waitRealtime, n: int64(d)}
}

// WaitForFrames resumes the coroutine in frame f+n, where f is the frame in
// which it yielded; with n <= 1, in the next frame.
func WaitForFrames(n int) Instruction {
	return Instruction{kind: waitFrames, n: int64(n)}
}

// WaitUntil resumes the coroutine in the first frame, from the next one on,
// in which cond reports true. cond is called once per frame, on the loom's
// goroutine.
func WaitUntil(cond func() bool) Instruction {
	if cond == nil {
		panic("loom: WaitUntil(nil)")
	}
	return Instruction{kind: waitUntil, ref: cond}
}

// WaitWhile resumes the coroutine in the first frame, from the next one on,
// in which cond reports false.
func WaitWhile(cond func() bool) Instruction {
	if cond == nil {
		panic("loom: WaitWhile(nil)")
	}
	return Instruction{kind: waitWhile, ref: cond}
}

// WaitFor resumes the coroutine once w is done. For a coroutine of the same
// loom (Unity's yield return StartCoroutine(...)), the waiting coroutine
// resumes in the same pass in which w ends, so nesting costs no extra frame;
// if w ended before, or ends in the same pass in which the waiter yielded, it
// resumes in the next frame. For anything else, such as a taskqueue.Handle,
// it resumes in the first frame after w's Done channel is closed: heavy work
// runs on a queue and its result is used on the loom's goroutine.
func WaitFor(w Waitable) Instruction {
	if w == nil {
		panic("loom: WaitFor(nil)")
	}
	return Instruction{kind: waitFor, ref: w}
}

// WaitCustom resumes the coroutine in the first frame, from the next one on,
// in which w.KeepWaiting reports false.
func WaitCustom(w KeepWaiter) Instruction {
	if w == nil {
		panic("loom: WaitCustom(nil)")
	}
	return Instruction{kind: waitCustom, ref: w}
}

// String describes the wait, for CoroutineInfo and debugging.
func (in Instruction) String() string {
	switch in.kind {
	case waitSeconds:
		return fmt.Sprintf("WaitForSeconds(%v)", time.Duration(in.n))
	case waitRealtime:
		return fmt.Sprintf("WaitForSecondsRealtime(%v)", time.Duration(in.n))
	case waitFrames:
		return fmt.Sprintf("WaitForFrames(%d)", in.n)
	case waitUntil:
		return "WaitUntil"
	case waitWhile:
		return "WaitWhile"
	case waitFor:
		if c, ok := in.ref.(*Coroutine); ok {
			return fmt.Sprintf("WaitFor(coroutine %d)", c.id)
		}
		return fmt.Sprintf("WaitFor(%T)", in.ref)
	case waitCustom:
		return fmt.Sprintf("WaitCustom(%T)", in.ref)
	}
	return "NextFrame"
}
