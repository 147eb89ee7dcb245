package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"slices"
	"strings"
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

// chart draws the two streams side by side, the budgeted one on the left,
// one point per frame joined by lines, in three rows: the uploads each
// frame ran, the time it spent on them, and the time from its start to the
// next frame's. The two panels of a row share their scale.
func chart(withBudget, without []frameTime, budget int) *image.RGBA {
	const width, height = 1200, 900
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(img, img.Bounds(), image.NewUniform(white), image.Point{}, draw.Src)
	label(img, 64, 20, fmt.Sprintf("%d workers stream %d tiles into a texture, twice each (a preview, then the detail), through the main loom; one point per frame", numWorkers, side*side/(tileSide*tileSide)), false)

	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	counts := func(ts []frameTime) []float64 {
		v := make([]float64, len(ts))
		for i, t := range ts {
			v[i] = float64(t.count)
		}
		return v
	}
	durations := func(ts []frameTime, f func(frameTime) time.Duration) []float64 {
		v := make([]float64, len(ts))
		for i, t := range ts {
			v[i] = ms(f(t))
		}
		return v
	}
	rows := []struct {
		title       string
		unit        string
		left, right []float64
		leftLimits  []limit
		rightLimits []limit
	}{
		{
			"uploads run in each frame", "",
			counts(withBudget), counts(without),
			[]limit{{float64(budget), blue, fmt.Sprintf("dashed: the budget, %d", budget)}}, nil,
		},
		{
			"time each frame spent on uploads (the main loom's Update)", "ms",
			durations(withBudget, uploadTime), durations(without, uploadTime), nil, nil,
		},
		{
			"time from each frame's start to the next: 16.7 ms on pace", "ms",
			durations(withBudget, interval), durations(without, interval),
			[]limit{{ms(frameInterval), frameGrey, "dashed: 60 Hz"}}, []limit{{ms(frameInterval), frameGrey, "dashed: 60 Hz"}},
		},
	}
	frames := max(len(withBudget), len(without), 1)
	const top, rowHeight, gap = 60, 270, 90
	colWidth := (width - 64 - 24 - gap) / 2
	for c, name := range []string{fmt.Sprintf("with a budget of %d uploads a frame", budget), "without a budget"} {
		x := 64 + c*(colWidth+gap)
		swatch(img, x, top-22, []color.RGBA{blue, orange}[c])
		label(img, x+22, top-11, name, false)
	}
	for r, row := range rows {
		hi := max(slices.Max(append([]float64{1}, row.left...)), slices.Max(append([]float64{1}, row.right...)))
		for _, l := range append(slices.Clone(row.leftLimits), row.rightLimits...) {
			hi = max(hi, l.at*5/4)
		}
		y := top + 30 + r*rowHeight
		for c, series := range [][]float64{row.left, row.right} {
			x := 64 + c*(colWidth+gap)
			limits := [][]limit{row.leftLimits, row.rightLimits}[c]
			plot := image.Rect(x, y, x+colWidth, y+rowHeight-70)
			panel(img, plot, frames, hi, row.title, row.unit, series, []color.RGBA{blue, orange}[c], limits)
		}
	}
	label(img, width/2-120, height-12, "frame, from the start of the stream", false)
	return img
}

// limit is a horizontal line across a panel.
type limit struct {
	at   float64
	c    color.RGBA
	name string
}

// panel draws a series of values in plot, on a scale from 0 to at least
// hi, with its title, its unit and its limits.
func panel(img *image.RGBA, plot image.Rectangle, frames int, hi float64, title, unit string, values []float64, c color.RGBA, limits []limit) {
	step := niceStep(hi)
	top := math.Ceil(hi/step) * step
	px := func(i int) int { return plot.Min.X + i*(plot.Dx()-1)/max(frames-1, 1) }
	py := func(v float64) int {
		return plot.Max.Y - 1 - int(float64(plot.Dy()-1)*min(v, top)/top)
	}

	label(img, plot.Min.X, plot.Min.Y-10, title, false)
	for v := 0.0; v <= top; v += step {
		hline(img, plot.Min.X, plot.Max.X, py(v), gridGrey, 0)
		label(img, plot.Min.X-8, py(v)+4, strings.TrimSpace(fmt.Sprintf("%g %s", v, unit)), true)
	}
	xStep := 25
	for frames/xStep > 8 {
		xStep *= 2
	}
	for i := 0; i < frames; i += xStep {
		label(img, px(i)-4, plot.Max.Y+16, fmt.Sprint(i), false)
	}
	hline(img, plot.Min.X, plot.Max.X, plot.Max.Y-1, ink, 0)
	vline(img, plot.Min.X, plot.Min.Y, plot.Max.Y, ink)
	for i := 1; i < len(values); i++ {
		line(img, px(i-1), py(values[i-1]), px(i), py(values[i]), c)
	}
	// The limits over the series, their names above the panel's corner.
	for _, l := range limits {
		hline(img, plot.Min.X, plot.Max.X, py(l.at), l.c, 6)
		label(img, plot.Max.X-7*len(l.name), plot.Min.Y-10, l.name, false)
	}
}

// niceStep returns a grid step of 1, 2 or 5 times a power of ten that
// cuts hi into at most 6 parts.
func niceStep(hi float64) float64 {
	for k := -3.0; ; k++ {
		for _, m := range []float64{1, 2, 5} {
			if step := m * math.Pow(10, k); hi/step <= 6 {
				return step
			}
		}
	}
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
