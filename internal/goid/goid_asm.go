//go:build amd64 || arm64 || 386

package goid

// haveG reports whether gword can read the g structure.
const haveG = true

// gword returns the 64-bit word at byte offset off in the calling
// goroutine's runtime g structure. Assembly, so that neither the compiler
// nor checkptr sees a pointer made from an integer.
//
//go:noescape
func gword(off uintptr) uint64
