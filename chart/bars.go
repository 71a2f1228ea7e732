package chart

import (
	"fmt"
	"math"
	"strings"
)

// Sizes of a bar chart, in pixels.
const (
	barPlotH     = 280.0 // height of the plot area
	barValueSize = 9.0   // font size of the value labels
	barLineH     = 14.0  // line height of the wrapped category labels
)

// Bars returns a grouped bar chart: one group per
// category, one bar per series in each group, coloured by series and named in
// a legend under the title. Series[s].Values[c] is the bar of series s in
// category c. Bars grow up or down from a zero line, and each is labelled with
// its value to three decimals at most (20, 0.25, -0.05). Missing values (NaN, ±Inf, or beyond the end
// of Values) leave a gap.
//
// Figure 12.1 (turn-level credit on one episode) uses it with the episode's
// calls as categories and r_k, V(s_k), δ_k and A_k as series.
func Bars(title string, categories []string, series []Series) Figure {
	var c canvas
	l := newBarLayout(title, categories, series)
	names := seriesNames(series)

	y := c.title(l.width, title)
	y += c.legend(l.width, y, names, false)
	l.top = y + 16
	l.bottom = l.top + barPlotH

	c.barGrid(l)
	c.bars(l, len(categories), series)
	c.barAxes(l)
	maxLines := c.categoryLabels(l, categories)

	alt := fmt.Sprintf("Bar chart %q: %s for %s", title, strings.Join(names, ", "), strings.Join(categories, ", "))
	return c.finish(l.width, l.bottom+18+float64(maxLines-1)*barLineH+12, oneLine(alt))
}

// barLayout holds the sizes and the value axis of a drawn bar chart.
type barLayout struct {
	barW, groupW float64 // one bar; one category's group of bars with its gap
	ax           axis    // the value axis
	left, plotW  float64 // the plot area's left edge and width
	width        float64 // the whole figure
	top, bottom  float64 // the plot area's top and bottom, set once the legend is drawn
}

// newBarLayout returns the layout of a bar chart of series over categories
// under title, all but its top and bottom, which depend on the legend.
func newBarLayout(title string, categories []string, series []Series) barLayout {
	shown := shownValues(len(categories), series)
	l := barLayout{barW: barWidth(shown), ax: barAxis(shown)}
	l.groupW = float64(max(len(series), 1))*l.barW + 0.8*l.barW
	l.left = l.ax.labelWidth(tickSize) + 20
	l.plotW = math.Max(float64(len(categories))*l.groupW, 200)
	l.width = math.Max(l.left+l.plotW+20, textWidth(title, titleSize)+40)
	return l
}

// y returns the vertical position of value v in the plot area.
func (l barLayout) y(v float64) float64 { return l.ax.scale(v, l.bottom, l.top) }

// shownValues returns the values of each series that have a category: at
// most the first n of each.
func shownValues(n int, series []Series) [][]float64 {
	shown := make([][]float64, len(series))
	for i, s := range series {
		shown[i] = s.Values[:min(len(s.Values), n)]
	}
	return shown
}

// seriesNames returns the name of each series, in order.
func seriesNames(series []Series) []string {
	names := make([]string, len(series))
	for i, s := range series {
		names[i] = s.Name
	}
	return names
}

// barWidth returns the width of one bar: 22 pixels, or wider where the value
// label of a finite value needs it.
func barWidth(vss [][]float64) float64 {
	w := 22.0
	for _, vs := range vss {
		for _, v := range vs {
			if finite(v) {
				w = math.Max(w, textWidth(valueLabel(v), barValueSize)+6)
			}
		}
	}
	return w
}

// barAxis returns the value axis for the finite values of vss ([0, 1] when
// there are none). It always includes zero, the bars' base line, and leaves
// a tenth of the range beyond the longest bars for their value labels.
func barAxis(vss [][]float64) axis {
	lo, hi, ok := extent(vss...)
	if !ok {
		lo, hi = 0, 1
	}
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	span := hi - lo
	if hi > 0 {
		hi += 0.1 * span
	}
	if lo < 0 {
		lo -= 0.1 * span
	}
	return newAxis(lo, hi, 7)
}

// barGrid draws the horizontal grid lines and the y tick labels of l.
func (c *canvas) barGrid(l barLayout) {
	for _, t := range l.ax.ticks {
		c.line(l.left, l.y(t), l.left+l.plotW, l.y(t), "#e0e0e0", 1)
		c.text(l.left-6, l.y(t)+4, "end", tickSize, textStyle{}, l.ax.label(t))
	}
}

// bars draws the bars of the first n categories, series by series within
// each category's group, each with its value label above it (below it for a
// negative value). A missing value draws nothing.
func (c *canvas) bars(l barLayout, n int, series []Series) {
	for ci := range n {
		gx := l.left + float64(ci)*l.groupW + 0.4*l.barW
		for si := range series {
			v := value(series[si].Values, ci)
			if !finite(v) {
				continue
			}
			x := gx + float64(si)*l.barW
			y0, y1 := l.y(0), l.y(v)
			c.rect(x+1, math.Min(y0, y1), l.barW-2, math.Abs(y1-y0), color(si))
			ly := y1 - 3
			if v < 0 {
				ly = y1 + barValueSize + 2
			}
			c.text(x+l.barW/2, ly, "middle", barValueSize, textStyle{}, valueLabel(v))
		}
	}
}

// barAxes draws the y axis on the left of the plot and the zero line across it.
func (c *canvas) barAxes(l barLayout) {
	c.line(l.left, l.top, l.left, l.bottom, "#333333", 1)
	c.line(l.left, l.y(0), l.left+l.plotW, l.y(0), "#333333", 1)
}

// categoryLabels draws each category's name under its group, wrapped to the
// group's width, and returns the most lines a name took (at least 1).
func (c *canvas) categoryLabels(l barLayout, categories []string) int {
	maxLines := 1
	for ci, cat := range categories {
		cx := l.left + (float64(ci)+0.5)*l.groupW
		lines := wrap(cat, l.groupW-6, labelSize)
		maxLines = max(maxLines, len(lines))
		for j, line := range lines {
			c.text(cx, l.bottom+18+float64(j)*barLineH, "middle", labelSize, textStyle{}, line)
		}
	}
	return maxLines
}

// valueLabel formats a bar's value label: three decimals at most, trailing
// zeros dropped.
func valueLabel(v float64) string { return trimNum(v, 3) }
