//go:build !race

package loom_test

const raceEnabled = false
