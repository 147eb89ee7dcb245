package testkit

import (
	"bytes"
	"sync"
)

// A Buffer is a bytes.Buffer that one goroutine, such as a logger's, may
// write while another reads it. The zero Buffer is empty and ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer; it never fails.
func (w *Buffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// String returns what was written since the last Reset.
func (w *Buffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// Len returns the number of bytes written since the last Reset.
func (w *Buffer) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Len()
}

// Reset empties the buffer.
func (w *Buffer) Reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Reset()
}
