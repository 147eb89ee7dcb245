//go:build !race

package testkit

// RaceEnabled reports whether the race detector is on, which makes stress
// tests many times slower: they run smaller under it, and at full size in
// a run without it.
const RaceEnabled = false
