package taskqueue_test

import (
	"bytes"
	"runtime"
)

// bubbleGoroutines returns the number of goroutines in the calling
// goroutine's testing/synctest bubble, the caller included, from the headers
// of a dump of every goroutine ("goroutine 21 [running, synctest bubble 1]:"):
// runtime.NumGoroutine counts the whole process, where goroutines of earlier
// tests may still be ending. It panics if the caller is not in a bubble.
func bubbleGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	first, _, _ := bytes.Cut(buf, []byte("\n")) // the caller's stack comes first
	i := bytes.Index(first, []byte(", synctest bubble "))
	if i < 0 {
		panic("bubbleGoroutines called outside a synctest bubble")
	}
	tag := first[i:]
	count := 0
	for line := range bytes.Lines(buf) {
		if bytes.HasPrefix(line, []byte("goroutine ")) && bytes.Contains(line, tag) {
			count++
		}
	}
	return count
}
