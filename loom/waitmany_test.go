package loom_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
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
}

// A WaitAll over coroutines of the same loom and a panicking member: the
// panic of Done ends only the waiting coroutine, as every wait's does.
func TestWaitAllOfCoroutinesAndAPanickingMember(t *testing.T) {
	l, panics := testLoom(t)
	c1 := l.StartCoroutine(func(y func(loom.Instruction) bool) { y(loom.WaitForFrames(3)) })
	c2 := l.StartCoroutine(func(y func(loom.Instruction) bool) { y(loom.WaitForSeconds(5 * time.Millisecond)) })
	var at int64
	l.StartCoroutine(func(y func(loom.Instruction) bool) {
		if y(loom.WaitAll(c1, c2)) {
			at = l.Frame()
		}
	})
	bad := l.StartCoroutine(func(y func(loom.Instruction) bool) { y(loom.WaitAll(c1, panickyWaitable{})) })
	for range 8 {
		update(t, l)
	}
	if at != 6 { // they begin in frame 1: frame 4 and 6 (5ms at 1ms a frame)
		t.Errorf("WaitAll of two coroutines resumed in frame %d, want 6, the pass in which the later ends", at)
	}
	var pe *loom.PanicError
	if !errors.As(bad.Err(), &pe) || panics.Len() != 1 {
		t.Errorf("the coroutine whose member panicked: Err %v, %d panics handled", bad.Err(), panics.Len())
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

// Await waits on a goroutine for a mix of waitables, bounded by a context.
func TestAwait(t *testing.T) {
	a, b := newFuture(), newFuture()
	boom := errors.New("b failed")
	go func() { a.end(nil); b.end(boom) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := loom.Await(ctx, a, b); err != boom {
		t.Fatalf("Await() = %v, want b's error", err)
	}
	never := newFuture()
	short, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if err := loom.Await(short, never); err != context.Canceled {
		t.Fatalf("Await with a done context = %v", err)
	}
}

// TestPostBeforeDoneRunsBeforeResume: a function posted to the loom before a
// Waitable is done runs before a coroutine waiting for it resumes, even when
// the Waitable becomes done in the middle of a frame, after the frame's
// actions and before its coroutine pass: the shape of a worker that posts
// its result and then returns. Posts made later do not hold the coroutine
// back, so that a loom under a steady stream of posts still resumes it.
func TestPostBeforeDoneRunsBeforeResume(t *testing.T) {
	for _, c := range []struct {
		name string
		wait func(w loom.Waitable) loom.Instruction
	}{
		{"WaitFor", loom.WaitFor},
		{"WaitAll", func(w loom.Waitable) loom.Instruction { return loom.WaitAll(w) }},
		{"WaitAny", func(w loom.Waitable) loom.Instruction { return loom.WaitAny(w, newFuture()) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := loom.New(loom.ManualClock())
			defer l.Close()
			w := newFuture()
			applied, resumedIn := false, int64(0)
			var sawApplied bool
			l.StartCoroutine(func(yield func(loom.Instruction) bool) {
				if yield(c.wait(w)) {
					resumedIn, sawApplied = l.Frame(), applied
				}
			})
			// A stream of posts, one per frame, that never ends.
			var again func()
			again = func() { l.Post(again) }
			l.Post(again)
			l.UpdateDelta(time.Millisecond) // frame 1: the coroutine begins and waits
			l.Post(func() {
				l.Post(func() { applied = true }) // the result, posted first
				w.end(nil)                        // then the handle is done
			})
			for range 4 {
				l.UpdateDelta(time.Millisecond)
			}
			if !sawApplied || resumedIn != 3 {
				t.Errorf("the coroutine resumed in frame %d, having seen the result applied: %v; want frame 3, true", resumedIn, sawApplied)
			}
		})
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
