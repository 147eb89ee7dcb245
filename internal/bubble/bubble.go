// Package bubble counts the goroutines of the calling goroutine's
// testing/synctest bubble, for tests that check that a piece of the module
// holds no goroutine. runtime.NumGoroutine counts the whole process, where
// goroutines of earlier tests may still be ending; the goroutines of one
// bubble are the test's alone.
package bubble

import (
	"bytes"
	"runtime"
)

// Goroutines returns the number of goroutines in the calling goroutine's
// synctest bubble, the caller included, from the headers of a dump of every
// goroutine ("goroutine 21 [running, synctest bubble 1]:"). It panics if
// the caller is not in a bubble.
func Goroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	tag := bubbleTag(buf) // the caller's stack comes first
	if tag == nil {
		panic("bubble: Goroutines called outside a synctest bubble")
	}
	count := 0
	for line := range bytes.Lines(buf) {
		if bytes.HasPrefix(line, []byte("goroutine ")) && bytes.Contains(line, tag) {
			count++
		}
	}
	return count
}

// bubbleTag returns ", synctest bubble N]" from the first goroutine header
// of dump, or nil if it has none.
func bubbleTag(dump []byte) []byte {
	line, _, _ := bytes.Cut(dump, []byte("\n"))
	i := bytes.Index(line, []byte(", synctest bubble "))
	if i < 0 {
		return nil
	}
	return line[i:]
}
