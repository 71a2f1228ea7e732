package chart

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestGoldenPNG checks the PNG of every golden case against testdata/<name>.png:
// byte for byte on amd64 (where the golden files are written); elsewhere, where
// the compiler may fuse multiply-adds and move an anti-aliased edge by a
// rounding, pixel by pixel within a small tolerance.
func TestGoldenPNG(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fig := tc.svg()
			got, err := fig.PNG()
			if err != nil {
				t.Fatal(err)
			}
			if again, err := fig.PNG(); err != nil || !bytes.Equal(again, got) {
				t.Fatalf("PNG differs between two calls (err %v)", err)
			}
			img, err := png.Decode(bytes.NewReader(got))
			if err != nil {
				t.Fatalf("not a PNG: %v", err)
			}
			w, h := fig.Size()
			if b := img.Bounds(); b.Dx() != w*PNGScale || b.Dy() != h*PNGScale {
				t.Errorf("PNG is %v, want %d×%d (the SVG's %d×%d times %d)", b.Size(), w*PNGScale, h*PNGScale, w, h, PNGScale)
			}
			path := filepath.Join("testdata", tc.name+".png")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./chart -update to create it)", err)
			}
			if bytes.Equal(got, want) {
				return
			}
			if runtime.GOARCH == "amd64" {
				t.Fatalf("%s differs from the golden file; if the change is intended, run go test ./chart -update", path)
			}
			wantImg, err := png.Decode(bytes.NewReader(want))
			if err != nil {
				t.Fatal(err)
			}
			if n := differentPixels(img, wantImg, 8); n > img.Bounds().Dx()*img.Bounds().Dy()/1000 {
				t.Errorf("%s: %d pixels differ by more than 8 levels from the golden file", path, n)
			}
		})
	}
}

// differentPixels counts the pixels whose channels differ by more than tol
// (out of 255), or all of them when the sizes differ.
func differentPixels(a, b image.Image, tol uint32) int {
	if a.Bounds() != b.Bounds() {
		return a.Bounds().Dx() * a.Bounds().Dy()
	}
	n := 0
	diff := func(x, y uint32) uint32 { return max(x, y) - min(x, y) }
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			if max(diff(r1, r2), diff(g1, g2), diff(b1, b2)) > tol*257 {
				n++
			}
		}
	}
	return n
}

// TestPNGDraws checks that the raster holds what the display list says: ink
// where a bar is, white where nothing is, and every degenerate input encodes.
func TestPNGDraws(t *testing.T) {
	fig := Bars("", []string{"a"}, []Series{{"s", []float64{1}}})
	img, err := fig.Image()
	if err != nil {
		t.Fatal(err)
	}
	var bar op
	for _, o := range fig.ops {
		if o.kind == opRect && o.color == color(0) {
			bar = o
		}
	}
	mid := image.Pt(int((bar.x+bar.w/2)*PNGScale), int((bar.y+bar.h/2)*PNGScale))
	if got := img.RGBAAt(mid.X, mid.Y); got != parseColor(color(0)) {
		t.Errorf("bar centre %v is %v, want %s", mid, got, color(0))
	}
	if got := img.RGBAAt(1, img.Bounds().Dy()-2); got != parseColor("white") {
		t.Errorf("bottom-left corner is %v, want white", got)
	}
	for name, f := range map[string]Figure{
		"zero":           {},
		"bars nil":       Bars("", nil, nil),
		"panels nil":     Panels("", "", nil),
		"heatmaps nil":   Heatmaps("", nil),
		"panels huge":    Panels("t", "x", []Panel{{"p", []Series{{"s", []float64{-1e308, 1e308}}}}}),
		"bars control":   Bars("a\x1bb\x00", []string{"\x07"}, []Series{{"s\x1b", []float64{1}}}),
		"heatmap rotate": Heatmaps("t", []Heatmap{{Rows: []string{"r"}, Cols: []string{"c"}, YLabel: strings.Repeat("long label ", 10)}}),
	} {
		done := make(chan error, 1)
		go func() { _, err := f.PNG(); done <- err }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s: no PNG after 10 s", name)
		}
	}
}

func TestValueLabel(t *testing.T) {
	for v, want := range map[float64]string{
		20: "20", 0.25: "0.25", -0.05: "-0.05", 0.447: "0.447", 1.0004: "1", -0.0001: "0", 0: "0",
		1234.5678: "1234.568", math.Copysign(0, -1): "0",
	} {
		if got := valueLabel(v); got != want {
			t.Errorf("valueLabel(%v) = %q, want %q", v, got, want)
		}
	}
	if got := (Heatmap{}).label(0.5); got != "0.5" {
		t.Errorf("default heatmap label of 0.5 = %q, want 0.5", got)
	}
	if got := (Heatmap{Format: "%.2f"}).label(0.5); got != "0.50" {
		t.Errorf(`heatmap label of 0.5 with "%%.2f" = %q, want 0.50`, got)
	}
}

func TestAlt(t *testing.T) {
	for name, tc := range map[string]struct {
		fig  Figure
		want string
	}{
		"bars":     {figure121(), `Bar chart "Turn-level credit on one episode": reward r_k, value V(s_k), TD error δ_k, advantage A_k for read, edit fix_comparison, test, submit`},
		"panels":   {figure122(), `Line charts "Behavior over training (5-step moving average)" over step: pass rate, reads, tests, turns; lines default, penalty 0.05, penalty 0.3, max_turns 3`},
		"heatmaps": {figure123(), `Heatmaps "Held-out results per (training context, evaluation context)": pass rate (3×3: training context by evaluation context); tests per episode (3×3: training context by evaluation context)`},
		"control":  {Bars("a\nb", nil, nil), `Bar chart "a\nb": for`},
	} {
		if got := tc.fig.Alt(); got != tc.want {
			t.Errorf("%s: Alt() = %q, want %q", name, got, tc.want)
		}
	}
}

// BenchmarkPNG times rasterizing and encoding the book's three figures.
func BenchmarkPNG(b *testing.B) {
	for _, tc := range cases[:3] {
		fig := tc.svg()
		b.Run(tc.name+"/image", func(b *testing.B) {
			for b.Loop() {
				if _, err := fig.Image(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/png", func(b *testing.B) {
			for b.Loop() {
				if _, err := fig.PNG(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
