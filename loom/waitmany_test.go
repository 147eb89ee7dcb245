package loom_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// The program of the report: 50 futures, all done by frame 16. A loop of
// WaitFor took a frame per future and ended at frame 53; WaitAll resumes in
// frame 16 itself, the first frame in which all are done (they end before
// it runs), and Await then returns the failure at once.
func TestWaitAllResumesInOneFrame(t *testing.T) {
	l, _ := testLoom(t)
	fs := make([]*future, 50)
	ws := make([]loom.Waitable, 50)
	for i := range fs {
		fs[i] = newFuture()
		ws[i] = fs[i]
	}
	var resumed int64
	var firstErr error
	l.StartCoroutine(func(y func(loom.Instruction) bool) {
		if y(loom.WaitAll(ws...)) {
			resumed, firstErr = l.Frame(), loom.Await(context.Background(), ws...)
		}
	})
	for frame := int64(1); frame <= 20; frame++ {
		if frame <= 16 {
			// done out of order, three or four a frame
			for i := int(frame-1) % 16; i < 50; i += 16 {
				var err error
				if i == 37 || i == 41 {
					err = fmt.Errorf("item %d", i)
				}
				fs[i].end(err)
			}
		}
		update(t, l)
	}
	if resumed != 16 {
		t.Fatalf("WaitAll resumed in frame %d, want 16 (the last ended just before frame 16)", resumed)
	}
	if firstErr == nil || firstErr.Error() != "item 37" {
		t.Fatalf("Await = %v, want item 37's error", firstErr)
	}
}

// TestWaitAnyAndFirstDone: WaitAny resumes in the first frame in which a
// member is done, and FirstDone names it; with no member, WaitAny resumes
// in the next frame, FirstDone reports -1 and Await returns nil.
func TestWaitAnyAndFirstDone(t *testing.T) {
	l, _ := testLoom(t)
	a, b, c := newFuture(), newFuture(), newFuture()
	ws := []loom.Waitable{a, b, c}
	var resumed int64
	first := -2
	l.StartCoroutine(func(y func(loom.Instruction) bool) {
		if y(loom.WaitAny(ws...)) {
			resumed, first = l.Frame(), loom.FirstDone(ws...)
		}
	})
	update(t, l)
	update(t, l)
	b.end(nil)
	update(t, l)
	if resumed != 3 || first != 1 {
		t.Fatalf("WaitAny resumed in frame %d with FirstDone %d; want frame 3, member 1", resumed, first)
	}
	if loom.FirstDone() != -1 || loom.Await(context.Background()) != nil {
		t.Fatal("FirstDone or Await of no member")
	}
	l.StartCoroutine(func(y func(loom.Instruction) bool) {
		if y(loom.WaitAny()) {
			resumed = l.Frame()
		}
	})
	update(t, l) // it begins
	update(t, l)
	if resumed != 5 {
		t.Errorf("WaitAny of no member resumed in frame %d; want 5, the next frame", resumed)
	}
}

// TestWaitAllLooksAtEachMemberOnce: over the whole wait, WaitAll asks each
// member for its Done channel once, however many frames it waits.
func TestWaitAllLooksAtEachMemberOnce(t *testing.T) {
	l, _ := testLoom(t)
	ws := make([]*countingWaitable, 10)
	members := make([]loom.Waitable, len(ws))
	for i := range ws {
		ws[i] = &countingWaitable{ch: make(chan struct{})}
		members[i] = ws[i]
	}
	resumed := false
	l.StartCoroutine(func(y func(loom.Instruction) bool) { resumed = y(loom.WaitAll(members...)) })
	for i := range ws {
		update(t, l)
		close(ws[i].ch)
		update(t, l)
	}
	update(t, l)
	if !resumed {
		t.Fatal("the WaitAll did not resume")
	}
	for i, w := range ws {
		if w.calls != 1 {
			t.Errorf("member %d: Done called %d times over the wait; want once", i, w.calls)
		}
	}
}

// countingWaitable is a Waitable that counts the calls of its Done.
type countingWaitable struct {
	ch    chan struct{}
	calls int
}

func (w *countingWaitable) Done() <-chan struct{} { w.calls++; return w.ch }

// TestWaitAllOfCoroutines: a WaitAll of coroutines of the same loom
// resumes in the pass in which the last of them ends.
func TestWaitAllOfCoroutines(t *testing.T) {
	l, _ := testLoom(t)
	c1 := l.StartCoroutine(func(y func(loom.Instruction) bool) { y(loom.WaitForFrames(3)) })
	c2 := l.StartCoroutine(func(y func(loom.Instruction) bool) { y(loom.WaitForSeconds(5 * time.Millisecond)) })
	var at int64
	l.StartCoroutine(func(y func(loom.Instruction) bool) {
		if y(loom.WaitAll(c1, c2)) {
			at = l.Frame()
		}
	})
	frames(l, 8, time.Millisecond)
	if at != 6 { // they begin in frame 1: frame 4 and 6 (5ms at 1ms a frame)
		t.Errorf("WaitAll of two coroutines resumed in frame %d, want 6, the pass in which the later ends", at)
	}
}

// Yielding a WaitAll made once allocates nothing per frame.
func TestWaitAllAllocatesOnlyWhenMade(t *testing.T) {
	l, _ := testLoom(t)
	fs := []loom.Waitable{newFuture(), newFuture()}
	wait := loom.WaitAll(fs...)
	l.StartCoroutine(func(y func(loom.Instruction) bool) {
		for y(wait) {
		}
	})
	update(t, l)
	if a := testing.AllocsPerRun(100, func() { update(t, l) }); a != 0 {
		t.Fatalf("a frame polling a WaitAll allocates %v times", a)
	}
}

// A wait bounded by a duration: WaitAny of the awaited thing and a Delay.
func TestWaitBoundedByDelay(t *testing.T) {
	l, _ := testLoom(t)
	slow := newFuture()
	var at int64
	first := -1
	l.StartCoroutine(func(y func(loom.Instruction) bool) {
		ws := []loom.Waitable{slow, l.PostAfterScaled(3*time.Millisecond, nil)}
		if y(loom.WaitAny(ws...)) {
			at, first = l.Frame(), loom.FirstDone(ws...)
		}
	})
	for range 6 {
		update(t, l)
	}
	if at != 4 || first != 1 { // it begins in frame 1, and waits 3ms
		t.Fatalf("resumed in frame %d with member %d first; want frame 4, the delay", at, first)
	}
}

// Await waits on a goroutine for a mix of waitables, bounded by a context:
// it returns the first failure in order once all are done, and ctx.Err()
// at once for a context done already, or when a deadline passes while it
// waits, at that instant of the bubble's fake clock. A hang would be a
// deadlock of the bubble, reported as such.
func TestAwait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := newFuture(), newFuture()
		boom := errors.New("b failed")
		go func() { a.end(nil); b.end(boom) }()
		if err := loom.Await(context.Background(), a, b); err != boom {
			t.Fatalf("Await() = %v, want b's error", err)
		}
		never := newFuture()
		short, cancel2 := context.WithCancel(context.Background())
		cancel2()
		if err := loom.Await(short, never); err != context.Canceled {
			t.Fatalf("Await with a done context = %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		if err := loom.Await(ctx, a, never); err != context.DeadlineExceeded {
			t.Fatalf("Await past its deadline = %v; want DeadlineExceeded", err)
		}
		if waited := time.Since(start); waited != 10*time.Second {
			t.Errorf("Await returned %v after it began; want 10s, its deadline", waited)
		}
	})
}

// TestAwaitEndedWorkWinsOverADoneContext: work that has ended already gives
// its outcome to Await and Task.Wait even when their context is done too,
// every time, not by the draw of a select between two ready channels.
func TestAwaitEndedWorkWinsOverADoneContext(t *testing.T) {
	l, _ := testLoom(t)
	boom := errors.New("boom")
	failed := loom.StartTask(l, func(func(loom.Instruction) bool) (int, error) { return 0, boom })
	seven := loom.StartTask(l, func(func(loom.Instruction) bool) (int, error) { return 7, nil })
	update(t, l)
	ok := newFuture()
	ok.end(nil)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 200 {
		if err := loom.Await(done, failed); err != boom {
			t.Fatalf("call %d: Await(done ctx, a failed task) = %v; want its error", i, err)
		}
		if err := loom.Await(done, ok, seven); err != nil {
			t.Fatalf("call %d: Await(done ctx, ended members) = %v; want nil", i, err)
		}
		if v, err := seven.Wait(done); v != 7 || err != nil {
			t.Fatalf("call %d: Task.Wait(done ctx) of a task that returned 7 = %v, %v; want 7, nil", i, v, err)
		}
	}
}

// TestFirstDoneNamesAMemberWhosePostsRan: a frame budget holds a WaitAny,
// seen over when its second member ended, for the posts that member made
// before its end; meanwhile the first member ends too. When the coroutine
// resumes, FirstDone names the first member, as it names the first in order
// of those done, and that member's posts, made before its end, have run,
// as those of the second.
func TestFirstDoneNamesAMemberWhosePostsRan(t *testing.T) {
	l := loom.New(loom.ManualClock(), loom.WithBudget(1, 0))
	defer l.Close()
	a, b := newFuture(), newFuture()
	applied := []bool{false, false}
	var resumedIn int64
	first, sawApplied := -2, []bool(nil)
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		if yield(loom.WaitAny(a, b)) {
			resumedIn, first = l.Frame(), loom.FirstDone(a, b)
			sawApplied = append(sawApplied, applied...)
		}
	})
	l.UpdateDelta(time.Millisecond) // frame 1: it begins and waits
	// b's worker posts its result after two other actions, then ends.
	l.Post(func() {})
	l.Post(func() {})
	l.Post(func() { applied[1] = true })
	b.end(nil)
	l.UpdateDelta(time.Millisecond) // frame 2: one post runs; the wait is seen over, held for b's posts
	l.UpdateDelta(time.Millisecond) // frame 3: the second post
	// a's worker posts its result and ends, while the coroutine is held.
	l.Post(func() { applied[0] = true })
	a.end(nil)
	for range 4 {
		l.UpdateDelta(time.Millisecond)
	}
	if first != 0 || resumedIn == 0 {
		t.Fatalf("resumed in frame %d, FirstDone = %d; want a resume, member 0, done by then", resumedIn, first)
	}
	if !sawApplied[0] || !sawApplied[1] {
		t.Errorf("resumed in frame %d with FirstDone = 0, the members' posts applied: %v; want both", resumedIn, sawApplied)
	}
}

// TestWaitManyMisuse: a nil member, or a nil *Coroutine or *Task, which
// could never end, makes WaitAll, WaitAny, FirstDone and Await panic,
// naming the call and the member's index.
func TestWaitManyMisuse(t *testing.T) {
	var c *loom.Coroutine
	var task *loom.Task[int]
	ok := make(waitable)
	var none context.Context
	checkMisuse(t,
		misuse{func() { loom.WaitAll(ok, task) }, "loom: WaitAll with a nil *loom.Task[int] at index 1"},
		misuse{func() { loom.WaitAny(c) }, "loom: WaitAny with a nil *loom.Coroutine at index 0"},
		misuse{func() { loom.WaitAny(ok, nil) }, "loom: WaitAny with a nil member at index 1"},
		misuse{func() { loom.FirstDone(nil) }, "loom: FirstDone with a nil member at index 0"},
		misuse{func() { loom.Await(context.Background(), nil) }, "loom: Await with a nil member at index 0"},
		// A nil context panics even when nothing would be waited for.
		misuse{func() { loom.Await(none, ok) }, "loom: Await with a nil context"},
		misuse{func() { loom.Await(none) }, "loom: Await with a nil context"}, // with nothing to wait for too
	)
}

// BenchmarkWaitAllPending measures a frame in which a coroutine waits with
// WaitAll for 1,000 members of which none is done: the wait looks at the
// first pending member only.
func BenchmarkWaitAllPending(b *testing.B) {
	l := loom.New(loom.ManualClock())
	defer l.Close()
	ws := make([]loom.Waitable, 1000)
	for i := range ws {
		ws[i] = make(waitable)
	}
	l.StartCoroutine(func(y func(loom.Instruction) bool) { y(loom.WaitAll(ws...)) })
	l.UpdateDelta(time.Millisecond)
	b.ReportAllocs()
	for b.Loop() {
		l.UpdateDelta(time.Millisecond)
	}
}

// TestWaitManyCostOneAllocationAndKeepACopy: WaitAll and WaitAny of a few
// members, listed or passed as a slice, cost one allocation when made and
// none in the frames that poll them; with more than four, two. Each keeps a
// copy of its members: the caller's slice, changed afterwards, changes
// nothing of the wait.
func TestWaitManyCostOneAllocationAndKeepACopy(t *testing.T) {
	a, b := make(waitable), make(waitable)
	ws := []loom.Waitable{a, b}
	five := []loom.Waitable{a, b, a, b, a}
	var sink loom.Instruction
	for _, c := range []struct {
		name string
		make func() loom.Instruction
		want float64
	}{
		{"WaitAll(a, b)", func() loom.Instruction { return loom.WaitAll(a, b) }, 1},
		{"WaitAny(a, b)", func() loom.Instruction { return loom.WaitAny(a, b) }, 1},
		{"WaitAll(ws...)", func() loom.Instruction { return loom.WaitAll(ws...) }, 1},
		{"WaitAll of five", func() loom.Instruction { return loom.WaitAll(five...) }, 2},
	} {
		if n := testing.AllocsPerRun(100, func() { sink = c.make() }); n != c.want {
			t.Errorf("%s costs %v allocations when made; want %v", c.name, n, c.want)
		}
	}
	_ = sink

	l, _ := testLoom(t)
	done, never := make(waitable), make(waitable)
	close(done)
	members := []loom.Waitable{done, done}
	wait := loom.WaitAll(members...)
	members[1] = never
	resumed := false
	l.StartCoroutine(func(y func(loom.Instruction) bool) { resumed = y(wait) })
	update(t, l)
	if n := testing.AllocsPerRun(1, func() { update(t, l) }); n != 0 {
		t.Errorf("the frame that resumes a WaitAll of two allocates %v times; want none", n)
	}
	if !resumed {
		t.Error("a WaitAll whose caller changed its slice afterwards waits for the new member; want the members it was made with")
	}
}
