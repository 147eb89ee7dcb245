package taskqueue

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// chunksPerSlot is how many chunks Apply cuts the work into for each slot of
// the queue (and the caller): enough that a slow chunk leaves the others
// something to take, few enough that a million tiny iterations cost a few
// dozen hand-offs, not a million.
const chunksPerSlot = 8

// Apply calls f(i) for every i in [0, n), on q's slots and on the calling
// goroutine, which takes part in the work as libdispatch's dispatch_apply
// does, and returns when all calls have returned. The iterations are cut
// into chunks of consecutive indices that the participants take in turn, so
// a million tiny iterations cost a few dozen tasks. Iterations run in no
// particular order, at most q.Limit()+1 at a time.
//
// Apply stops handing out chunks once ctx is done or an iteration has
// panicked, and returns ctx.Err() or the first panic as a *PanicError; the
// iterations started by then run to their end. Called from a task of q, it
// works too: the caller does the chunks that no slot takes. Apply panics if
// n < 0.
func Apply(ctx context.Context, q *Queue, n int, f func(i int)) error {
	if f == nil {
		nilFunc("Apply")
	}
	return apply(ctx, q, n, "Apply", func(_ context.Context, i int) error {
		f(i)
		return nil
	})
}

// ForEach calls f on every item of items as Apply does, and returns the
// first error f returned (the others stop being handed out then), or the
// first panic as a *PanicError, or ctx.Err().
func ForEach[T any](ctx context.Context, q *Queue, items []T, f func(ctx context.Context, item T) error) error {
	if f == nil {
		nilFunc("ForEach")
	}
	return apply(ctx, q, len(items), "ForEach", func(ctx context.Context, i int) error {
		return f(ctx, items[i])
	})
}

// Map calls f on every item of items as Apply does, and returns the results
// in the order of the items. On the first error (or panic, or ctx done), it
// stops handing out items and returns the error with a nil slice.
func Map[T, U any](ctx context.Context, q *Queue, items []T, f func(ctx context.Context, item T) (U, error)) ([]U, error) {
	if f == nil {
		nilFunc("Map")
	}
	out := make([]U, len(items))
	err := apply(ctx, q, len(items), "Map", func(ctx context.Context, i int) error {
		v, err := f(ctx, items[i])
		out[i] = v
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// apply runs f(ctx, i) for i in [0, n) in chunks on q and the caller.
func apply(ctx context.Context, q *Queue, n int, call string, f func(context.Context, int) error) error {
	if n < 0 {
		panic(fmt.Sprintf("taskqueue: %s with %d iterations", call, n))
	}
	if n == 0 {
		return ctx.Err()
	}
	helpers := min(q.Limit(), n-1)
	chunks := min(n, (helpers+1)*chunksPerSlot)
	size := (n + chunks - 1) / chunks
	w := &applyWork{q: q, n: n, size: size, chunks: (n + size - 1) / size, f: f}
	ctx, w.stop = context.WithCancelCause(ctx)
	defer w.stop(nil)

	hs := make([]*Handle, 0, helpers)
	for range helpers {
		hs = append(hs, q.RunAsync(ctx, func(ctx context.Context) error {
			w.work(ctx)
			return nil
		}))
	}
	w.work(ctx)
	// The chunks are all taken: helpers that have not started have nothing
	// to do, and on a serial queue whose task called Apply they never could.
	for _, h := range hs {
		if !h.Cancel() {
			_ = h.Wait(context.Background()) // it runs, or ran: its chunk ends soon
		}
	}
	if err := w.err(); err != nil {
		return err
	}
	return context.Cause(ctx)
}

// applyWork is the state Apply's participants share.
type applyWork struct {
	q               *Queue
	n, size, chunks int
	next            atomic.Int64 // the next chunk to take
	f               func(context.Context, int) error
	stop            context.CancelCauseFunc

	mu    sync.Mutex
	first error
}

// work takes chunks until none is left, ctx is done or an iteration failed.
func (w *applyWork) work(ctx context.Context) {
	for ctx.Err() == nil {
		c := int(w.next.Add(1) - 1)
		if c >= w.chunks {
			return
		}
		if err := w.chunk(ctx, c); err != nil {
			w.fail(err)
			return
		}
	}
}

// chunk runs the iterations of chunk c, returning the first error or panic.
func (w *applyWork) chunk(ctx context.Context, c int) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = newPanicError(v, w.q)
		}
	}()
	for i := c * w.size; i < min((c+1)*w.size, w.n); i++ {
		if err := w.f(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

func (w *applyWork) fail(err error) {
	w.mu.Lock()
	if w.first == nil {
		w.first = err
	}
	w.mu.Unlock()
	w.stop(err)
}

func (w *applyWork) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.first
}
