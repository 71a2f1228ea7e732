package chart

import (
	"fmt"
	"math"
	"strings"
)

// Heatmap is one annotated grid of [Heatmaps]: Values[r][c] is the cell of
// row Rows[r] and column Cols[c], coloured by value on a white-to-blue scale
// from Min to Max and printed with Format.
type Heatmap struct {
	Title      string
	Rows, Cols []string
	Values     [][]float64
	// Format prints each cell's value with fmt.Sprintf; when empty, with
	// three decimals at most, trailing zeros dropped (0.25, 1).
	Format string
	// Min and Max are the values of the lightest and darkest colour; values
	// beyond are clamped (Min > Max reverses the scale). When Min == Max (as
	// in the zero Heatmap), or either is NaN or infinite, the range of the
	// finite values is used.
	Min, Max float64
	// YLabel and XLabel, when not empty, name the rows (left, rotated) and
	// the columns (below), e.g. "training context" and "evaluation context".
	YLabel, XLabel string
}

// Heatmaps returns the heatmaps side by side, under one title. Each has its own title, labels and colour range. A missing value
// (NaN, ±Inf, or a short row) is drawn grey with "n/a".
//
// Figure 12.3 uses it with the held-out pass rate and the tests per episode
// for each (training context, evaluation context) pair.
func Heatmaps(title string, maps []Heatmap) Figure {
	const gap, margin = 36.0, 16.0
	var c canvas

	total := 2*margin + gap*float64(max(len(maps)-1, 0))
	for _, m := range maps {
		total += m.layout().width
	}
	w := math.Max(total, textWidth(title, titleSize)+40)

	y := c.title(w, title)
	x := (w - total + 2*margin) / 2
	h := 0.0
	for _, m := range maps {
		l := m.layout()
		c.heatmap(x, y, m, l)
		x += l.width + gap
		h = math.Max(h, l.height)
	}
	titles := make([]string, len(maps))
	for i, m := range maps {
		titles[i] = fmt.Sprintf("%s (%d×%d: %s by %s)", m.Title, len(m.Rows), len(m.Cols), orDefault(m.YLabel, "row"), orDefault(m.XLabel, "column"))
	}
	alt := fmt.Sprintf("Heatmaps %q: %s", title, strings.Join(titles, "; "))
	return c.finish(w, y+h+8, oneLine(alt))
}

// heatLayout holds the sizes of one drawn heatmap.
type heatLayout struct {
	cellW, cellH  float64
	yLabW, rowW   float64 // rotated y label, row labels
	width, height float64 // the whole block
}

// label prints a cell's value.
func (m Heatmap) label(v float64) string {
	if m.Format == "" {
		return trimNum(v, 3)
	}
	return fmt.Sprintf(m.Format, v)
}

// cell returns Values[r][c], or NaN when it is missing.
func (m Heatmap) cell(r, c int) float64 {
	if r < len(m.Values) {
		return value(m.Values[r], c)
	}
	return math.NaN()
}

func (m Heatmap) layout() heatLayout {
	l := heatLayout{cellW: 64, cellH: 34}
	for _, col := range m.Cols {
		l.cellW = math.Max(l.cellW, textWidth(col, labelSize)+12)
	}
	for r := range m.Rows {
		for c := range m.Cols {
			if v := m.cell(r, c); finite(v) {
				l.cellW = math.Max(l.cellW, textWidth(m.label(v), labelSize)+12)
			}
		}
	}
	for _, row := range m.Rows {
		l.rowW = math.Max(l.rowW, textWidth(row, labelSize))
	}
	if m.YLabel != "" {
		l.yLabW = 22
	}
	gridW := float64(len(m.Cols)) * l.cellW
	l.width = max(l.yLabW+l.rowW+8+gridW, textWidth(m.Title, labelSize+1), textWidth(m.XLabel, labelSize))
	l.height = 24 + float64(len(m.Rows))*l.cellH + 40
	return l
}

// heatmap draws m at (x, y) with layout l.
func (c *canvas) heatmap(x, y float64, m Heatmap, l heatLayout) {
	lo, hi := m.Min, m.Max
	if lo == hi || !finite(lo) || !finite(hi) {
		cells := make([][]float64, len(m.Rows))
		for r := range m.Rows {
			for col := range m.Cols {
				cells[r] = append(cells[r], m.cell(r, col))
			}
		}
		var ok bool
		if lo, hi, ok = extent(cells...); !ok {
			lo, hi = 0, 1
		}
	}
	gridL := x + l.yLabW + l.rowW + 8
	gridT := y + 24
	gridW := float64(len(m.Cols)) * l.cellW
	gridB := gridT + float64(len(m.Rows))*l.cellH

	// Titles and labels are centred on the grid, moved in where they would
	// stick out of the block.
	centre := func(s string, size float64) float64 {
		half := textWidth(s, size) / 2
		return math.Min(math.Max(gridL+gridW/2, x+half), x+l.width-half)
	}
	c.text(centre(m.Title, labelSize+1), y+14, "middle", labelSize+1, textStyle{bold: true}, m.Title)
	for r, row := range m.Rows {
		cy := gridT + float64(r)*l.cellH
		c.text(gridL-6, cy+l.cellH/2+4, "end", labelSize, textStyle{}, row)
		for col := range m.Cols {
			cx := gridL + float64(col)*l.cellW
			v := m.cell(r, col)
			fill, ink, label := "#d9d9d9", "#333333", "n/a"
			if finite(v) {
				t := 0.5
				if hi != lo { // in halves, so that no difference of finite values overflows
					t = math.Min(math.Max((v/2-lo/2)/(hi/2-lo/2), 0), 1)
				}
				fill, ink, label = blues(t), "black", m.label(v)
				if t > 0.6 {
					ink = "white"
				}
			}
			c.rect(cx+1, cy+1, l.cellW-2, l.cellH-2, fill)
			c.text(cx+l.cellW/2, cy+l.cellH/2+4, "middle", labelSize, textStyle{fill: ink}, label)
		}
	}
	for col, name := range m.Cols {
		c.text(gridL+(float64(col)+0.5)*l.cellW, gridB+16, "middle", labelSize, textStyle{}, name)
	}
	if m.XLabel != "" {
		c.text(centre(m.XLabel, labelSize), gridB+34, "middle", labelSize, textStyle{italic: true}, m.XLabel)
	}
	if m.YLabel != "" {
		lx, ly := x+12, (gridT+gridB)/2
		c.text(lx, ly, "middle", labelSize, textStyle{italic: true, rotate: true}, m.YLabel)
	}
}

// bluesStops is matplotlib's "Blues" colour map at five points.
var bluesStops = [][3]float64{
	{0xf7, 0xfb, 0xff}, {0xc6, 0xdb, 0xef}, {0x6b, 0xae, 0xd6}, {0x21, 0x71, 0xb5}, {0x08, 0x30, 0x6b},
}

// blues returns the colour at t in [0, 1] on the Blues scale as "#rrggbb".
func blues(t float64) string {
	if !(t >= 0 && t <= 1) {
		t = min(max(t, 0), 1)
		if math.IsNaN(t) {
			t = 0.5
		}
	}
	pos := t * float64(len(bluesStops)-1)
	i := min(int(pos), len(bluesStops)-2)
	f := pos - float64(i)
	a, b := bluesStops[i], bluesStops[i+1]
	ch := func(k int) int { return int(math.Round(a[k] + f*(b[k]-a[k]))) }
	return fmt.Sprintf("#%02x%02x%02x", ch(0), ch(1), ch(2))
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
