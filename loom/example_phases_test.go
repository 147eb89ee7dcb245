package loom_test

import (
	"fmt"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// Physics runs in fixed steps of 20ms whatever the frame rate: a 50ms frame
// runs two steps and carries 10ms over. A coroutine that waits for each step
// sees the world right after it moved.
func ExampleWithFixedStep() {
	y, v := 10.0, 0.0 // height in m, speed in m/s
	l := loom.New(loom.ManualClock(), loom.WithFixedStep(20*time.Millisecond, func(dt time.Duration) {
		v -= 9.81 * dt.Seconds()
		y += v * dt.Seconds()
	}), loom.WithFrameObserver(func(fs loom.FrameStats) {
		fmt.Printf("frame %d: %d steps, y = %.3f\n", fs.Frame, fs.FixedSteps, y)
	}))
	defer l.Close()
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		for y > 9.9 {
			if !yield(loom.WaitForFixedUpdate()) {
				return
			}
		}
		fmt.Printf("fell 10cm by frame %d, at %.2f m/s\n", l.Frame(), -v)
	})
	for range 4 {
		l.UpdateDelta(50 * time.Millisecond)
	}
	// Output:
	// frame 1: 2 steps, y = 9.988
	// frame 2: 3 steps, y = 9.941
	// fell 10cm by frame 3, at 1.37 m/s
	// frame 3: 2 steps, y = 9.890
	// frame 4: 3 steps, y = 9.784
}

// A coroutine that takes a screenshot waits for the end of the frame, after
// the loop has rendered it.
func ExampleWaitForEndOfFrame() {
	l := loom.New(loom.ManualClock())
	defer l.Close()
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		fmt.Println("update: move the camera")
		if !yield(loom.WaitForEndOfFrame()) {
			return
		}
		fmt.Println("end of frame: read the pixels back")
	})
	l.UpdateDelta(16 * time.Millisecond) // the coroutine begins in this frame
	fmt.Println("render")
	l.EndFrame()
	// Output:
	// update: move the camera
	// render
	// end of frame: read the pixels back
}

// A delayed action on scaled time waits while the game is paused; one on
// unscaled time, such as a menu's, does not.
func ExampleLoom_PostAfterScaled() {
	l := loom.New(loom.ManualClock())
	defer l.Close()
	l.PostAfterScaled(time.Second, func() { fmt.Println("game timer, at", l.UnscaledTime()) })
	l.PostAfter(time.Second, func() { fmt.Println("menu timer, at", l.UnscaledTime()) })
	l.SetTimeScale(0) // paused
	for range 3 {
		l.UpdateDelta(time.Second)
	}
	l.SetTimeScale(1)
	l.UpdateDelta(time.Second)
	// Output:
	// menu timer, at 1s
	// game timer, at 4s
}
