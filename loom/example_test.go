package loom_test

import (
	"context"
	"expvar"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// A worker goroutine hands its result to the loop, which applies it in the
// next frame on the loop's own goroutine.
func Example() {
	l := loom.New()
	var wg sync.WaitGroup
	wg.Go(func() {
		result := 6 * 7 // computed off the loop
		l.Post(func() { fmt.Println("applied in frame", l.Frame(), "result", result) })
	})
	wg.Wait()
	l.Update()
	// Output: applied in frame 1 result 42
}

func ExampleLoom_PostAfter() {
	l := loom.New(loom.ManualClock())
	l.PostAfter(50*time.Millisecond, func() {
		fmt.Println("ran at", l.UnscaledTime())
	})
	for range 4 {
		l.UpdateDelta(20 * time.Millisecond)
	}
	// Output: ran at 60ms
}

func ExampleTimer_Reset() {
	l := loom.New(loom.ManualClock())
	ticks := 0
	var t *loom.Timer
	t = l.PostAfter(time.Second, func() {
		ticks++
		t.Reset(time.Second) // a repeating timer; rescheduling allocates nothing
	})
	for range 5 {
		l.UpdateDelta(time.Second)
	}
	fmt.Println("ticks:", ticks)
	// Output: ticks: 5
}

func ExampleWithBudget() {
	l := loom.New(loom.WithBudget(2, 0))
	for i := range 5 {
		l.Post(func() { fmt.Print(i, " ") })
	}
	for range 3 {
		l.Update()
		fmt.Println("| end of frame", l.Frame())
	}
	// Output:
	// 0 1 | end of frame 1
	// 2 3 | end of frame 2
	// 4 | end of frame 3
}

func ExampleScope() {
	l := loom.New(loom.ManualClock())
	enemy := l.NewScope()
	enemy.PostAfter(time.Second, func() { fmt.Println("never: the enemy is gone") })
	l.PostAfter(time.Second, func() { fmt.Println("the level goes on") })
	enemy.Close() // the enemy was destroyed
	l.UpdateDelta(time.Second)
	// Output: the level goes on
}

func ExampleLoom_SetTimeScale() {
	l := loom.New(loom.ManualClock())
	l.UpdateDelta(time.Second)
	l.SetTimeScale(0) // pause
	l.UpdateDelta(time.Second)
	fmt.Println("scaled", l.Time(), "unscaled", l.UnscaledTime())
	// Output: scaled 1s unscaled 2s
}

func ExampleLoom_RunAsync() {
	l := loom.New()
	l.RunAsync(func() {
		sum := 0
		for i := 1; i <= 100; i++ {
			sum += i // heavy work, off the loop
		}
		l.Post(func() { fmt.Println("sum", sum) }) // the result, back on the loop
	})
	l.WaitBackground(context.Background())
	l.Update()
	// Output: sum 5050
}

// A frame observer publishes frame statistics through expvar, where a
// metrics scraper finds them.
func ExampleWithFrameObserver() {
	frames := expvar.NewMap("loom_example")
	l := loom.New(loom.ManualClock(), loom.WithName("game"), loom.WithFrameObserver(func(fs loom.FrameStats) {
		frames.Add("frames", 1)
		frames.Add("actions", int64(fs.Actions))
		frames.Add("carried_over", int64(fs.CarriedOver))
	}))
	defer l.Close()
	for range 3 {
		l.Post(func() {})
		l.UpdateDelta(time.Second / 60)
	}
	fmt.Println(strings.ReplaceAll(frames.String(), " ", ""))
	// Output: {"actions":3,"carried_over":0,"frames":3}
}

// A loop that sleeps between frames asks Idle how long it may sleep, and
// wakes early on its Wake channel when work arrives: here a worker's post,
// whose action arms a delayed one, which the loop sleeps until.
func ExampleLoom_Idle() {
	l := loom.New()
	done := false
	go l.Post(func() {
		fmt.Println("posted action")
		l.PostAfter(10*time.Millisecond, func() { fmt.Println("delayed action"); done = true })
	})
	for !done {
		idle := l.Idle()
		switch {
		case idle.Now:
		case idle.Timed:
			select {
			case <-idle.Wake:
			case <-time.After(idle.Delay):
			}
		default:
			<-idle.Wake
		}
		l.Update()
	}
	// Output:
	// posted action
	// delayed action
}

func ExampleWithPanicHandler() {
	l := loom.New(loom.WithPanicHandler(func(p *loom.PanicError) {
		fmt.Println("recovered:", p.Value)
	}))
	l.Post(func() { panic("bad frame data") })
	l.Post(func() { fmt.Println("the frame goes on") })
	l.Update()
	// Output:
	// recovered: bad frame data
	// the frame goes on
}

// A coroutine spreads work over frames: it runs up to each yield, then
// resumes when its instruction says.
func ExampleLoom_StartCoroutine() {
	l := loom.New(loom.ManualClock())
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		fmt.Println("frame", l.Frame(), "start")
		if !yield(loom.WaitForSeconds(2 * time.Second)) {
			return
		}
		fmt.Println("frame", l.Frame(), "two seconds later")
		if !yield(loom.WaitForFrames(3)) {
			return
		}
		fmt.Println("frame", l.Frame(), "three frames later")
	})
	for range 10 {
		l.UpdateDelta(500 * time.Millisecond)
	}
	// Output:
	// frame 1 start
	// frame 5 two seconds later
	// frame 8 three frames later
}

// A coroutine waits for another, as Unity's yield return StartCoroutine(...)
// does, and resumes in the frame in which the inner one ends.
func ExampleWaitFor() {
	l := loom.New(loom.ManualClock())
	fade := func(yield func(loom.Instruction) bool) {
		for alpha := 3; alpha > 0; alpha-- {
			fmt.Println("frame", l.Frame(), "alpha", alpha)
			if !yield(loom.NextFrame()) {
				return
			}
		}
	}
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		if !yield(loom.WaitFor(l.StartCoroutine(fade))) {
			return
		}
		fmt.Println("frame", l.Frame(), "faded out")
	})
	for range 4 {
		l.UpdateDelta(time.Second / 60)
	}
	// Output:
	// frame 1 alpha 3
	// frame 2 alpha 2
	// frame 3 alpha 1
	// frame 4 faded out
}

func ExampleWaitUntil() {
	l := loom.New(loom.ManualClock())
	loaded := false
	l.PostAfter(100*time.Millisecond, func() { loaded = true })
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		if yield(loom.WaitUntil(func() bool { return loaded })) {
			fmt.Println("loaded at", l.UnscaledTime())
		}
	})
	for range 5 {
		l.UpdateDelta(40 * time.Millisecond)
	}
	// Output: loaded at 120ms
}

// Stopping a coroutine makes its yield report false; its defers run.
func ExampleCoroutine_Stop() {
	l := loom.New(loom.ManualClock())
	c := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		defer fmt.Println("cleanup")
		for yield(loom.NextFrame()) {
			fmt.Println("tick")
		}
	})
	l.UpdateDelta(time.Millisecond) // it begins
	l.UpdateDelta(time.Millisecond)
	c.Stop() // it ends in the next frame
	l.UpdateDelta(time.Millisecond)
	fmt.Println(c.Err())
	// Output:
	// tick
	// cleanup
	// loom: coroutine stopped
}

func ExampleLoom_Coroutines() {
	l := loom.New(loom.ManualClock())
	stuck := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		for yield(loom.WaitForSecondsRealtime(time.Minute)) {
		}
	})
	l.UpdateDelta(time.Millisecond)
	for _, c := range l.Coroutines() {
		fmt.Println(c.Coroutine == stuck, c.State, c.Wait)
		c.Coroutine.Stop() // a coroutine that would otherwise never end
	}
	l.UpdateDelta(time.Millisecond)
	fmt.Println(len(l.Coroutines()), stuck.Err())
	l.Close()
	// Output:
	// true waiting WaitForSecondsRealtime(1m0s)
	// 0 loom: coroutine stopped
}
