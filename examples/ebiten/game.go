package main

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"runtime"
	"time"

	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/ebitenutil"
	"github.com/hajimehoshi/ebiten/v2/vector"

	"github.com/taskqueue-go/taskqueue/loom"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

const (
	screenW = 640
	screenH = 480
)

// scene is what the game shows; the scenes coroutine moves through them.
type scene int

const (
	sceneLoading scene = iota
	scenePlaying
	sceneDone
	numScenes
)

func (s scene) String() string {
	return [...]string{"loading", "playing", "done"}[s]
}

// game is an ebiten.Game. Ebitengine calls Update and Draw on its game
// goroutine, which is not the process's main thread (Ebitengine keeps that
// for itself). The game's loom belongs to that goroutine: it is made
// without an owner, and the first Update, on the game goroutine, becomes
// its owner. Everything below the loom is touched only there, by Update,
// Draw, and the actions and coroutines the loom runs, so it needs no lock.
type game struct {
	l        *loom.Loom
	decoders *taskqueue.Queue // decodes the asset files, off the game goroutine
	writer   *taskqueue.Queue // saves the screenshot, in check mode
	play     time.Duration    // how long the playing scene lasts
	check    *check           // nil unless in check mode

	// Game goroutine only:
	assets    assets
	scene     scene
	frames    [numScenes]int // frames (ticks) begun in each scene
	playStart int64          // the loom frame in which the playing scene began
	lastTick  int64          // the playing scene's last tick
	quit      bool           // end the game after this Update
	err       error          // why the game failed
	closed    bool
}

// newGame returns a game that starts loading in its first frame.
func newGame(play time.Duration, check *check) *game {
	g := &game{
		decoders: taskqueue.NewConcurrent(runtime.GOMAXPROCS(0)),
		writer:   taskqueue.NewSerial(),
		play:     play,
		check:    check,
		assets:   assets{images: make(map[string]*ebiten.Image)},
	}
	// Ebitengine runs Update at a fixed rate (TPS, 60 by default) and games
	// count time in ticks, so the loom's clock is a manual one that moves by
	// one tick per Update: waits in seconds are then exact numbers of ticks.
	g.l = loom.New(
		loom.ManualClock(),
		loom.WithBudget(0, applyBudget),
		loom.WithPanicHandler(func(p *loom.PanicError) {
			// Actions and coroutines run on the game goroutine.
			g.fail(p)
		}),
	)
	// Called here, on the main goroutine, the coroutine is queued and starts
	// in the first frame, on the game goroutine.
	g.l.StartCoroutine(g.scenes)
	return g
}

// fail records the first error; Update returns it and Ebitengine stops.
func (g *game) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}

// Update runs one tick: the loom's frame (the asset images made under the
// budget, then the coroutines), on the game goroutine.
func (g *game) Update() error {
	if ebiten.IsWindowBeingClosed() {
		// Ebitengine will not call Update again: close the loom now, on its
		// owner, so that its coroutines end and their defers run.
		g.shutdown()
		return ebiten.Termination
	}
	if g.check != nil {
		g.check.onGameGoroutine(g.l)
	}
	before, s := g.assets.loaded, g.scene
	g.l.UpdateDelta(time.Second / time.Duration(ebiten.TPS()))
	g.frames[s]++
	if before < numAssets {
		g.assets.perTick = append(g.assets.perTick, g.assets.loaded-before)
	}
	if g.err != nil || g.quit {
		g.shutdown()
		if g.err != nil {
			return g.err
		}
		return ebiten.Termination
	}
	return nil
}

// shutdown stops the decoders and closes the loom, on the game goroutine.
func (g *game) shutdown() {
	if g.closed {
		return
	}
	g.closed = true
	g.decoders.CloseNow()
	g.fail(g.decoders.Close())
	g.fail(g.writer.Close())
	g.l.Close()
}

// scenes is the coroutine that sequences the game: load the assets, play,
// and show the end; in check mode, also save and check the screenshot.
func (g *game) scenes(yield func(loom.Instruction) bool) {
	g.scene = sceneLoading
	for _, name := range assetFiles() {
		err := g.decoders.Go(func() {
			img, err := decodeAsset(name) // on a worker
			// The image is made on the game goroutine, in a frame, under the
			// frame budget. Post fails only once the game has shut down.
			_ = g.l.Post(func() {
				if err != nil {
					g.fail(err)
					return
				}
				g.assets.add(name, img)
			})
		})
		if err != nil {
			g.fail(err)
			return
		}
	}
	if !yield(loom.WaitUntil(func() bool { return g.assets.loaded == numAssets })) {
		return
	}

	g.scene = scenePlaying
	g.playStart = g.l.Frame()
	if !yield(loom.WaitForSeconds(g.play)) {
		return
	}

	g.lastTick = g.playTick() - 1
	g.scene = sceneDone
	if g.check == nil {
		return // the end screen stays until the window closes
	}
	// Save the screenshot Draw took, off the game goroutine, and check it.
	shot := g.check.shot
	if shot == nil {
		g.fail(errors.New("check: no screenshot was taken in the playing scene"))
		return
	}
	h := g.writer.RunAsync(context.Background(), func(context.Context) error {
		if err := writePNG(g.check.path, shot.img); err != nil {
			return err
		}
		return verifyShot(g.check.path, shot.tick)
	})
	if !yield(loom.WaitFor(h)) {
		return
	}
	g.fail(h.Err())
	g.fail(g.check.report(g))
	g.quit = true
}

// playTick is the number of ticks since the playing scene began.
func (g *game) playTick() int64 { return g.l.Frame() - g.playStart }

// Draw draws the current scene; in check mode it reads the screen back.
func (g *game) Draw(screen *ebiten.Image) {
	switch g.scene {
	case sceneLoading:
		g.drawLoading(screen)
	case scenePlaying:
		t := g.playTick()
		drawWorld(screen, g.assets.images, t)
		ebitenutil.DebugPrint(screen, fmt.Sprintf("playing  tick %d  %.0f TPS", t, ebiten.ActualTPS()))
		if g.check != nil {
			g.check.capture(screen, t)
		}
	case sceneDone:
		drawWorld(screen, g.assets.images, g.lastTick)
		vector.DrawFilledRect(screen, 0, 0, screenW, screenH, color.RGBA{0, 0, 0, 160}, false)
		ebitenutil.DebugPrintAt(screen, fmt.Sprintf("done: %d frames loading, %d playing", g.frames[sceneLoading], g.frames[scenePlaying]), 220, 230)
	}
}

// drawLoading shows the whole map at half size, tile by tile as the assets
// arrive, and a progress bar.
func (g *game) drawLoading(screen *ebiten.Image) {
	screen.Fill(color.RGBA{16, 16, 24, 255})
	for row := range tileRows {
		for col := range tileCols {
			img := g.assets.images[tileFile(col, row)]
			if img == nil {
				continue
			}
			var op ebiten.DrawImageOptions
			op.GeoM.Scale(0.5, 0.5)
			op.GeoM.Translate(float64(col*tileSide/2), float64(row*tileSide/2))
			screen.DrawImage(img, &op)
		}
	}
	w := float32(screenW-40) * float32(g.assets.loaded) / numAssets
	vector.DrawFilledRect(screen, 20, screenH-30, w, 12, color.RGBA{240, 200, 60, 255}, false)
	vector.StrokeRect(screen, 20, screenH-30, screenW-40, 12, 1, color.White, false)
	ebitenutil.DebugPrint(screen, fmt.Sprintf("loading %d/%d assets", g.assets.loaded, numAssets))
}

// Layout fixes the screen's size, whatever the window's.
func (g *game) Layout(int, int) (int, int) { return screenW, screenH }

// camera returns the top left corner of the view of the world at tick t of
// the playing scene: a slow pan across the map, in whole pixels.
func camera(t int64) image.Point {
	x := float64(worldW-screenW) / 2 * (1 - math.Cos(float64(t)/150))
	y := float64(worldH-screenH) / 2 * (1 - math.Cos(float64(t)/230))
	return image.Pt(int(x), int(y))
}

// spritePos returns the top left corner, on the screen, of sprite i at tick
// t: each bounces off the edges of the screen at its own speed.
func spritePos(i int, t int64) image.Point {
	vx, vy := []int64{3, -2, 4}[i], []int64{2, 3, -3}[i]
	x0, y0 := []int64{40, 300, 500}[i], []int64{60, 200, 380}[i]
	return image.Pt(bounce(x0+vx*t, screenW-spriteSide), bounce(y0+vy*t, screenH-spriteSide))
}

const spriteSide = 32

// bounce folds p into [0, span], as a point moving back and forth.
func bounce(p int64, span int) int {
	s := int64(span)
	p %= 2 * s
	if p < 0 {
		p += 2 * s
	}
	if p > s {
		p = 2*s - p
	}
	return int(p)
}

// drawWorld draws the part of the map the camera sees at tick t, and the
// sprites.
func drawWorld(screen *ebiten.Image, images map[string]*ebiten.Image, t int64) {
	cam := camera(t)
	for row := range tileRows {
		for col := range tileCols {
			r := image.Rect(col*tileSide, row*tileSide, (col+1)*tileSide, (row+1)*tileSide).Sub(cam)
			if !r.Overlaps(image.Rect(0, 0, screenW, screenH)) {
				continue
			}
			var op ebiten.DrawImageOptions
			op.GeoM.Translate(float64(r.Min.X), float64(r.Min.Y))
			screen.DrawImage(images[tileFile(col, row)], &op)
		}
	}
	for i := range numSprite {
		p := spritePos(i, t)
		var op ebiten.DrawImageOptions
		op.GeoM.Translate(float64(p.X), float64(p.Y))
		screen.DrawImage(images[spriteFile(i)], &op)
	}
}
