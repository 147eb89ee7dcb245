package taskqueue

import (
	"runtime"
	"sync"
)

var (
	defaultSerial     = sync.OnceValue(func() *Queue { return newDefault(1) })
	defaultConcurrent = sync.OnceValue(func() *Queue { return newDefault(runtime.GOMAXPROCS(0)) })
)

func newDefault(limit int) *Queue {
	q := newQueue(limit, nil)
	q.isDefault = true
	return q
}

// DefaultSerial returns the process-wide serial queue, created on first use.
// It is safe for concurrent first use. While idle it holds no goroutine,
// channel or timer, so it can be used by one testing/synctest bubble after
// another. Its panics go to log/slog's default logger. It cannot be closed.
func DefaultSerial() *Queue { return defaultSerial() }

// DefaultConcurrent returns the process-wide concurrent queue, created on
// first use. It runs up to runtime.GOMAXPROCS(0) tasks at once, read at first
// use: it is meant for CPU-bound work, for which more tasks than processors
// add no speed. Work that blocks (on I/O, or waiting for other tasks of this
// queue) wants a queue of its own, sized for it. Like DefaultSerial, it is
// safe for concurrent first use, holds nothing while idle and cannot be
// closed.
func DefaultConcurrent() *Queue { return defaultConcurrent() }
