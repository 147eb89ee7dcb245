//go:build race

package mainthread_test

// raceEnabled is true when the race detector runs, which drops a quarter of
// what sync.Pool is given, on purpose: the allocation counts then mean
// nothing.
const raceEnabled = true
