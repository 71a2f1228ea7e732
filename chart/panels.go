package chart

import (
	"fmt"
	"math"
	"strings"
)

// Panel is one small line plot of [Panels]: a title and its lines, each drawn
// over x = 0, 1, 2, ... (the index of the value).
type Panel struct {
	Title string
	Lines []Series
}

// Panels returns a grid of small line plots, with one
// legend under the title shared by all panels. A line name keeps the same
// colour in every panel, in the order names first appear. Each panel has its
// own y range and is labelled with xLabel under its x axis. Panels are laid
// out in rows of up to three, or two by two when there are four. A missing
// value (NaN or ±Inf) breaks its line.
//
// Figure 12.2 (behaviour over training) uses it with one panel per metric
// (pass rate, reads, tests, turns) and one line per training arm, each
// smoothed with [MovingAverage].
func Panels(title, xLabel string, panels []Panel) Figure {
	c, h, names := grid(title, panels, true, func(c *canvas, x, y float64, p Panel, index map[string]int) {
		c.panel(x, y, panelWidth, panelHeight, xLabel, p, index)
	})
	alt := fmt.Sprintf("Line charts %q over %s: %s; lines %s", title, xLabel, panelTitles(panels), strings.Join(names, ", "))
	return c.finish(c.width, h, oneLine(alt))
}

// grid draws title, a legend of the panels' series names (lines: each entry a short line, else a swatch) and, for
// each panel, draw in its box (panelWidth × panelHeight at x, y); it returns the canvas, the height used and the
// names in legend order.
func grid(title string, panels []Panel, lines bool, draw func(c *canvas, x, y float64, p Panel, index map[string]int)) (*gridCanvas, float64, []string) {
	c := &gridCanvas{}
	index, names := lineNames(panels)
	w, cols := gridWidth(title, len(panels))
	c.width = w
	y := c.title(w, title)
	y += c.legend(w, y, names, lines)
	y += 6
	for i, p := range panels {
		draw(&c.canvas, (w-float64(cols)*panelWidth)/2+float64(i%cols)*panelWidth, y+float64(i/cols)*panelHeight, p, index)
	}
	rows := (len(panels) + cols - 1) / cols
	return c, y + float64(rows)*panelHeight + 8, names
}

// gridCanvas is a canvas of grid's and its width.
type gridCanvas struct {
	canvas
	width float64
}

// panelTitles joins the panels' titles for a figure's description.
func panelTitles(panels []Panel) string {
	titles := make([]string, len(panels))
	for i, p := range panels {
		titles[i] = p.Title
	}
	return strings.Join(titles, ", ")
}

// The size of one panel of Panels and Strips.
const panelWidth, panelHeight = 340.0, 230.0

// gridWidth returns the width of a grid of n panels under title and its number of columns: rows of up to three
// panels, two by two for four.
func gridWidth(title string, n int) (w float64, cols int) {
	cols = min(n, 3)
	if n == 4 {
		cols = 2
	}
	cols = max(cols, 1)
	return math.Max(float64(cols)*panelWidth, textWidth(title, titleSize)+40), cols
}

// lineNames gives each series name of panels a colour index, in the order names first appear.
func lineNames(panels []Panel) (index map[string]int, names []string) {
	index = map[string]int{}
	for _, p := range panels {
		for _, l := range p.Lines {
			if _, ok := index[l.Name]; !ok {
				index[l.Name] = len(names)
				names = append(names, l.Name)
			}
		}
	}
	return index, names
}

// panel draws p in the box at (x, y) of size w×h.
func (c *canvas) panel(x, y, w, h float64, xLabel string, p Panel, index map[string]int) {
	n := 0
	for _, l := range p.Lines {
		n = max(n, len(l.Values))
	}
	xa := newAxis(0, float64(max(n-1, 1)), min(4, max(n-1, 1)))
	ya, left, right, top, bottom := plotArea(x, y, w, h, p)
	xs := func(v float64) float64 { return xa.scale(v, left, right) }
	ys := func(v float64) float64 { return ya.scale(v, bottom, top) }

	c.frame(y, left, right, p.Title, ya, ys)
	for _, t := range xa.ticks {
		c.line(xs(t), bottom, xs(t), bottom+4, "#333333", 1)
		c.text(xs(t), bottom+16, "middle", tickSize, textStyle{}, xa.label(t))
	}
	c.line(left, top, left, bottom, "#333333", 1)
	c.line(left, bottom, right, bottom, "#333333", 1)
	c.text((left+right)/2, bottom+33, "middle", labelSize, textStyle{}, xLabel)

	for _, l := range p.Lines {
		col := color(index[l.Name])
		var seg [][2]float64
		flush := func() {
			switch len(seg) {
			case 0:
			case 1: // A lone point has no line; mark it.
				c.dot(seg[0][0], seg[0][1], 2, col)
			default:
				c.polyline(seg, col, 1.8)
			}
			seg = nil
		}
		for i, v := range l.Values {
			if !finite(v) {
				flush()
				continue
			}
			seg = append(seg, [2]float64{xs(float64(i)), ys(v)})
		}
		flush()
	}
}

// MovingAverage returns the trailing moving average of x over window steps:
// out[i] is the mean of x[i-window+1 : i+1], or of x[0 : i+1] while fewer
// than window values have been seen, so out has the length of x and no
// warm-up gap (like pandas' rolling(window, min_periods=1).mean()). NaN and
// infinite values are left out of each mean; a window without any finite
// value gives NaN. A window below 1 is taken as 1.
//
// The book smooths the curves of Figure 12.2 with window 5.
func MovingAverage(x []float64, window int) []float64 {
	window = max(window, 1)
	out := make([]float64, len(x))
	for i := range x {
		sum, n := 0.0, 0
		for _, v := range x[max(0, i-window+1) : i+1] {
			if finite(v) {
				sum += v
				n++
			}
		}
		out[i] = math.NaN()
		if n > 0 {
			out[i] = sum / float64(n)
		}
	}
	return out
}

// FirstIndex returns the first index from `from` on at which ok holds for the curve's value, or -1 if none: on a
// moving average of a training history, the step at which a curve first crosses a level (Figure 12.2's claims
// are of that kind). NaN values are passed to ok like any other.
func FirstIndex(ys []float64, from int, ok func(float64) bool) int {
	for i := max(from, 0); i < len(ys); i++ {
		if ok(ys[i]) {
			return i
		}
	}
	return -1
}

// Peak returns the largest finite value of the curve and its first index, or (NaN, -1) if the curve has none.
func Peak(ys []float64) (float64, int) {
	best := -1
	for i, y := range ys {
		if finite(y) && (best < 0 || y > ys[best]) {
			best = i
		}
	}
	if best < 0 {
		return math.NaN(), -1
	}
	return ys[best], best
}

// frame draws a panel's title above the plot area [left, right] of a panel at y, and ya's ticks as grid lines with
// their labels, ys mapping a value to its y.
func (c *canvas) frame(y, left, right float64, title string, ya axis, ys func(float64) float64) {
	c.text((left+right)/2, y+16, "middle", labelSize, textStyle{bold: true}, title)
	for _, t := range ya.ticks {
		c.line(left, ys(t), right, ys(t), "#e0e0e0", 1)
		c.text(left-5, ys(t)+4, "end", tickSize, textStyle{}, ya.label(t))
	}
}

// plotArea returns the y axis of p's values (0 to 1 where it has none) and the plot area, left to right and top to
// bottom, of a panel in the box at (x, y) of size w×h.
func plotArea(x, y, w, h float64, p Panel) (ya axis, left, right, top, bottom float64) {
	vals := make([][]float64, len(p.Lines))
	for i, l := range p.Lines {
		vals[i] = l.Values
	}
	lo, hi, ok := extent(vals...)
	if !ok {
		lo, hi = 0, 1
	}
	ya = newAxis(lo, hi, 4)
	return ya, x + ya.labelWidth(tickSize) + 16, x + w - 18, y + 26, y + h - 44
}
