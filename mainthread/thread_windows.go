//go:build windows

package mainthread

import "syscall"

var getCurrentThreadID = syscall.NewLazyDLL("kernel32.dll").NewProc("GetCurrentThreadId")

// threadID returns the ID of the calling OS thread.
func threadID() uint64 {
	id, _, _ := getCurrentThreadID.Call()
	return uint64(id)
}

// knownThreads is true where threadID tells threads apart.
const knownThreads = true
