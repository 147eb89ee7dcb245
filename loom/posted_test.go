package loom_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/taskqueue-go/taskqueue/loom"
)

// TestPostersAndFramesStress has posters post numbered actions (some of a
// scope, some panicking) while a loop runs frames as it is woken, under a
// budget, in rounds: each time the posters are done and the loop sleeps,
// every action posted has run exactly once, and each poster's in the order
// it posted them. A lost wake-up shows as a loop asleep with actions queued.
func TestPostersAndFramesStress(t *testing.T) {
	const posters = 8
	perPoster := 20_000
	if testing.Short() {
		perPoster = 2_000
	}
	synctest.Test(t, func(t *testing.T) {
		var p panics
		l := loom.New(loom.ManualClock(), loom.WithPanicHandler(p.Add), loom.WithBudget(500, 0))
		s := l.NewScope()
		seen := make([][]int, posters) // written by the actions, on the loop
		ran := 0
		record := func(poster, i int) {
			seen[poster] = append(seen[poster], i)
			ran++
		}

		stop := make(chan struct{})
		loopDone := make(chan struct{})
		go func() {
			defer close(loopDone)
			wake := l.Idle().Wake
			for {
				select {
				case <-stop:
					return
				case <-wake:
				}
				for l.Idle().Now {
					l.UpdateDelta(time.Millisecond)
				}
			}
		}()

		// Rounds of posts from every poster at once, each round ending with
		// the loop asleep, which it must not be with actions queued.
		const rounds = 10
		for round := range rounds {
			var wg sync.WaitGroup
			for poster := range posters {
				wg.Go(func() {
					for i := round * perPoster / rounds; i < (round+1)*perPoster/rounds; i++ {
						var err error
						switch {
						case i%97 == 0:
							err = l.Post(func() {
								record(poster, i)
								panic(i)
							})
						case poster%2 == 0:
							err = s.Post(func() { record(poster, i) })
						default:
							err = l.Post(func() { record(poster, i) })
						}
						if err != nil {
							t.Errorf("poster %d: Post(%d) = %v; want nil", poster, i, err)
							return
						}
					}
				})
			}
			wg.Wait()
			synctest.Wait() // the loop sleeps: it must have run everything
			if want := posters * (round + 1) * perPoster / rounds; ran != want {
				t.Errorf("round %d: %d actions ran before the loop slept; want %d: a post or a wake-up was lost", round, ran, want)
				break
			}
		}
		close(stop)
		<-loopDone
		l.Close()
		for poster, got := range seen {
			if len(got) != perPoster {
				t.Errorf("poster %d: %d actions ran; want %d", poster, len(got), perPoster)
				continue
			}
			for i, v := range got {
				if v != i {
					t.Errorf("poster %d: action %d ran in place %d", poster, v, i)
					break
				}
			}
		}
		wantPanics := posters * ((perPoster + 96) / 97)
		if got := len(p.Take()); got != wantPanics {
			t.Errorf("%d panics reported; want %d", got, wantPanics)
		}
	})
}
