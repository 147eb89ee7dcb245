package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"slices"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// stats summarizes the durations of one kind in the frames of a stream.
type stats struct {
	frames      int
	median, p99 time.Duration
	max         time.Duration
	over        int           // frames longer than limit
	limit       time.Duration // a 60 Hz frame, or a frame and a half between frame starts
}

func summarize(times []time.Duration, limit time.Duration) stats {
	s := slices.Sorted(slices.Values(times))
	if len(s) == 0 {
		return stats{}
	}
	st := stats{frames: len(s), median: s[len(s)/2], p99: s[len(s)*99/100], max: s[len(s)-1], limit: limit}
	for _, d := range s {
		if d > limit {
			st.over++
		}
	}
	return st
}

func (s stats) String() string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }
	return fmt.Sprintf("%d frames, median %s, 99th percentile %s, slowest %s, %d over %s",
		s.frames, ms(s.median), ms(s.p99), ms(s.max), s.over, ms(s.limit))
}

var (
	white     = color.RGBA{255, 255, 255, 255}
	ink       = color.RGBA{40, 40, 40, 255}
	gridGrey  = color.RGBA{225, 225, 225, 255}
	blue      = color.RGBA{31, 119, 180, 255}
	orange    = color.RGBA{230, 110, 20, 255}
	frameGrey = color.RGBA{120, 120, 120, 255}
)

// pick returns one of the durations of each frame of a series.
func pick(times []frameTime, f func(frameTime) time.Duration) []time.Duration {
	d := make([]time.Duration, len(times))
	for i, t := range times {
		d[i] = f(t)
	}
	return d
}

func uploadTime(t frameTime) time.Duration { return t.uploads }
func frameTotal(t frameTime) time.Duration { return t.total }
func interval(t frameTime) time.Duration   { return t.interval }

// chart draws the frame times of the two streams, one point per frame
// joined by lines: above, the time each frame spent on uploads, with the
// budget; below, the time between the starts of frames, with the length of
// a 60 Hz frame.
func chart(withBudget, without []frameTime, budget time.Duration) *image.RGBA {
	const width, height = 960, 760
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(img, img.Bounds(), image.NewUniform(white), image.Point{}, draw.Src)
	label(img, 64, 20, fmt.Sprintf("%d workers stream %d tiles into a texture, twice each (a preview, then the detail), through the main loom", numWorkers, side*side/(tileSide*tileSide)), false)
	swatch(img, 64, 30, blue)
	label(img, 86, 41, fmt.Sprintf("with a %v frame budget", budget), false)
	swatch(img, 300, 30, orange)
	label(img, 322, 41, "without a budget", false)

	frames := max(len(withBudget), len(without), 1)
	panel(img, image.Rect(64, 80, width-24, 400), frames,
		"uploads in each frame (the main loom's Update), which the budget bounds",
		pick(withBudget, uploadTime), pick(without, uploadTime),
		[]limit{{budget, blue, fmt.Sprintf("budget, %v", budget)}})
	panel(img, image.Rect(64, 450, width-24, height-48), frames,
		"time from each frame's start to the next: 16.7 ms on pace, more when the main thread stalls",
		pick(withBudget, interval), pick(without, interval),
		[]limit{{frameInterval, frameGrey, "a 60 Hz frame, 16.7 ms"}})
	label(img, width/2-120, height-12, "frame, from the start of the stream", false)
	return img
}

// limit is a horizontal line across a panel.
type limit struct {
	at   time.Duration
	c    color.RGBA
	name string
}

// panel draws two series of durations in r, with its title and limits.
func panel(img *image.RGBA, plot image.Rectangle, frames int, title string, a, b []time.Duration, limits []limit) {
	top := max(slices.Max(append(slices.Clone(a), b...)), 2*time.Millisecond)
	for _, l := range limits {
		top = max(top, l.at*5/4)
	}
	step := niceStep(top)
	top = (top + step - 1) / step * step
	px := func(i int) int { return plot.Min.X + i*(plot.Dx()-1)/max(frames-1, 1) }
	py := func(d time.Duration) int {
		return plot.Max.Y - 1 - int(int64(plot.Dy()-1)*int64(min(d, top))/int64(top))
	}

	label(img, plot.Min.X, plot.Min.Y-10, title, false)
	for d := time.Duration(0); d <= top; d += step {
		hline(img, plot.Min.X, plot.Max.X, py(d), gridGrey, 0)
		label(img, plot.Min.X-8, py(d)+4, fmt.Sprintf("%d ms", d/time.Millisecond), true)
	}
	xStep := 25
	for frames/xStep > 12 {
		xStep *= 2
	}
	for i := 0; i < frames; i += xStep {
		label(img, px(i)-4, plot.Max.Y+16, fmt.Sprint(i), false)
	}
	hline(img, plot.Min.X, plot.Max.X, plot.Max.Y-1, ink, 0)
	vline(img, plot.Min.X, plot.Min.Y, plot.Max.Y, ink)
	for _, l := range limits {
		hline(img, plot.Min.X, plot.Max.X, py(l.at), l.c, 6)
		label(img, plot.Max.X-7*len(l.name)-4, py(l.at)-4, l.name, false)
	}
	// Without the budget first, so that the budgeted series shows on top.
	for _, s := range []struct {
		d []time.Duration
		c color.RGBA
	}{{b, orange}, {a, blue}} {
		for i := 1; i < len(s.d); i++ {
			line(img, px(i-1), py(s.d[i-1]), px(i), py(s.d[i]), s.c)
		}
	}
}

// niceStep returns a grid step that cuts top into at most 8 parts.
func niceStep(top time.Duration) time.Duration {
	for _, ms := range []time.Duration{1, 2, 5, 10, 20, 50, 100, 200, 500} {
		if top/(ms*time.Millisecond) <= 8 {
			return ms * time.Millisecond
		}
	}
	return time.Second
}

func label(img *image.RGBA, x, y int, s string, alignRight bool) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(ink), Face: basicfont.Face7x13}
	if alignRight {
		x -= d.MeasureString(s).Round()
	}
	d.Dot = fixed.P(x, y)
	d.DrawString(s)
}

func swatch(img *image.RGBA, x, y int, c color.RGBA) {
	draw.Draw(img, image.Rect(x, y, x+16, y+12), image.NewUniform(c), image.Point{}, draw.Src)
}

// hline draws a horizontal line, dashed every dash pixels if dash > 0.
func hline(img *image.RGBA, x0, x1, y int, c color.RGBA, dash int) {
	for x := x0; x < x1; x++ {
		if dash == 0 || (x/dash)%2 == 0 {
			img.SetRGBA(x, y, c)
		}
	}
}

func vline(img *image.RGBA, x, y0, y1 int, c color.RGBA) {
	for y := y0; y < y1; y++ {
		img.SetRGBA(x, y, c)
	}
}

// line draws a line two pixels thick from (x0, y0) to (x1, y1) (Bresenham).
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		img.SetRGBA(x0, y0, c)
		img.SetRGBA(x0, y0+1, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func abs(x int) int { return max(x, -x) }

func sign(x int) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}
