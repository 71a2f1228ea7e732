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
	c, h, names := grid(title, panels, false, func(c *canvas, x, y float64, p Panel, index map[string]int) {
		c.strip(x, y, panelWidth, panelHeight, p, index)
	})
	alt := fmt.Sprintf("Strip charts %q: %s; columns %s", title, panelTitles(panels), strings.Join(names, ", "))
	return c.finish(c.width, h, oneLine(alt))
}

// strip draws p as columns of dots in the box at (x, y) of size w×h.
func (c *canvas) strip(x, y, w, h float64, p Panel, index map[string]int) {
	ya, left, right, top, bottom := plotArea(x, y, w, h, p)
	ys := func(v float64) float64 { return ya.scale(v, bottom, top) }

	c.frame(y, left, right, p.Title, ya, ys)
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
