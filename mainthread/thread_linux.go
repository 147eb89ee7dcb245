//go:build linux

package mainthread

import "syscall"

// threadID returns the ID of the calling OS thread.
func threadID() uint64 { return uint64(syscall.Gettid()) }

// knownThreads is true where threadID tells threads apart.
const knownThreads = true
