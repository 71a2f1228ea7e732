package chart

import (
	"fmt"
	"math"
	"strings"
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
	const (
		plotH     = 280.0
		valueSize = 9.0
		lineH     = 14.0
	)
	var c canvas

	// The drawn values: one per category.
	all := make([][]float64, len(series))
	for i, s := range series {
		all[i] = s.Values[:min(len(s.Values), len(categories))]
	}
	// Every bar is wide enough for its value label.
	barW := 22.0
	for _, vs := range all {
		for _, v := range vs {
			if finite(v) {
				barW = math.Max(barW, textWidth(valueLabel(v), valueSize)+6)
			}
		}
	}
	groupW := float64(max(len(series), 1))*barW + 0.8*barW

	lo, hi, ok := extent(all...)
	if !ok {
		lo, hi = 0, 1
	}
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	// Leave room for the value labels beyond the longest bars.
	span := hi - lo
	if hi > 0 {
		hi += 0.1 * span
	}
	if lo < 0 {
		lo -= 0.1 * span
	}
	ax := newAxis(lo, hi, 7)

	left := ax.labelWidth(tickSize) + 20
	plotW := math.Max(float64(len(categories))*groupW, 200)
	w := math.Max(left+plotW+20, textWidth(title, titleSize)+40)

	y := c.title(w, title)
	names := make([]string, len(series))
	for i, s := range series {
		names[i] = s.Name
	}
	y += c.legend(w, y, names, false)
	top := y + 16
	bottom := top + plotH
	ys := func(v float64) float64 { return ax.scale(v, bottom, top) }

	// Grid and y ticks.
	for _, t := range ax.ticks {
		c.line(left, ys(t), left+plotW, ys(t), "#e0e0e0", 1)
		c.text(left-6, ys(t)+4, "end", tickSize, textStyle{}, ax.label(t))
	}

	// Bars and their value labels.
	for ci := range categories {
		gx := left + float64(ci)*groupW + 0.4*barW
		for si := range series {
			v := value(series[si].Values, ci)
			if !finite(v) {
				continue
			}
			x := gx + float64(si)*barW
			y0, y1 := ys(0), ys(v)
			c.rect(x+1, math.Min(y0, y1), barW-2, math.Abs(y1-y0), color(si))
			ly := y1 - 3
			if v < 0 {
				ly = y1 + valueSize + 2
			}
			c.text(x+barW/2, ly, "middle", valueSize, textStyle{}, valueLabel(v))
		}
	}

	// Axes: the y axis on the left and the zero line across.
	c.line(left, top, left, bottom, "#333333", 1)
	c.line(left, ys(0), left+plotW, ys(0), "#333333", 1)

	// Category labels under the plot, wrapped to the group width.
	maxLines := 1
	for ci, cat := range categories {
		cx := left + (float64(ci)+0.5)*groupW
		lines := wrap(cat, groupW-6, labelSize)
		maxLines = max(maxLines, len(lines))
		for j, l := range lines {
			c.text(cx, bottom+18+float64(j)*lineH, "middle", labelSize, textStyle{}, l)
		}
	}
	alt := fmt.Sprintf("Bar chart %q: %s for %s", title, strings.Join(names, ", "), strings.Join(categories, ", "))
	return c.finish(w, bottom+18+float64(maxLines-1)*lineH+12, oneLine(alt))
}

// valueLabel formats a bar's value label: three decimals at most, trailing
// zeros dropped.
func valueLabel(v float64) string { return trimNum(v, 3) }
