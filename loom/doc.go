// Package loom is a frame dispatcher: a render or game loop calls
// [Loom.Update] once per frame, and the loom runs, on the loop's goroutine,
// the actions posted from any goroutine ([Loom.Post]), the delayed actions
// whose time has come ([Loom.PostAfter] and its [Timer]), and Unity-style
// coroutines ([Loom.StartCoroutine]). It is the Go counterpart of the Loom
// helper of Unity projects, without its busy waits and per-frame list scans.
// The loop is the process's main thread, which package mainthread serves,
// or any goroutine, such as a render goroutine locked to its own OS thread.
//
// # Frames
//
// Each Update runs one frame, in Unity's order of phases:
//
//   - the fixed steps, if the loom has them ([WithFixedStep]);
//   - the update: the actions posted before the frame began, in the order
//     they were posted; the delayed actions that are due, in due order; then
//     the coroutine pass;
//   - the end of the frame, [Loom.EndFrame], which the loop calls once it
//     has rendered, or else the start of the next Update.
//
// Work posted during a frame waits for the next one, and no callback runs
// with a lock held. [WithBudget] caps the work of a frame; [Loom.Idle] and
// [WithWakeFunc] tell a loop that sleeps between frames when to wake;
// [WithFrameObserver] reports each frame's [FrameStats]. A [Scope] ends the
// work of one owner, such as a game object, together; [Loom.RunAsync] runs
// functions off the loop; a [Progress] carries a worker's progress to the
// frames that show it.
//
// # Time
//
// A loom reads the real clock (time.Now, which testing/synctest fakes), or,
// made with [ManualClock], a clock the game advances with
// [Loom.UpdateDelta]. It keeps the frame count, unscaled time and scaled
// time, whose rate [Loom.SetTimeScale] sets (0 pauses it). PostAfter and
// [WaitForSecondsRealtime] count on unscaled time; [Loom.PostAfterScaled],
// [WaitForSeconds] and the fixed steps on scaled time, as game logic does.
// The clocks, and due times, stop at the end of their range (math.MaxInt64
// nanoseconds, about 292 years) rather than wrap, so a delay of
// math.MaxInt64 means no timeout: only a clock at that end, which a real
// clock never reaches, runs it.
//
// # Coroutines
//
// A coroutine is a Go iterator function, func(yield func([Instruction])
// bool), which the loop resumes with iter.Pull; what it yields says when it
// resumes: [NextFrame], [WaitForSeconds], [WaitForFrames], [WaitUntil],
// [WaitFor] another coroutine or any [Waitable] (a taskqueue handle, say),
// [WaitAll] or [WaitAny] of several, and more. StartCoroutine works from any
// goroutine and never runs the body on the caller: the body begins on the
// loop, in the running frame or the next. This is the one place where the
// loom differs from Unity, since an iter.Pull coroutine must be created and
// resumed on the loop's goroutine; yield(WaitFor(l.StartCoroutine(inner))),
// Unity's yield return StartCoroutine(inner()), keeps its timing.
// [Coroutine.Stop], [Loom.StopAllCoroutines], closing the coroutine's Scope
// or the loom, or the end of the context of [Loom.StartCoroutineContext]
// end a coroutine from any goroutine: it never resumes after, its yield
// reports false and its defers run (Unity skips finally blocks). [StartTask]
// gives a coroutine a typed result; [Loom.Coroutines] lists the live ones
// and what they wait for.
//
// # Panics
//
// A panic in an action, a delayed action, a coroutine, a background
// function, a wait's predicate or any other function of the program that
// the loom calls is recovered and given, as a [*PanicError] with its stack
// and the loom's name ([WithName]) as its Source, to the handler set with
// [WithPanicHandler] (by default, log/slog's default logger); the frame goes
// on. A panic in a coroutine, or in a function one of its waits calls, ends
// that coroutine only.
//
// Misuse panics in the caller, with a message naming the call: a nil
// function, coroutine, Waitable or context where one is needed (PostAfter
// and PostAfterScaled alone take a nil function, for a Timer that only
// marks the time), a time scale SetTimeScale cannot take, a Progress count
// out of range, the zero value of a type the loom makes.
//
// # Testing
//
// Code that uses a loom is tested with testing/synctest: create the loom in
// the bubble and call Update from a goroutine of the bubble, after
// time.Sleep or on a time.Ticker, to move through frames instantly. A loom
// made with ManualClock moves only with UpdateDelta, in or out of a bubble.
package loom
