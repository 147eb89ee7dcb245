//go:build !linux

package mainthread_test

import "testing"

// onMainThread skips the test: thread IDs are checked on Linux.
func onMainThread(t *testing.T) bool {
	t.Skip("thread IDs are checked on Linux")
	return false
}
