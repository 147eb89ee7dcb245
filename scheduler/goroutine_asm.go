//go:build amd64 || arm64

package scheduler

// curg returns the address of the calling goroutine's runtime g structure.
//
//go:noescape
func curg() uintptr
