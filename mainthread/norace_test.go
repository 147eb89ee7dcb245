//go:build !race

package mainthread_test

const raceEnabled = false
