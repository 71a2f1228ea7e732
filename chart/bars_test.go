package chart

import (
	"math"
	"strings"
	"testing"
)

// TestBarAxis checks that the value axis of a bar chart holds the zero line
// and leaves room beyond the longest bars for their value labels.
func TestBarAxis(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		vss  [][]float64
		want string // the tick labels
	}{
		{"none", nil, "0.0 0.2 0.4 0.6 0.8 1.0 1.2"},
		{"all missing", [][]float64{{nan, math.Inf(1)}}, "0.0 0.2 0.4 0.6 0.8 1.0 1.2"},
		{"positive", [][]float64{{2, 3}, {1}}, "0.0 0.5 1.0 1.5 2.0 2.5 3.0 3.5"},
		{"negative", [][]float64{{-0.05, -1}}, "-1.2 -1.0 -0.8 -0.6 -0.4 -0.2 0.0"},
		{"both", [][]float64{{-1, nan}, {1}}, "-1.5 -1.0 -0.5 0.0 0.5 1.0 1.5"},
	}
	for _, tc := range tests {
		a := barAxis(tc.vss)
		var got []string
		for _, v := range a.ticks {
			got = append(got, a.label(v))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: barAxis(%v) ticks = %v, want %s", tc.name, tc.vss, got, tc.want)
		}
	}
}
