//go:build js

package mainthread

// threadID returns the ID of the calling OS thread: a page runs every
// goroutine on its one thread, the main thread.
func threadID() uint64 { return 1 }

// knownThreads is true where threadID tells threads apart; in a page there
// is nothing to tell apart.
const knownThreads = true
