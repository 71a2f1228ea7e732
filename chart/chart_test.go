package chart

import (
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Sample data shaped like the book's three figures.

func figure121() Figure {
	return Bars("Turn-level credit on one episode",
		[]string{"read", "edit fix_comparison", "test", "submit"},
		[]Series{
			{"reward r_k", []float64{-0.05, -0.05, 0, 1}},
			{"value V(s_k)", []float64{0.412, 0.538, 0.701, 0.874}},
			{"TD error δ_k", []float64{0.071, 0.111, 0.156, 0.126}},
			{"advantage A_k", []float64{0.447, 0.391, 0.288, 0.126}},
		})
}

// curve is a deterministic learning curve from start to end over n steps,
// with a small wobble so that smoothing shows.
func curve(n int, start, end, rate, wobble float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		t := float64(i)
		out[i] = end + (start-end)*math.Exp(-rate*t) + wobble*math.Sin(1.7*t)
	}
	return out
}

func figure122() Figure {
	arms := []string{"default", "penalty 0.05", "penalty 0.3", "max_turns 3"}
	metric := func(title string, start, end []float64, wobble float64) Panel {
		p := Panel{Title: title}
		for i, arm := range arms {
			raw := curve(40, start[i], end[i], 0.08+0.02*float64(i), wobble)
			p.Lines = append(p.Lines, Series{arm, MovingAverage(raw, 5)})
		}
		return p
	}
	return Panels("Behavior over training (5-step moving average)", "step", []Panel{
		metric("pass rate", []float64{0.2, 0.2, 0.2, 0.2}, []float64{0.72, 0.68, 0.41, 0.55}, 0.04),
		metric("reads", []float64{1.5, 1.5, 1.5, 1.5}, []float64{1.1, 0.8, 0.2, 0.6}, 0.1),
		metric("tests", []float64{1.2, 1.2, 1.2, 1.2}, []float64{1.9, 1.4, 0.5, 0.9}, 0.1),
		metric("turns", []float64{4.5, 4.5, 4.5, 3}, []float64{4.1, 3.6, 2.4, 2.9}, 0.15),
	})
}

func figure123() Figure {
	ctx := []string{"short", "long", "noisy"}
	return Heatmaps("Held-out results per (training context, evaluation context)", []Heatmap{
		{
			Title: "pass rate", Rows: ctx, Cols: ctx, Format: "%.3f", Min: 0, Max: 1,
			YLabel: "training context", XLabel: "evaluation context",
			Values: [][]float64{{0.812, 0.547, 0.391}, {0.703, 0.766, 0.422}, {0.688, 0.609, 0.641}},
		},
		{
			Title: "tests per episode", Rows: ctx, Cols: ctx, Format: "%.2f",
			YLabel: "training context", XLabel: "evaluation context",
			Values: [][]float64{{1.12, 1.34, 1.58}, {1.05, 1.21, 1.49}, {1.31, 1.44, 1.87}},
		},
	})
}

// cases are the documents checked against testdata/<name>.svg.
var cases = []struct {
	name string
	svg  func() Figure
}{
	{"figure12_1_bars", figure121},
	{"figure12_2_panels", figure122},
	{"figure12_3_heatmaps", figure123},
	{"bars_edge", func() Figure {
		return Bars(`Edge <cases> & "quotes"`, []string{"all negative", "not a number", "missing", "zero"},
			[]Series{
				{"a", []float64{-2, math.NaN(), -1, 0}},
				{"b & c", []float64{-0.5, math.Inf(1)}},
			})
	}},
	{"panels_edge", func() Figure {
		return Panels("Edge cases", "step", []Panel{
			{Title: "flat", Lines: []Series{{"x", []float64{3, 3, 3, 3}}}},
			{Title: "gaps", Lines: []Series{
				{"x", []float64{1, 2, math.NaN(), 4, 5, math.NaN(), 7}},
				{"y <i>", []float64{-1, math.Inf(-1), -3}},
			}},
			{Title: "empty"},
		})
	}},
	{"strips_seeds", func() Figure {
		arm := func(name string, vs ...float64) Series { return Series{name, vs} }
		return Strips("Under RL seeds 0-5: changed and the chapter's arm", []Panel{
			{Title: "held-out pass", Lines: []Series{
				arm("changed", 0.787, 0.775, 0, 0.819, 0.787, 0.856), arm("chapter's arm", 0.881, 0.869, 0.881, 0.863, 0.831, 0.831)}},
			{Title: "tests", Lines: []Series{
				arm("changed", 0.037, 0.006, 0, 0, 0.031, 0.013), arm("chapter's arm", 0.55, 0.713, 1.062, 1.075, 0.838, 0.988)}},
			{Title: "gaps & flat", Lines: []Series{arm("changed", 1, math.NaN(), 1), arm("chapter's arm", math.Inf(1))}},
		})
	}},
	{"heatmaps_edge", func() Figure {
		return Heatmaps("Edge cases", []Heatmap{{
			Title: "ragged & equal", Rows: []string{"r0", "r1"}, Cols: []string{"c0", "c1", "c2"},
			Values: [][]float64{{0.5, 0.5, math.NaN()}, {0.5}},
		}})
	}},
}

func TestGolden(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.svg().SVG()
			if again := tc.svg().SVG(); again != got {
				t.Fatal("output differs between two calls with the same input")
			}
			path := filepath.Join("testdata", tc.name+".svg")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./chart -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the golden file; if the change is intended, run go test ./chart -update", path)
			}
		})
	}
}

// checkSVG parses doc as XML and checks the root element and the absence of
// unprintable numbers.
func checkSVG(t *testing.T, doc string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(doc))
	var root *xml.StartElement
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == nil {
			root = &se
		}
	}
	if root == nil || root.Name.Local != "svg" {
		t.Fatalf("root element is %v, want svg", root)
	}
	attrs := map[string]string{}
	for _, a := range root.Attr {
		attrs[a.Name.Local] = a.Value
	}
	for _, name := range []string{"width", "height", "viewBox", "font-family"} {
		if attrs[name] == "" {
			t.Errorf("svg root has no %s", name)
		}
	}
	for _, bad := range []string{"NaN", "Inf", "http://", "href"} {
		if strings.Contains(strings.ReplaceAll(doc, `xmlns="http://www.w3.org/2000/svg"`, ""), bad) {
			t.Errorf("output contains %q", bad)
		}
	}
}

func TestWellFormed(t *testing.T) {
	empty := map[string]func() Figure{
		"bars nil":          func() Figure { return Bars("", nil, nil) },
		"bars no series":    func() Figure { return Bars("t", []string{"a", "b"}, nil) },
		"bars empty values": func() Figure { return Bars("t", []string{"a"}, []Series{{"s", nil}}) },
		"bars all NaN":      func() Figure { return Bars("t", []string{"a"}, []Series{{"s", []float64{math.NaN()}}}) },
		"bars all equal":    func() Figure { return Bars("t", []string{"a", "b"}, []Series{{"s", []float64{2, 2}}}) },
		"panels nil":        func() Figure { return Panels("", "", nil) },
		"panels one point":  func() Figure { return Panels("t", "x", []Panel{{"p", []Series{{"s", []float64{1}}}}}) },
		"panels five":       func() Figure { return Panels("t", "x", make([]Panel, 5)) },
		"heatmaps nil":      func() Figure { return Heatmaps("", nil) },
		"heatmap no values": func() Figure { return Heatmaps("t", []Heatmap{{Rows: []string{"a"}, Cols: []string{"b"}}}) },
	}
	for _, tc := range cases {
		empty[tc.name] = tc.svg
	}
	for name, svg := range empty {
		t.Run(name, func(t *testing.T) { checkSVG(t, svg().SVG()) })
	}
}

func TestEscape(t *testing.T) {
	doc := Bars(`a<b & "c"`, []string{"x'y"}, []Series{{"<s>", []float64{1}}}).SVG()
	for _, want := range []string{"a&lt;b &amp; &quot;c&quot;", "x&apos;y", "&lt;s&gt;"} {
		if !strings.Contains(doc, want) {
			t.Errorf("output lacks escaped text %q", want)
		}
	}
}

func TestMovingAverage(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		x      []float64
		window int
		want   []float64
	}{
		{"empty", nil, 5, []float64{}},
		{"window 1 copies", []float64{1, 2, 3}, 1, []float64{1, 2, 3}},
		{"window 0 as 1", []float64{1, 2, 3}, 0, []float64{1, 2, 3}},
		{"trailing with warm-up", []float64{1, 2, 3, 4, 5}, 3, []float64{1, 1.5, 2, 3, 4}},
		{"window longer than x", []float64{2, 4}, 5, []float64{2, 3}},
		{"negative", []float64{-1, -3, 1}, 2, []float64{-1, -2, -1}},
		{"NaN skipped", []float64{1, nan, 3, nan, nan}, 2, []float64{1, 1, 3, 3, nan}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := MovingAverage(tc.x, tc.window)
			if len(got) != len(tc.want) {
				t.Fatalf("len = %d, want %d", len(got), len(tc.want))
			}
			for i := range got {
				same := got[i] == tc.want[i] || (math.IsNaN(got[i]) && math.IsNaN(tc.want[i]))
				if !same {
					t.Errorf("MovingAverage(%v, %d) = %v, want %v", tc.x, tc.window, got, tc.want)
					break
				}
			}
		})
	}
}

func TestFirstIndexAndPeak(t *testing.T) {
	nan := math.NaN()
	above := func(level float64) func(float64) bool { return func(y float64) bool { return y >= level } }
	for _, tc := range []struct {
		name      string
		ys        []float64
		from      int
		level     float64
		first     int
		peak      float64
		peakIndex int
	}{
		{"empty", nil, 0, 1, -1, nan, -1},
		{"crosses", []float64{0.1, 0.5, 0.9, 1.2, 0.8}, 0, 0.85, 2, 1.2, 3},
		{"from skips earlier", []float64{0.9, 0.1, 0.9}, 1, 0.85, 2, 0.9, 0},
		{"negative from as 0", []float64{0.9, 0.1}, -3, 0.85, 0, 0.9, 0},
		{"never", []float64{0.1, 0.2}, 0, 0.85, -1, 0.2, 1},
		{"first of equal peaks", []float64{1, 3, 3}, 0, 3, 1, 3, 1},
		{"NaN left out of the peak", []float64{nan, 2, nan}, 0, 1, 1, 2, 1},
		{"all NaN", []float64{nan, nan}, 0, 1, -1, nan, -1},
	} {
		if got := FirstIndex(tc.ys, tc.from, above(tc.level)); got != tc.first {
			t.Errorf("%s: FirstIndex = %d, want %d", tc.name, got, tc.first)
		}
		peak, i := Peak(tc.ys)
		if i != tc.peakIndex || !(peak == tc.peak || math.IsNaN(peak) && math.IsNaN(tc.peak)) {
			t.Errorf("%s: Peak = %v at %d, want %v at %d", tc.name, peak, i, tc.peak, tc.peakIndex)
		}
	}
}

func TestAxis(t *testing.T) {
	tests := []struct {
		lo, hi float64
		n      int
		want   []string
	}{
		{0, 1, 5, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{-0.6, 0.9, 5, []string{"-1.0", "-0.5", "0.0", "0.5", "1.0"}},
		{0, 39, 4, []string{"0", "10", "20", "30", "40"}},
		{0.37, 0.71, 4, []string{"0.3", "0.4", "0.5", "0.6", "0.7", "0.8"}},
		{3, 3, 4, []string{"1", "2", "3", "4", "5"}},
		{0, 0, 4, []string{"-1.0", "-0.5", "0.0", "0.5", "1.0"}},
		// Equal up to rounding (a moving average of a constant 0.1): widened as a constant.
		{0.1, 0.10000000000000002, 4, []string{"0.05", "0.10", "0.15"}},
		{1e9, 1e9 + 1e-7, 4, []string{"500000000", "1000000000", "1500000000"}},
		// Beyond the axis limit: clamped, never overflowing.
		{-math.MaxFloat64, math.MaxFloat64, 2, []string{"-1e+300", "0", "1e+300"}},
		{0, 1e-20, 2, []string{"0", "5e-21", "1e-20"}},
	}
	for _, tc := range tests {
		a := newAxis(tc.lo, tc.hi, tc.n)
		var got []string
		for _, v := range a.ticks {
			got = append(got, a.label(v))
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("newAxis(%v, %v, %d) ticks = %v, want %v", tc.lo, tc.hi, tc.n, got, tc.want)
		}
	}
}

// TestExtremeValues draws inputs at the edges of float64 and checks that each
// returns, within a deadline (a flat range once looped forever), a well-formed
// document.
func TestExtremeValues(t *testing.T) {
	flat := MovingAverage([]float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 5) // 0.1 and 0.10000000000000002
	tests := map[string]func() Figure{
		"panels flat up to rounding": func() Figure {
			return Panels("t", "x", []Panel{{"p", []Series{{"s", flat}}}})
		},
		"panels huge":  func() Figure { return Panels("t", "x", []Panel{{"p", []Series{{"s", []float64{-1e308, 1e308}}}}}) },
		"bars huge":    func() Figure { return Bars("t", []string{"a"}, []Series{{"s", []float64{1.7e308}}}) },
		"bars both":    func() Figure { return Bars("t", []string{"a", "b"}, []Series{{"s", []float64{-1.7e308, 1.7e308}}}) },
		"bars tiny":    func() Figure { return Bars("t", []string{"a"}, []Series{{"s", []float64{5e-324}}}) },
		"bars control": func() Figure { return Bars("a\x1bb\x00", []string{"\x07"}, []Series{{"s\x1b", []float64{1}}}) },
		"heatmap min -Inf": func() Figure {
			return Heatmaps("t", []Heatmap{{Rows: []string{"r"}, Cols: []string{"a", "b"}, Values: [][]float64{{0, 1}}, Min: math.Inf(-1)}})
		},
		"heatmap huge": func() Figure {
			return Heatmaps("t", []Heatmap{{Rows: []string{"r"}, Cols: []string{"a", "b"}, Values: [][]float64{{-1e308, 1e308}}}})
		},
	}
	for name, svg := range tests {
		t.Run(name, func(t *testing.T) {
			done := make(chan string, 1)
			go func() { done <- svg().SVG() }()
			select {
			case doc := <-done:
				checkSVG(t, doc)
			case <-time.After(10 * time.Second):
				t.Fatal("no document after 10 s")
			}
		})
	}
}

// TestHeatmapScale checks the fill of a one-cell heatmap against its colour range.
func TestHeatmapScale(t *testing.T) {
	const lightest, darkest, middle = "#f7fbff", "#08306b", "#6baed6"
	tests := []struct {
		name     string
		v        float64
		min, max float64
		want     string
	}{
		{"at min", 0, 0, 1, lightest},
		{"at max", 1, 0, 1, darkest},
		{"above max, clamped", 2.5, 0, 1, darkest},
		{"below min, clamped", -1, 0, 1, lightest},
		{"halfway", 0.5, 0, 1, middle},
		{"reversed scale", 0, 1, 0, darkest},
		{"reversed scale, max", 1, 1, 0, lightest},
		{"min == max: the values' range (one value)", 7, 3, 3, middle},
		{"NaN max: the values' range", 7, 0, math.NaN(), middle},
		{"-Inf min: the values' range", 7, math.Inf(-1), 1, middle},
	}
	for _, tc := range tests {
		doc := Heatmaps("", []Heatmap{{Rows: []string{"r"}, Cols: []string{"c"}, Values: [][]float64{{tc.v}}, Min: tc.min, Max: tc.max}}).SVG()
		if fill := `fill="` + tc.want + `"`; !strings.Contains(doc, fill) {
			t.Errorf("%s: value %v on [%v, %v]: no cell with %s", tc.name, tc.v, tc.min, tc.max, fill)
		}
	}
}

// TestHeatmapTitleInside checks that a title wider than its grid stays inside the canvas.
func TestHeatmapTitleInside(t *testing.T) {
	title := "held-out pass rate by training and evaluation context"
	doc := Heatmaps("", []Heatmap{{Title: title, Rows: []string{"r"}, Cols: []string{"c"}, Values: [][]float64{{1}},
		XLabel: "an evaluation context label that is wider than one column"}}).SVG()
	var width float64
	if _, err := fmt.Sscanf(doc[strings.Index(doc, `width="`):], `width="%g"`, &width); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		text string
		size float64
	}{{title, labelSize + 1}, {"an evaluation context label that is wider than one column", labelSize}} {
		end := strings.Index(doc, ">"+s.text+"</text>")
		start := strings.LastIndex(doc[:end], `<text x="`)
		var x float64
		if _, err := fmt.Sscanf(doc[start:], `<text x="%g"`, &x); err != nil {
			t.Fatal(err)
		}
		if half := textWidth(s.text, s.size) / 2; x-half < 0 || x+half > width {
			t.Errorf("%q centred at x = %.2f spans [%.2f, %.2f], outside the canvas [0, %.0f]", s.text, x, x-half, x+half, width)
		}
	}
}

func TestWrap(t *testing.T) {
	tests := []struct {
		s    string
		w    float64
		want []string
	}{
		{"", 100, []string{""}},
		{"read", 100, []string{"read"}},
		{"edit fix_comparison", 200, []string{"edit fix_comparison"}},
		{"edit fix_comparison", 100, []string{"edit", "fix_comparison"}},
	}
	for _, tc := range tests {
		got := wrap(tc.s, tc.w, labelSize)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("wrap(%q, %v) = %q, want %q", tc.s, tc.w, got, tc.want)
		}
	}
}
