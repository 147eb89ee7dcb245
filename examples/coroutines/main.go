// Command coroutines runs the coroutine programs of the three articles on
// Unity coroutines that package loom ports, rewritten on a loom:
//
//	nested  an outer coroutine waits for an inner one that counts seconds
//	waits   waits of one, two and three seconds
//	frames  frame waits and WaitWhile over 20 frames of 100 ms, next to a
//	        per-frame Update
//
// Each runs on a render goroutine locked to its own OS thread, with a ticker
// for frames, as a game loop would.
//
//	go run ./examples/coroutines            # all three, about 16 seconds
//	go run ./examples/coroutines nested
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

var programs = []struct {
	name string
	run  func(w io.Writer)
}{
	{"nested", nested},
	{"waits", waits},
	{"frames", frames},
}

func main() {
	ran := false
	for _, p := range programs {
		if len(os.Args) > 1 && os.Args[1] != p.name {
			continue
		}
		fmt.Printf("== %s\n", p.name)
		onRenderThread(func() { p.run(os.Stdout) })
		ran = true
	}
	if !ran {
		fmt.Fprintf(os.Stderr, "coroutines: unknown program %q; want nested, waits or frames\n", os.Args[1])
		os.Exit(2)
	}
}

// onRenderThread runs f on a new goroutine locked to its own OS thread, as a
// render thread is, and waits for it.
func onRenderThread(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		f()
	}()
	<-done
}

// loop runs frames of l every interval until c ends (if c is not nil), at
// most max frames, then closes l.
func loop(l *loom.Loom, interval time.Duration, max int, c *loom.Coroutine, beforeFrame func()) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	defer l.Close()
	// The first frame, at once, is the one in which the program's
	// coroutines begin, as Unity's Start runs before the first Update.
	l.Update()
	var done <-chan struct{}
	if c != nil {
		done = c.Done()
	}
	for range max {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		if beforeFrame != nil {
			beforeFrame()
		}
		l.Update()
	}
}

// nested is the first article's program: the outer coroutine starts the
// inner one and waits for it, then waits three seconds more. Its output is
// the article's, line for line.
func nested(w io.Writer) {
	l := loom.New()
	inner := func(yield func(loom.Instruction) bool) {
		for i := range 5 {
			if !yield(loom.WaitForSeconds(time.Second)) {
				return
			}
			fmt.Fprintf(w, "Coroutine inner %d\n", i)
		}
	}
	outer := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		fmt.Fprintln(w, "Logic out")
		if !yield(loom.WaitFor(l.StartCoroutine(inner))) {
			return
		}
		if !yield(loom.WaitForSeconds(3 * time.Second)) {
			return
		}
		fmt.Fprintln(w, "Logic out end")
	})
	loop(l, time.Second/60, 60*10, outer, nil)
}

// waits is the second article's program: waits of one, two and three
// seconds, each line stamped with the loom's time.
func waits(w io.Writer) {
	l := loom.New()
	log := func(s string) { fmt.Fprintf(w, "%.1fs %s\n", l.Time().Seconds(), s) }
	c := l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		for _, d := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
			log(fmt.Sprintf("wait for %v", d))
			if !yield(loom.WaitForSeconds(d)) {
				return
			}
		}
		log("end")
	})
	loop(l, time.Second/60, 60*8, c, nil)
}

// frames is the third article's TestMono: an Update that counts the frames,
// and a coroutine that waits for frames and for conditions on the count,
// over 20 frames of 100 ms. As in Unity, Update runs before the coroutines in
// each frame. The coroutine prints the count where the article printed the
// count it expected; a condition polled from the frame after the yield sees
// Update's increment of that frame.
func frames(w io.Writer) {
	l := loom.New()
	i := 1
	update := func() {
		fmt.Fprintf(w, "------------------------------ Tick ...... %d\n", i)
		i++
	}
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		if !yield(loom.WaitForFrames(5)) {
			return
		}
		fmt.Fprintf(w, "Begin (i = %d)\n", i)
		if !yield(loom.WaitWhile(func() bool { return i < 4 })) {
			return
		}
		fmt.Fprintf(w, "Wait4 (i = %d)\n", i)
		if !yield(loom.NextFrame()) {
			return
		}
		fmt.Fprintf(w, "Wait5 (i = %d)\n", i)
		if !yield(loom.NextFrame()) {
			return
		}
		fmt.Fprintf(w, "Wait6 (i = %d)\n", i)
		if !yield(loom.NextFrame()) {
			return
		}
		if !yield(loom.WaitWhile(func() bool { return i < 10 })) {
			return
		}
		fmt.Fprintf(w, "End (i = %d)\n", i)
	})
	// The loop runs its 20 frames whether or not the coroutine has ended,
	// as the article's does.
	loop(l, 100*time.Millisecond, 20, nil, func() { l.Post(update) })
}
