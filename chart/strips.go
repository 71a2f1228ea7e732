package chart

import (
	"fmt"
	"math"
	"strings"
)

// Strips returns a grid of small strip plots, laid out as [Panels] lays out
// its panels, with one legend under the title. In each panel every series is
// a column of dots, one per value (value i a little right of value i-1, so
// that equal values stay apart), with its mean drawn as a short bar across
// the column; a series name keeps the same colour in every panel. Each panel
// has its own y range. A missing value (NaN or ±Inf) is not drawn and is left
// out of the mean.
//
// ch12's Beside draws a changed arm and the chapter's arm under each seed with
// it: one panel per statistic, one column per arm, one dot per seed.
func Strips(title string, panels []Panel) Figure {
	var c canvas
	index, names := lineNames(panels)
	w, cols := gridWidth(title, len(panels))
	y := c.title(w, title)
	y += c.legend(w, y, names, false)
	y += 6
	for i, p := range panels {
		px := (w-float64(cols)*panelWidth)/2 + float64(i%cols)*panelWidth
		py := y + float64(i/cols)*panelHeight
		c.strip(px, py, panelWidth, panelHeight, p, index)
	}
	titles := make([]string, len(panels))
	for i, p := range panels {
		titles[i] = p.Title
	}
	rows := (len(panels) + cols - 1) / cols
	alt := fmt.Sprintf("Strip charts %q: %s; columns %s", title, strings.Join(titles, ", "), strings.Join(names, ", "))
	return c.finish(w, y+float64(rows)*panelHeight+8, oneLine(alt))
}

// strip draws p as columns of dots in the box at (x, y) of size w×h.
func (c *canvas) strip(x, y, w, h float64, p Panel, index map[string]int) {
	vals := make([][]float64, len(p.Lines))
	for i, l := range p.Lines {
		vals[i] = l.Values
	}
	lo, hi, ok := extent(vals...)
	if !ok {
		lo, hi = 0, 1
	}
	ya := newAxis(lo, hi, 4)
	left := x + ya.labelWidth(tickSize) + 16
	right := x + w - 18
	top := y + 26
	bottom := y + h - 44
	ys := func(v float64) float64 { return ya.scale(v, bottom, top) }

	c.text((left+right)/2, y+16, "middle", labelSize, textStyle{bold: true}, p.Title)
	for _, t := range ya.ticks {
		c.line(left, ys(t), right, ys(t), "#e0e0e0", 1)
		c.text(left-5, ys(t)+4, "end", tickSize, textStyle{}, ya.label(t))
	}
	c.line(left, top, left, bottom, "#333333", 1)
	c.line(left, bottom, right, bottom, "#333333", 1)

	band := (right - left) / float64(max(len(p.Lines), 1))
	for i, l := range p.Lines {
		col := color(index[l.Name])
		mid := left + (float64(i)+0.5)*band
		c.text(mid, bottom+16, "middle", tickSize, textStyle{}, l.Name)
		spread := math.Min(band*0.5, 6*float64(len(l.Values)))
		var sum float64
		var n int
		for j, v := range l.Values {
			if !finite(v) {
				continue
			}
			dx := 0.0
			if len(l.Values) > 1 {
				dx = spread * (float64(j)/float64(len(l.Values)-1) - 0.5)
			}
			c.dot(mid+dx, ys(v), 3.5, col)
			sum += v
			n++
		}
		if n > 0 {
			m := ys(sum / float64(n))
			c.line(mid-spread/2-8, m, mid+spread/2+8, m, "#333333", 2)
		}
	}
}
