package main

import (
	"bytes"
	"embed"
	"fmt"
	"image"
	"image/png"
	"io/fs"
	"time"

	"github.com/hajimehoshi/ebiten/v2"
)

//go:generate go run gen_assets.go

// The world is a map of tiles, each in a PNG file of its own, and a few
// sprites: the assets a game decodes while it shows a loading screen.
//
//go:embed assets/*.png
var assetFS embed.FS

const (
	tileSide  = 160
	tileCols  = 8
	tileRows  = 6
	worldW    = tileCols * tileSide
	worldH    = tileRows * tileSide
	numSprite = 3
	numAssets = tileCols*tileRows + numSprite

	// applyBudget is how long a frame may spend turning decoded assets into
	// images (the loom's frame budget): the rest waits for the next frame.
	applyBudget = 2 * time.Millisecond
)

func tileFile(col, row int) string { return fmt.Sprintf("assets/tile_%d_%d.png", row, col) }
func spriteFile(i int) string      { return fmt.Sprintf("assets/sprite_%d.png", i) }

// assetFiles lists every asset, tiles first.
func assetFiles() []string {
	var names []string
	for row := range tileRows {
		for col := range tileCols {
			names = append(names, tileFile(col, row))
		}
	}
	for i := range numSprite {
		names = append(names, spriteFile(i))
	}
	return names
}

// decodeAsset reads and decodes an embedded PNG file. It is the slow part
// of loading, and runs on the decoding queue.
func decodeAsset(name string) (image.Image, error) {
	b, err := fs.ReadFile(assetFS, name)
	if err != nil {
		return nil, err
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return img, nil
}

// assets are the images made from the decoded files. They belong to the
// game goroutine.
type assets struct {
	images  map[string]*ebiten.Image
	loaded  int   // assets applied so far
	perTick []int // assets applied in each frame of the loading scene
}

// add makes an image of a decoded asset, on the game goroutine, where the
// loom runs the actions that the decoders post.
func (a *assets) add(name string, img image.Image) {
	a.images[name] = ebiten.NewImageFromImage(img)
	a.loaded++
}
