package taskqueue

import (
	"context"

	"github.com/taskqueue-go/taskqueue/internal/mainhook"
)

// HasTimer reports whether q holds a timer for delayed tasks.
func (q *Queue) HasTimer() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.timer != nil
}

// Slots returns the number of items running on the slots of q.s scheduler.
func (q *Queue) Slots() int { return q.s.Stats().Running }

// Wait waits until q is idle.
func (q *Queue) Wait(ctx context.Context) error { return q.s.Wait(ctx) }

// MainError exposes the mapping of the main-thread helpers' errors.
var MainError = mainError

// WithoutMainThread runs f as in a program that does not import package
// mainthread.
func WithoutMainThread(f func()) {
	call, goFn := mainhook.Call, mainhook.Go
	mainhook.Call, mainhook.Go = nil, nil
	defer func() { mainhook.Call, mainhook.Go = call, goFn }()
	f()
}
