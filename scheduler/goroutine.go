package scheduler

// Go offers no goroutine identity, and the inlining rule needs one: "the
// calling goroutine is running an item of this scheduler" is what .NET keeps
// in a thread-static flag. A context value cannot carry it for free (it
// costs an allocation per call) and misses work started without a context.
// So the scheduler records the runtime's g pointer of each goroutine that
// holds a slot. The pointer is stable for the life of a goroutine; it may be
// reused after the goroutine exits, by which time it holds no slot.
//
// curg returns that identity for the calling goroutine: read from the g
// register or thread-local slot on amd64 and arm64 (goroutine_*.s), parsed
// from the goroutine's stack header elsewhere (goroutine_other.go), which is
// slower but equally correct.
