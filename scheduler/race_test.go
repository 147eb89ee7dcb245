//go:build race

package scheduler_test

// raceEnabled is true when the race detector runs, which makes the hammers
// many times slower; they run smaller then.
const raceEnabled = true
