// Command ebiten runs this module inside Ebitengine, a game engine that owns
// the main thread itself: the game's Update, on Ebitengine's game goroutine,
// drives a loom of its own. A coroutine sequences the scenes (loading,
// playing, done); the asset files are decoded on a concurrent queue, and the
// images made from them in the frames, under a frame budget.
//
//	go run .                      # a window, until closed
//	go run . -check shot.png      # check mode: play, save a screenshot, verify it
//
// It needs cgo, an OpenGL driver and, on Linux, the X11 development
// packages (see the README).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/hajimehoshi/ebiten/v2"
)

func main() {
	shot := flag.String("check", "", "check mode: play, save a screenshot of tick 60 of the playing scene to this PNG file, verify it, and exit")
	play := flag.Duration("play", 20*time.Second, "how long the playing scene lasts (2s in check mode)")
	flag.Parse()
	if err := run(*shot, *play); err != nil {
		fmt.Fprintln(os.Stderr, "ebiten:", err)
		os.Exit(1)
	}
}

// run plays the game in a window; with a screenshot path, in check mode.
func run(shot string, play time.Duration) error {
	var c *check
	if shot != "" {
		c = &check{path: shot}
		play = 2 * time.Second
	}
	g := newGame(play, c)
	ebiten.SetWindowSize(screenW, screenH)
	ebiten.SetWindowTitle("taskqueue in Ebitengine")
	ebiten.SetWindowClosingHandled(true) // so that Update can close the loom
	if err := ebiten.RunGame(g); err != nil {
		return err
	}
	if c != nil && g.scene != sceneDone {
		return errors.New("check: the game ended before the done scene")
	}
	return nil
}
