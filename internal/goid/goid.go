// Package goid gives the calling goroutine an identity that no other
// goroutine, alive or started later, ever has.
//
// # Why the module needs it
//
// Go offers no goroutine identity, on purpose, but three rules of this module
// are about "the calling goroutine": a task that calls RunSync on its own
// queue runs the inner function in its place (.NET's TryExecuteTaskInline
// rule, which needs to know that the caller holds a slot), a loom panics when
// a goroutine other than its owner runs a frame, and code on a loom's loop
// runs coroutine starts at once. A context value cannot carry that for free
// (it costs an allocation per call) and misses work started without one.
//
// # Why the runtime's goroutine ID, and not the g pointer
//
// The runtime's g structure of a goroutine that exits is reused for a new
// goroutine, so a record keyed by its address can be matched by a later,
// unrelated goroutine. The goroutine ID is assigned afresh every time a
// goroutine starts, from a counter that only grows, and is never reused.
//
// # How it is read, and what breaks if the runtime changes
//
// On amd64, arm64 and 386, Current reads the ID out of the runtime's g structure,
// whose address is in a register or thread-local slot (goid_*.s), at an
// offset found once, on first use, by comparing candidate offsets with the
// IDs that runtime.Stack prints for several goroutines (the header
// "goroutine 18 [running]:"). If no offset matches all of them, as would
// happen if a Go release moved the ID out of the g structure, the probe fails
// safe: Current parses runtime.Stack on every call, about a microsecond
// instead of a nanosecond, and stays correct. On other architectures it
// always parses runtime.Stack. The tests check Current against runtime.Stack
// for many goroutines on every architecture CI runs.
package goid

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"
)

// offset is the byte offset of the goroutine ID in the runtime's g
// structure: 0 until the probe has run, -1 if the probe found none.
var offset atomic.Int64

var probeOnce sync.Once

// Current returns the ID of the calling goroutine. It is never 0, and no
// other goroutine of the process, alive or started later, has the same ID.
// It costs a few nanoseconds on amd64, arm64 and 386; see BenchmarkCurrent.
func Current() uint64 {
	if off := offset.Load(); off > 0 {
		return gword(uintptr(off))
	}
	return slow()
}

func slow() uint64 {
	if offset.Load() == 0 {
		probeOnce.Do(probe)
	}
	if off := offset.Load(); off > 0 {
		return gword(uintptr(off))
	}
	return fromStack()
}

// maxOffset bounds the probe's scan of the g structure, which holds the ID
// at byte 152 on 64-bit systems in Go 1.22 to 1.26.
const maxOffset = 512

// probe finds the offset of the goroutine ID in the g structure: the one
// offset at which every probed goroutine's g holds the ID that
// runtime.Stack prints for it. Several goroutines with different IDs make a
// chance match of another field impossible in practice.
func probe() {
	if !haveG {
		offset.Store(-1)
		return
	}
	const goroutines = 4
	results := make(chan []uintptr, goroutines)
	for range goroutines {
		go func() { results <- candidates() }()
	}
	found := candidates()
	for range goroutines {
		found = intersect(found, <-results)
	}
	if len(found) == 0 {
		offset.Store(-1)
		return
	}
	offset.Store(int64(found[0]))
}

// candidates returns the offsets in the calling goroutine's g structure that
// hold its ID.
func candidates() []uintptr {
	id := fromStack()
	var offs []uintptr
	const step = unsafe.Sizeof(uintptr(0)) // the ID is 4-aligned on 32-bit systems
	for off := step; off < maxOffset; off += step {
		if gword(off) == id {
			offs = append(offs, off)
		}
	}
	return offs
}

func intersect(a, b []uintptr) []uintptr {
	var both []uintptr
	for _, x := range a {
		for _, y := range b {
			if x == y {
				both = append(both, x)
			}
		}
	}
	return both
}

// fromStack returns the calling goroutine's ID, parsed from the header of
// its stack trace ("goroutine 18 [running]:").
func fromStack() uint64 {
	const prefix = "goroutine "
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	var id uint64
	if len(b) > len(prefix) && string(b[:len(prefix)]) == prefix {
		for _, c := range b[len(prefix):] {
			if c < '0' || c > '9' {
				break
			}
			id = id*10 + uint64(c-'0')
		}
	}
	if id == 0 {
		panic("goid: cannot read the goroutine ID from " + strconv.Quote(string(b)))
	}
	return id
}
