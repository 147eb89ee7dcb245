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
// [Loom.PostAfter] and [Loom.PostAt] return a [Timer] for an action that runs
// once its delay has passed. Each Update runs one frame: first the actions
// posted before the frame began, in the order they were posted; then the
// delayed actions that are due, in due order (and in posting order when due
// together). Work posted during a frame waits for the next one. No callback
// runs with a lock held.
//
// [WithBudget] caps the work of a frame, so that a flood of posts from
// workers cannot stall rendering; what is left runs first in the next frame.
// A loop that sleeps between frames (in glfw.WaitEvents, say) learns when to
// wake from [Loom.Idle], [Loom.Wake] and [WithWakeFunc].
//
// # Time
//
// A loom reads the real clock (time.Now, which testing/synctest fakes), or,
// made with [ManualClock], a clock the game advances with [Loom.UpdateDelta].
// It keeps the frame count, unscaled time and scaled time, whose rate is set
// by [Loom.SetTimeScale] (0 pauses it). Delayed actions count on unscaled
// time.
//
// # Scopes and background work
//
// A [Scope] groups the actions and timers of one owner, such as a game object,
// and ends them together. [Loom.RunAsync] runs a function off the loop, at
// most eight at a time by default, on a scheduler.Scheduler.
//
// # Panics
//
// A panic in an action, a delayed action or a background function is
// recovered and given, as a [*PanicError] with its stack, to the handler set
// with [WithPanicHandler] (by default, the standard logger); the frame goes
// on with the next action.
//
// # Testing
//
// Code that uses a loom is tested with testing/synctest: create the loom in
// the bubble and call Update from a goroutine of the bubble, after
// time.Sleep or on a time.Ticker, to move through frames instantly.
package loom
