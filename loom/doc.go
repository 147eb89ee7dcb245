// Package loom is a frame dispatcher: a render or game loop calls
// [Loom.Update] once per frame, and the loom runs, on the loop's goroutine,
// the actions posted from anywhere, the delayed actions whose time has come,
// and Unity-style coroutines. It is the Go counterpart of the Loom helper of
// Unity projects, without its busy waits and per-frame list scans.
//
// A [Loom] works for any goroutine that calls its Update: the process's main
// thread, which package mainthread serves, or a render goroutine locked to its
// own OS thread with runtime.LockOSThread.
//
// # Frames
//
// [Loom.Post] queues an action from any goroutine without blocking.
// [Loom.PostAfter] returns a [Timer] for an action that runs once its delay
// has passed. Each Update runs one frame, in Unity's order of
// phases:
//
//   - the fixed steps, if the loom has them ([WithFixedStep]): one for each
//     whole step of scaled time since the last, each calling the step
//     function, then resuming the coroutines waiting with
//     [WaitForFixedUpdate];
//   - the update: the actions posted before the frame began, in the order
//     they were posted; then the delayed actions that are due, in due order
//     (and in posting order when due together); then the coroutine pass;
//   - the end of the frame: [Loom.EndFrame], which the loop calls once it has
//     rendered, resumes the coroutines waiting with [WaitForEndOfFrame]; a
//     loop that does not call it gets this phase at the start of the next
//     Update, before anything else.
//
// Work posted during a frame waits for the next one. No callback runs with a
// lock held.
//
// [WithBudget] caps the work of a frame, so that a flood of posts from
// workers cannot stall rendering; what is left runs first in the next frame.
// A loop that sleeps between frames (in glfw.WaitEvents, say) learns when to
// wake from [Loom.Idle] (its Wake channel) and [WithWakeFunc].
//
// # Time
//
// A loom reads the real clock (time.Now, which testing/synctest fakes), or,
// made with [ManualClock], a clock the game advances with [Loom.UpdateDelta].
// It keeps the frame count, unscaled time and scaled time, whose rate is set
// by [Loom.SetTimeScale] (0 pauses it). The delayed actions of PostAfter
// count on unscaled time; those of [Loom.PostAfterScaled] count on
// scaled time, as game logic does, and run after the unscaled ones due in the
// same frame. The fixed steps follow scaled time too.
//
// # Coroutines
//
// A coroutine is a Go iterator function, func(yield func(Instruction) bool),
// started with [Loom.StartCoroutine] and resumed at most once in a frame's
// update (the fixed steps and the end phase may resume it besides), on the
// loop, with iter.Pull. StartCoroutine works from any goroutine and never
// runs the body on the caller: the coroutine begins, running up to its first
// yield, in the frame that is running (in its coroutine pass, or right after
// the coroutine that started it yields) or else in the next frame. An
// iter.Pull coroutine must be created and resumed on the loop (on a
// goroutine locked to its OS thread, a mismatch is a fatal error of the
// runtime, not a panic), and the loom does not ask which goroutine calls, so
// this is the one place where it differs from Unity, whose StartCoroutine
// runs the body at once. yield(WaitFor(l.StartCoroutine(inner))), Unity's
// yield return StartCoroutine(inner()), keeps its timing: inner begins at
// once, in the same pass. What a coroutine yields says when it resumes:
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
// A function posted to the loom before a Waitable is done runs before a
// coroutine waiting for it with WaitFor, WaitAll or WaitAny resumes: a worker
// that posts its result to the loom and then returns (a task of a queue, say)
// lets the coroutine waiting on its handle find the result applied. When the
// Waitable is done after the frame's actions ran, the coroutine resumes in
// the next frame or a later one, once the posts made before its wait was
// first seen over have run (a frame budget may spread them over several);
// posts made after that do not hold it back.
//
// After a WaitAny, FirstDone tells which member ended first; after a
// WaitAll, Await returns at once with the first member's error, in the
// order given. A wait bounded by a duration is a WaitAny with a
// timer made with a nil function, PostAfterScaled(d, nil) on scaled time
// or PostAfter(d, nil) on unscaled time; Await is WaitAll for a
// goroutine, bounded by a context. A panic in any function a wait calls (a
// predicate, KeepWaiting, a Waitable's Done) ends only the coroutine that
// waits: it goes to the panic handler and to that coroutine's Err, and every
// other coroutine stays where it was.
//
// Each frame's coroutine pass runs after the delayed actions. It first
// applies the stops and starts asked since the last pass, then resumes the
// coroutines waiting for the next frame (in yield order), for a frame count,
// scaled time and real time (each in due order), then those whose polled
// wait is over (in yield order). Only polled waits, and the contexts of
// StartCoroutineContext, cost anything in frames where they do not resume;
// the others wait in heaps and lists. Yielding
// allocates nothing, and neither do the fixed steps and the end phase.
//
// [Coroutine.Stop] (or [Loom.StopAllCoroutines], closing its [Scope] or the
// loom, or the end of the context of [Loom.StartCoroutineContext]) ends a
// coroutine, from any goroutine: it never resumes after the call returns,
// and on the loop (in the running frame, or the next) its yield reports
// false, the body must then return, and its defers run (Unity skips finally
// blocks).
// A panic in a body, its first part included, ends only that coroutine: it
// goes to the panic handler with its stack and to [Coroutine.Err], and the
// coroutines waiting for it resume. [Loom.Coroutines] lists the live
// coroutines and what they wait for, to hunt those that never end.
//
// # Progress
//
// A [Progress] carries how far a long piece of work has gone, from the
// goroutine that does it to the frames that show it: workers add to it, a
// coroutine reads [Progress.Fraction] each frame, or waits with
// WaitUntil(p.Finished), and neither side takes a lock.
//
// # Scopes and background work
//
// A [Scope] groups the actions, timers, coroutines and tasks of one owner,
// such as a game object, and ends them together. [Loom.RunAsync], the
// Loom's background runner, runs a function off the loop, at most eight at a
// time by default, on a scheduler.Scheduler. For work off the frame that
// returns a result, submit it to a taskqueue queue: its Future is a
// Waitable, so a coroutine yields WaitFor(future) and reads future.Result()
// once it resumes; and a post from a queue's task to the loom runs before a
// coroutine waiting on that task's handle resumes, since the post happens
// before the task ends.
//
// # Panics
//
// A panic in an action, a delayed action, a background function, a wait's
// predicate or any other function of the program that the loom calls is
// recovered and given, as a [*PanicError] with its stack and the loom's name
// (see [WithName]) as its Source, to the handler set with [WithPanicHandler]
// (by default, log/slog's default logger); the frame goes on with the next
// action.
//
// # Watching frames
//
// [WithFrameObserver] hands a function, at the end of every frame, the
// frame's [FrameStats]: the actions and delayed actions it ran, what its
// budget carried over, the coroutines alive and the delayed actions pending,
// and how long its work took, for a heads-up display or a metrics exporter.
// With runtime/trace on, each frame is a region named "loom frame" and the
// loom's name.
//
// # In a browser
//
// Built for js/wasm, a loom is driven by the page's animation frames: a
// requestAnimationFrame callback (through syscall/js) calls Update, or
// UpdateDelta with the frame's timestamp on a loom made with ManualClock,
// and asks for the next frame. Posts from goroutines land as elsewhere,
// since every goroutine of a page runs on its one thread; a goroutine that
// computes without pausing holds back the frames (see examples/web).
//
// # Testing
//
// Code that uses a loom is tested with testing/synctest: create the loom in
// the bubble and call Update from a goroutine of the bubble, after
// time.Sleep or on a time.Ticker, to move through frames instantly.
//
// # Loop calls
//
// Update, UpdateDelta, EndFrame and Close are the loop's calls, made by the
// goroutine that drives the loom, one at a time: a second one while one runs
// (from inside a frame, or from another goroutine) panics, and Close during a
// frame closes the loom as the frame ends. On a loop goroutine locked to its
// OS thread (the main thread, a render thread), they must come from that
// goroutine every time, since the coroutines it creates can only be resumed
// there.
package loom
