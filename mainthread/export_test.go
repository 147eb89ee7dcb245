package mainthread

// Counters returns how many calls' callers went to wait instead of seeing
// the outcome while they polled, and how many times Run's loop went to
// sleep, so far.
func Counters() (waits, sleeps int64) { return callerWaits.Load(), loopSleeps.Load() }
