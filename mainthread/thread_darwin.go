//go:build darwin

package mainthread

import "syscall"

// threadID returns the ID of the calling OS thread, from the kernel's
// thread_selfid.
func threadID() uint64 {
	id, _, _ := syscall.RawSyscall(syscall.SYS_THREAD_SELFID, 0, 0, 0)
	return uint64(id)
}

// knownThreads is true where threadID tells threads apart.
const knownThreads = true
