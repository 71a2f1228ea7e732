// Package chart draws the book's small figures in pure Go: each function
// returns a [Figure], which renders as a self-contained SVG document
// ([Figure.SVG]) and as a PNG image ([Figure.PNG]), and describes itself in
// one line ([Figure.Alt]). A GoNB notebook shows one with
// chart/nbdisplay.Display, which sends the PNG (an untrusted notebook and a
// code host's preview show it; they drop inline SVG).
//
// Output is deterministic: the same input gives byte-identical SVG (width,
// height and viewBox set, sans-serif text, white background, no external
// resources, every coordinate printed with two decimals, the canvas size in
// whole pixels) and byte-identical PNG (the same drawing rasterized at twice
// the SVG's size, text in the Go fonts).
//
// Values that are NaN or infinite are treated as missing: a bar is not drawn,
// a line is broken, a heatmap cell is drawn grey with "n/a". Slices of
// unequal length are read as far as they go; missing values are missing.
// Value labels print the shortest number that reads the same at the
// precision shown (20, 0.25, -0.05; never 20.000).
//
// Three figures use it:
//   - [Bars]: turn-level credit on one episode (Figure 12.1);
//   - [Panels] and [MovingAverage]: behaviour over training (Figure 12.2);
//   - [Heatmaps]: held-out results per (training, evaluation) context pair
//     (Figure 12.3).
//
// and one figure of our own: [Strips], a run's statistics under several seeds
// beside the chapter's arm's (ch12's Beside).
package chart

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Series is a named sequence of values: one bar per category in [Bars], one
// line over x = 0, 1, 2, ... in [Panels], one column of dots in [Strips].
type Series struct {
	Name   string
	Values []float64
}

// palette is matplotlib's "tab10": series i gets palette[i%len(palette)].
var palette = []string{
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
}

func color(i int) string { return palette[i%len(palette)] }

// Font sizes in pixels.
const (
	titleSize = 16
	labelSize = 12
	tickSize  = 11
	smallSize = 10
)

// canvas accumulates a figure's display list (see figure.go); finish makes
// it a [Figure] once the size is known.
type canvas struct {
	ops []op
}

// num formats a coordinate with fixed precision, never as "-0.00".
func num(x float64) string {
	s := strconv.FormatFloat(x, 'f', 2, 64)
	if s == "-0.00" {
		return "0.00"
	}
	return s
}

var xmlEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;",
)

// escape makes s safe as XML character data or attribute value. Control
// characters, which XML 1.0 does not allow even escaped, become U+FFFD.
func escape(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF {
			return utf8.RuneError
		}
		return r
	}, s)
	return xmlEscaper.Replace(s)
}

// textWidth estimates the width in pixels of s in a sans-serif font.
func textWidth(s string, size float64) float64 {
	return float64(utf8.RuneCountInString(s)) * size * 0.6
}

// text draws s with its anchor ("start", "middle" or "end") at (x, y), the
// baseline, in style st.
func (c *canvas) text(x, y float64, anchor string, size float64, st textStyle, s string) {
	c.ops = append(c.ops, op{kind: opText, x: x, y: y, anchor: anchor, size: size, style: st, s: s})
}

func (c *canvas) rect(x, y, w, h float64, fill string) {
	c.ops = append(c.ops, op{kind: opRect, x: x, y: y, w: w, h: h, color: fill})
}

func (c *canvas) line(x1, y1, x2, y2 float64, stroke string, width float64) {
	c.ops = append(c.ops, op{kind: opLine, x: x1, y: y1, w: x2, h: y2, color: stroke, width: width})
}

// polyline draws a line through pts with round joins.
func (c *canvas) polyline(pts [][2]float64, stroke string, width float64) {
	c.ops = append(c.ops, op{kind: opPolyline, pts: pts, color: stroke, width: width})
}

// dot draws a filled circle of radius r at (x, y).
func (c *canvas) dot(x, y, r float64, fill string) {
	c.ops = append(c.ops, op{kind: opCircle, x: x, y: y, w: r, color: fill})
}

// title draws the figure title centred in a canvas of width w and returns the
// y just below it.
func (c *canvas) title(w float64, s string) float64 {
	c.text(w/2, 26, "middle", titleSize, textStyle{bold: true}, s)
	return 40
}

// finish returns the figure of size w×h (rounded up to whole pixels),
// described by alt.
func (c *canvas) finish(w, h float64, alt string) Figure {
	return Figure{w: math.Ceil(w), h: math.Ceil(h), ops: c.ops, alt: alt}
}

// legend draws one entry per name, in rows centred in [0, w] starting at y,
// and returns the height used. Entries are a colour swatch (bars) or a short
// line (lines) followed by the name.
func (c *canvas) legend(w, y float64, names []string, lines bool) float64 {
	if len(names) == 0 {
		return 0
	}
	const marker, pad, gap, rowH = 16.0, 5.0, 18.0, 18.0
	entry := func(i int) float64 { return marker + pad + textWidth(names[i], labelSize) }
	// Greedy rows: each row holds indices [start, end).
	var rows [][2]int
	start, rowW := 0, 0.0
	for i := range names {
		if i > start && rowW+gap+entry(i) > w-20 {
			rows = append(rows, [2]int{start, i})
			start, rowW = i, 0
		}
		if i > start {
			rowW += gap
		}
		rowW += entry(i)
	}
	rows = append(rows, [2]int{start, len(names)})
	for r, row := range rows {
		total := 0.0
		for i := row[0]; i < row[1]; i++ {
			total += entry(i)
		}
		total += gap * float64(row[1]-row[0]-1)
		x := (w - total) / 2
		mid := y + rowH*float64(r) + rowH/2
		for i := row[0]; i < row[1]; i++ {
			if lines {
				c.line(x, mid, x+marker, mid, color(i), 2.5)
			} else {
				c.rect(x, mid-5, marker, 10, color(i))
			}
			c.text(x+marker+pad, mid+4, "start", labelSize, textStyle{}, names[i])
			x += entry(i) + gap
		}
	}
	return rowH * float64(len(rows))
}

// trimNum formats v with the given decimals and drops trailing zeros (and a
// trailing point): 20 prints "20", 0.25 "0.25", and never "-0".
func trimNum(v float64, decimals int) string {
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// value returns vs[i], or NaN when i is out of range.
func value(vs []float64, i int) float64 {
	if i < len(vs) {
		return vs[i]
	}
	return math.NaN()
}

// extent returns the smallest and largest finite values, and false when
// there are none.
func extent(vss ...[]float64) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, vs := range vss {
		for _, v := range vs {
			if finite(v) {
				lo, hi, ok = math.Min(lo, v), math.Max(hi, v), true
			}
		}
	}
	return lo, hi, ok
}

// axis is a linear scale with round tick values.
type axis struct {
	ticks    []float64 // first and last are the ends of the axis
	decimals int       // digits after the point that print the ticks exactly
}

// axisLimit bounds the range an axis covers. Values beyond it are drawn
// clipped; within it no sum or step of the arithmetic below overflows.
const axisLimit = 1e300

// newAxis returns an axis with about n round ticks that covers [lo, hi].
// An empty range, or one narrower than float64 can resolve at its magnitude
// (values equal up to rounding, as a moving average of a constant gives), is
// widened around its middle.
func newAxis(lo, hi float64, n int) axis {
	lo, hi = math.Max(lo, -axisLimit), math.Min(hi, axisLimit)
	if span := hi - lo; !(span > 1e-9*math.Max(math.Abs(lo), math.Abs(hi))) || span < 1/axisLimit {
		mid := lo + span/2
		pad := math.Abs(mid) / 2
		if !(pad >= 1/axisLimit) {
			pad = 1
		}
		lo, hi = mid-pad, mid+pad
	}
	raw := (hi - lo) / float64(max(n, 1))
	exp := math.Floor(math.Log10(raw))
	f := raw / math.Pow(10, exp)
	var nice float64
	switch {
	case f <= 1:
		nice = 1
	case f <= 2:
		nice = 2
	case f <= 5:
		nice = 5
	default:
		nice = 10
	}
	step := nice * math.Pow(10, exp)
	first := math.Floor(lo/step + 1e-9)
	last := math.Ceil(hi/step - 1e-9)
	var a axis
	if !(last-first >= 1 && last-first <= 100) { // cannot happen after the widening; never loop on it
		a.ticks = []float64{lo, hi}
		return a
	}
	for k := first; k <= last; k++ {
		a.ticks = append(a.ticks, k*step)
	}
	a.decimals = max(0, int(math.Ceil(-math.Log10(step)-1e-9)))
	return a
}

func (a axis) lo() float64 { return a.ticks[0] }
func (a axis) hi() float64 { return a.ticks[len(a.ticks)-1] }

// label formats tick value v: with the axis's decimals, or in exponent form
// where that would take more than 15 digits.
func (a axis) label(v float64) string {
	if math.Abs(v) >= 1e15 || a.decimals > 15 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	s := strconv.FormatFloat(v, 'f', a.decimals, 64)
	if strings.Trim(s, "-0.") == "" {
		return strings.TrimPrefix(s, "-")
	}
	return s
}

// labelWidth is the width of the widest tick label at size.
func (a axis) labelWidth(size float64) float64 {
	w := 0.0
	for _, t := range a.ticks {
		w = math.Max(w, textWidth(a.label(t), size))
	}
	return w
}

// scale maps v from the axis onto [p0, p1].
func (a axis) scale(v, p0, p1 float64) float64 {
	return p0 + (v-a.lo())/(a.hi()-a.lo())*(p1-p0)
}

// wrap splits s at spaces into lines no wider than w pixels at size; a single
// word wider than w stays on its own line.
func wrap(s string, w, size float64) []string {
	var lines []string
	cur := ""
	for _, word := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = word
		case textWidth(cur+" "+word, size) <= w:
			cur += " " + word
		default:
			lines = append(lines, cur)
			cur = word
		}
	}
	if cur != "" || len(lines) == 0 {
		lines = append(lines, cur)
	}
	return lines
}

// oneLine makes s a single line: control characters and runs of spaces
// become one space.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r < 0x20 || r == ' ' || r == 0x7f }), " ")
}
