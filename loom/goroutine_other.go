//go:build !amd64 && !arm64

package loom

import (
	"bytes"
	"runtime"
	"strconv"
)

// curg returns the calling goroutine's ID, parsed from the header of its
// stack trace ("goroutine 18 [running]:").
func curg() uintptr {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic("loom: cannot read the goroutine ID from " + strconv.Quote(string(buf[:])))
	}
	return uintptr(id)
}
