//go:build race

package loom_test

// raceEnabled is true when the race detector runs, under which sync.Pool
// drops what it holds at random: counts of allocations that go through one
// (fmt's printers do) are not exact then.
const raceEnabled = true
