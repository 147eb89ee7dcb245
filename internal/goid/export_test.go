package goid

// FromStack exposes the slow path, which the fast one must agree with.
var FromStack = fromStack

// Offset returns the offset the probe found: 0 before it ran, -1 if it
// found none (then Current parses runtime.Stack).
func Offset() int64 {
	Current()
	return offset.Load()
}

// HaveG reports whether this architecture reads the g structure.
const HaveG = haveG

// GWord exposes the assembly read, to show that g structures are reused.
func GWord(off uintptr) uint64 { return gword(off) }
