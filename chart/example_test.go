package chart_test

import (
	"fmt"
	"strings"

	"github.com/agentrl-go/agentrl/chart"
)

// firstLine is the <svg> root element of a document.
func firstLine(svg string) string {
	line, _, _ := strings.Cut(svg, "\n")
	return line
}

func ExampleBars() {
	fig := chart.Bars("Turn-level credit on one episode",
		[]string{"read", "edit fix_comparison", "test", "submit"},
		[]chart.Series{
			{Name: "reward r_k", Values: []float64{-0.05, -0.05, 0, 1}},
			{Name: "advantage A_k", Values: []float64{0.447, 0.391, 0.288, 0.126}},
		})
	// In a notebook: nbdisplay.Display(fig)
	fmt.Println(firstLine(fig.SVG()))
	// Output:
	// <svg xmlns="http://www.w3.org/2000/svg" width="436" height="398" viewBox="0 0 436 398" font-family="sans-serif">
}

func ExamplePanels() {
	passRate := []float64{0.2, 0.3, 0.25, 0.4, 0.45, 0.5, 0.48, 0.6}
	fig := chart.Panels("Behavior over training", "step", []chart.Panel{{
		Title: "pass rate",
		Lines: []chart.Series{{Name: "default", Values: chart.MovingAverage(passRate, 5)}},
	}})
	fmt.Println(firstLine(fig.SVG()))
	// Output:
	// <svg xmlns="http://www.w3.org/2000/svg" width="340" height="302" viewBox="0 0 340 302" font-family="sans-serif">
}

func ExampleMovingAverage() {
	fmt.Printf("%.2f\n", chart.MovingAverage([]float64{1, 2, 3, 4, 5, 6}, 3))
	// Output:
	// [1.00 1.50 2.00 3.00 4.00 5.00]
}

func ExampleHeatmaps() {
	ctx := []string{"short", "long"}
	fig := chart.Heatmaps("Held-out results", []chart.Heatmap{
		{
			Title: "pass rate", Rows: ctx, Cols: ctx, Min: 0, Max: 1,
			Values: [][]float64{{0.81, 0.55}, {0.70, 0.77}},
			YLabel: "training context", XLabel: "evaluation context",
		},
		{
			Title: "tests per episode", Rows: ctx, Cols: ctx, Format: "%.2f",
			Values: [][]float64{{1.12, 1.34}, {1.05, 1.21}},
		},
	})
	fmt.Println(firstLine(fig.SVG()))
	// Output:
	// <svg xmlns="http://www.w3.org/2000/svg" width="434" height="180" viewBox="0 0 434 180" font-family="sans-serif">
}
