package loom_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// TestScopeClose: the work posted through a scope runs as the loom's does
// until the scope is closed; Close, from another goroutine as from the
// loop, drops its actions not run yet, stops its timers at once (ErrClosed)
// and its coroutines and tasks on the loop, in the next frame, with
// ErrClosed, their defers run; the loom's own work goes on; posting through
// a closed scope returns ErrClosed; Close is idempotent.
func TestScopeClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := loom.New()
		defer l.Close()
		r := &recorder{l: l}
		s := l.NewScope()
		loop := func(name string) func(func(loom.Instruction) bool) {
			return func(yield func(loom.Instruction) bool) {
				defer r.add(name + " defer")
				for yield(loom.NextFrame()) {
				}
			}
		}
		s.Post(r.note("scoped action"))
		s.PostAfter(time.Second, r.note("scoped timer"))
		timers := []*loom.Timer{s.PostAfter(time.Minute, r.note("never")), s.PostAfterScaled(time.Minute, r.note("never"))}
		c := s.StartCoroutine(loop("scoped"))
		task := loom.StartTask(s, func(yield func(loom.Instruction) bool) (int, error) {
			yield(loom.WaitForFrames(10))
			return 5, nil
		})
		l.StartCoroutine(loop("unscoped"))
		l.Post(r.note("loom action"))
		l.PostAfter(time.Second, r.note("loom timer"))
		l.Update()
		r.expect(t, "frame 1", "1:scoped action", "1:loom action")
		time.Sleep(time.Second)
		l.Update()
		r.expect(t, "frame 2", "2:scoped timer", "2:loom timer")

		s.Post(r.note("dropped by Close"))
		l.PostAfter(time.Second, r.note("loom timer"))
		done := make(chan struct{})
		go func() { s.Close(); s.Close(); close(done) }()
		<-done
		for i, tm := range timers {
			if !tm.IsDone() || tm.Err() != loom.ErrClosed {
				t.Errorf("timer %d of the closed scope: done %v, Err() = %v; want ErrClosed", i, tm.IsDone(), tm.Err())
			}
		}
		r.expect(t, "closed from another goroutine")
		for name, err := range map[string]error{
			"Post":            s.Post(r.note("never")),
			"PostAfter":       s.PostAfter(0, r.note("never")).Err(),
			"PostAfterScaled": s.PostAfterScaled(0, r.note("never")).Err(),
			"StartCoroutine":  s.StartCoroutine(loop("never")).Err(),
			"StartTask":       loom.StartTask(s, func(func(loom.Instruction) bool) (int, error) { return 1, nil }).Err(),
		} {
			if err != loom.ErrClosed {
				t.Errorf("%s on a closed scope: %v; want ErrClosed", name, err)
			}
		}
		time.Sleep(time.Minute)
		l.Update()
		r.expect(t, "the next frame", "3:loom timer", "3:scoped defer")
		if !errors.Is(c.Err(), loom.ErrClosed) {
			t.Errorf("the scope's coroutine: Err() = %v; want ErrClosed", c.Err())
		}
		if v, err := task.Result(); v != 0 || !errors.Is(err, loom.ErrClosed) {
			t.Errorf("the scope's task: Result() = %v, %v; want 0, ErrClosed", v, err)
		}
		if i := l.Idle(); i.Now || i.Timed {
			t.Errorf("Idle() = %+v; want nothing pending", i)
		}
		if n := len(l.Coroutines()); n != 1 {
			t.Errorf("%d coroutines live; want the unscoped one", n)
		}
	})
}

// TestZeroScopePanics: the zero Scope is not usable, as documented, and
// says how to make one.
func TestZeroScopePanics(t *testing.T) {
	var s loom.Scope
	const want = "loom: use of a zero Scope; make one with Loom.NewScope"
	checkMisuse(t,
		misuse{func() { s.Post(func() {}) }, want},
		misuse{func() { s.PostAfter(0, nil) }, want},
		misuse{func() { s.PostAfterScaled(0, nil) }, want},
		misuse{func() { s.StartCoroutine(func(func(loom.Instruction) bool) {}) }, want},
		misuse{func() { s.Close() }, want},
	)
}
