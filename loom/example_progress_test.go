package loom_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// Workers report through a Progress; a coroutine draws a bar from it each
// frame and waits for the end, with no lock on either side.
func ExampleProgress() {
	var p loom.Progress
	p.SetTotal(4)
	l := loom.New(loom.ManualClock())
	defer l.Close()
	l.StartCoroutine(func(yield func(loom.Instruction) bool) {
		for !p.Finished() {
			n := int(p.Fraction() * 8)
			fmt.Printf("[%s%s]\n", strings.Repeat("#", n), strings.Repeat(".", 8-n))
			if !yield(loom.NextFrame()) {
				return
			}
		}
		fmt.Println("loaded")
	})
	l.UpdateDelta(16 * time.Millisecond) // the coroutine begins
	for range 4 {
		p.Add(1) // a worker finishing an asset, on any goroutine
		l.UpdateDelta(16 * time.Millisecond)
	}
	// Output:
	// [........]
	// [##......]
	// [####....]
	// [######..]
	// loaded
}
