//go:build !race

package taskqueue_test

const raceEnabled = false
