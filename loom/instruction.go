package loom

import (
	"fmt"
	"strconv"
	"time"
)

// An Instruction is what a coroutine yields: when to resume it. Instructions
// are small values; yielding one costs no allocation
// (TestYieldAllocatesNothing). The zero Instruction resumes the coroutine in
// the next frame, as NextFrame does. In short:
//
//	yield                         resumes
//	NextFrame(), Instruction{}    in the next frame, never the same one
//	WaitForSeconds(d)             in the first frame whose scaled time is d
//	                              past the yield's (d <= 0: next frame); a
//	                              time scale of 0 freezes it
//	WaitForSecondsRealtime(d)     the same on unscaled time
//	WaitForFrames(n)              in frame f+n, f the yield's frame (n <= 1:
//	                              next frame)
//	WaitUntil(cond)               in the first frame, from the next on, in
//	                              which cond() is true; polled once per frame
//	WaitWhile(cond)               the same, when cond() is false
//	WaitFor(c), c a *Coroutine    in the pass in which c ends, right after it
//	                              (nesting costs no frame); next frame if c
//	                              had ended or ends in the yield's frame
//	WaitFor(w), any Waitable      in the first frame after w.Done() is closed
//	                              (a taskqueue.Handle, say); polled
//	WaitCustom(k)                 in the first frame, from the next on, in
//	                              which k.KeepWaiting() is false; polled
//	WaitAll(ws...)                in the first frame, from the next on, in
//	                              which every one of ws is done: one frame
//	                              for the set, not one per member; polled
//	WaitAny(ws...)                the same, when one of ws is done
//	WaitForFixedUpdate()          right after the next fixed step, once the
//	                              step function returned: in a later frame
//	                              if yielded in an update, maybe the same one
//	                              if yielded in a step; on a loom without
//	                              fixed steps, it ends the coroutine with a
//	                              *PanicError saying so
//	WaitForEndOfFrame()           in the end phase of the yield's frame (of
//	                              the next frame, if yielded in an end phase)
//
// The waits marked polled call a function of the program, or look at a
// channel, once per frame until they are over; the others cost nothing in
// frames where they do not resume. A panic in any function a wait calls (a
// predicate, KeepWaiting, a Waitable's Done) ends only the coroutine that
// waits: it goes to the panic handler and to that coroutine's Err, and
// every other coroutine stays where it was.
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
	waitAll // a *multi: every member done
	waitAny // a *multi: one member done
	waitFixedUpdate
	waitEndOfFrame
)

// A KeepWaiter is a custom instruction, polled once per frame: the coroutine
// resumes in the first frame in which KeepWaiting reports false (Unity's
// CustomYieldInstruction.keepWaiting). KeepWaiting runs on the loom's
// goroutine.
type KeepWaiter interface {
	KeepWaiting() bool
}

// Waitable is anything that reports its end by closing a channel, such as a
// *Coroutine, a *Task, a *Timer or a taskqueue.Handle. A coroutine's WaitFor
// on a Waitable that also has a method IsDone() bool, as those four do,
// polls IsDone and never calls Done, which spares the channel; IsDone must
// then report true once the Done channel would be closed. (A coroutine or
// task of the coroutine's own loom is not polled at all: its end wakes the
// waiter.)
type Waitable interface {
	Done() <-chan struct{}
}

// doneReporter is a Waitable whose end the loom polls without a channel.
type doneReporter interface {
	IsDone() bool
}

// NextFrame resumes the coroutine in the next frame (Unity's yield return
// null), never in the current one.
func NextFrame() Instruction { return Instruction{} }

// WaitForSeconds resumes the coroutine in the first frame whose scaled time
// (see Loom.Time) is at least d after the frame in which it yielded; with
// d <= 0, in the next frame. A time scale of 0 freezes the wait. A due time
// past the end of the clock's range (math.MaxInt64 nanoseconds, about 292
// years) is that end, so math.MaxInt64 waits until stopped or until the clock
// reaches that end, which a real clock never does (a ManualClock advanced by
// math.MaxInt64 does).
func WaitForSeconds(d time.Duration) Instruction {
	return Instruction{kind: waitSeconds, n: int64(d)}
}

// WaitForSecondsRealtime is WaitForSeconds on unscaled time, which the time
// scale does not slow or pause.
func WaitForSecondsRealtime(d time.Duration) Instruction {
	return Instruction{kind: waitRealtime, n: int64(d)}
}

// WaitForFrames resumes the coroutine in frame f+n, where f is the frame in
// which it yielded; with n <= 1, in the next frame; past math.MaxInt64, in
// frame math.MaxInt64.
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
// in which cond reports false. cond is called once per frame, on the loom's
// goroutine.
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
//
// A function posted to the loom before a Waitable is done runs before a
// coroutine waiting for it with WaitFor, WaitAll or WaitAny resumes: a worker
// that posts its result to the loom and then returns (a task of a queue,
// whose posts happen before its handle is done) lets the coroutine waiting
// on its handle find the result applied. When the Waitable is done after the
// frame's actions ran, the coroutine resumes in the next frame or a later
// one, once the posts made before its wait was first seen over have run (a
// frame budget may spread them over several); posts made after that do not
// hold it back.
func WaitFor(w Waitable) Instruction {
	if w == nil {
		panic("loom: WaitFor(nil)")
	}
	if c, ok := w.(ofLoom); ok && c.coroutine() == nil {
		panic(fmt.Sprintf("loom: WaitFor with a nil %T", w))
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

// waitNames names the waits in CoroutineInfo, those with arguments by the
// function that makes them.
var waitNames = [...]string{
	waitNextFrame:   "NextFrame",
	waitSeconds:     "WaitForSeconds",
	waitRealtime:    "WaitForSecondsRealtime",
	waitFrames:      "WaitForFrames",
	waitUntil:       "WaitUntil",
	waitWhile:       "WaitWhile",
	waitFor:         "WaitFor",
	waitCustom:      "WaitCustom",
	waitAll:         "WaitAll",
	waitAny:         "WaitAny",
	waitFixedUpdate: "WaitForFixedUpdate",
	waitEndOfFrame:  "WaitForEndOfFrame",
}

// describe describes the wait, for CoroutineInfo.
func (in Instruction) describe() string {
	name := waitNames[in.kind]
	switch in.kind {
	case waitSeconds, waitRealtime:
		return name + "(" + time.Duration(in.n).String() + ")"
	case waitFrames:
		return name + "(" + strconv.FormatInt(int64(in.n), 10) + ")"
	case waitFor:
		if c, ok := in.ref.(*Coroutine); ok {
			return fmt.Sprintf("WaitFor(coroutine #%d)", c.id) // the loom's coroutines are numbered from 1 as they start
		}
		return fmt.Sprintf("WaitFor(%T)", in.ref)
	case waitCustom:
		return fmt.Sprintf("WaitCustom(%T)", in.ref)
	case waitAll, waitAny:
		return name + "(" + strconv.Itoa(len(in.ref.(*multi).ws)) + " members)"
	}
	return name
}

func nop() {}
