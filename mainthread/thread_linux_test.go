package mainthread_test

import (
	"os"
	"syscall"
	"testing"
)

// onMainThread reports whether the calling goroutine runs on the process's
// main thread, whose thread ID is the process ID on Linux.
func onMainThread(*testing.T) bool {
	return syscall.Gettid() == os.Getpid()
}
