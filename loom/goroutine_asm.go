//go:build amd64 || arm64

package loom

// curg returns the address of the calling goroutine's runtime g structure.
//
//go:noescape
func curg() uintptr
