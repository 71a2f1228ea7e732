package chart

import (
	"bytes"
	"fmt"
	"image"
	imagecolor "image/color"
	"image/draw"
	"image/png"
	"math"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// Figure is a drawn chart: a display list that renders as SVG or PNG.
// The zero Figure is an empty 0×0 drawing.
type Figure struct {
	w, h float64 // whole pixels
	ops  []op
	alt  string
}

// Size returns the figure's width and height in CSS pixels (the SVG's size;
// the PNG has [PNGScale] times as many pixels each way).
func (f Figure) Size() (width, height int) { return int(f.w), int(f.h) }

// Alt returns a one-line description of the figure (its kind, title and what
// it plots), for text/plain and alt text.
func (f Figure) Alt() string { return f.alt }

// opKind is the kind of a drawing operation.
type opKind int

const (
	opRect     opKind = iota // x, y, w, h
	opLine                   // from (x, y) to (w, h)
	opPolyline               // pts
	opCircle                 // centre (x, y), radius w
	opText                   // s at (x, y)
)

// op is one element of the display list.
type op struct {
	kind       opKind
	x, y, w, h float64
	pts        [][2]float64
	color      string  // fill (rect, circle) or stroke (line, polyline)
	width      float64 // stroke width
	// Text.
	s      string
	anchor string // "start", "middle" or "end"
	size   float64
	style  textStyle
}

// textStyle is how a text is drawn besides its size.
type textStyle struct {
	bold, italic bool
	fill         string // "" is black
	rotate       bool   // by -90° around the anchor point
}

// SVG returns the figure as a complete SVG document.
func (f Figure) SVG() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif">`+"\n", f.w, f.h, f.w, f.h)
	fmt.Fprintf(&b, `<rect width="%.0f" height="%.0f" fill="white"/>`+"\n", f.w, f.h)
	for _, o := range f.ops {
		switch o.kind {
		case opRect:
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`+"\n", num(o.x), num(o.y), num(o.w), num(o.h), o.color)
		case opLine:
			fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"/>`+"\n",
				num(o.x), num(o.y), num(o.w), num(o.h), o.color, num(o.width))
		case opPolyline:
			pts := make([]string, len(o.pts))
			for i, p := range o.pts {
				pts[i] = num(p[0]) + "," + num(p[1])
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%s" stroke-linejoin="round"/>`+"\n",
				strings.Join(pts, " "), o.color, strconv.FormatFloat(o.width, 'f', -1, 64))
		case opCircle:
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="%s" fill="%s"/>`+"\n", num(o.x), num(o.y), strconv.FormatFloat(o.w, 'f', -1, 64), o.color)
		case opText:
			fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="%s" font-size="%s"`, num(o.x), num(o.y), o.anchor, num(o.size))
			if o.style.bold {
				b.WriteString(` font-weight="bold"`)
			}
			if o.style.fill != "" {
				fmt.Fprintf(&b, ` fill="%s"`, o.style.fill)
			}
			if o.style.italic {
				b.WriteString(` font-style="italic"`)
			}
			if o.style.rotate {
				fmt.Fprintf(&b, ` transform="rotate(-90 %s %s)"`, num(o.x), num(o.y))
			}
			fmt.Fprintf(&b, ">%s</text>\n", escape(o.s))
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// PNGScale is how many PNG pixels one SVG pixel becomes each way, so that the
// PNG stays sharp on high-density screens when shown at the SVG's size.
const PNGScale = 2

// PNG returns the figure rasterized at [PNGScale] times its SVG size, in
// pure Go: shapes anti-aliased with golang.org/x/image/vector, text in the Go
// fonts. The bytes are the same on every call.
func (f Figure) PNG() ([]byte, error) {
	img, err := f.Image()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.DefaultCompression}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Image returns the figure rasterized as in [Figure.PNG].
func (f Figure) Image() (*image.RGBA, error) {
	const s = PNGScale
	W, H := max(int(f.w), 1)*s, max(int(f.h), 1)*s // a PNG has at least one pixel
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	r := rasterizer{img: img, z: vector.NewRasterizer(1, 1)}
	for _, o := range f.ops {
		switch o.kind {
		case opRect:
			r.fill(o.color, [][2]float64{{o.x, o.y}, {o.x + o.w, o.y}, {o.x + o.w, o.y + o.h}, {o.x, o.y + o.h}})
		case opLine:
			r.fill(o.color, segment(o.x, o.y, o.w, o.h, o.width))
		case opPolyline:
			var polys [][][2]float64
			for i := 1; i < len(o.pts); i++ {
				polys = append(polys, segment(o.pts[i-1][0], o.pts[i-1][1], o.pts[i][0], o.pts[i][1], o.width))
			}
			for _, p := range o.pts[1:max(len(o.pts)-1, 1)] { // round joins
				polys = append(polys, circle(p[0], p[1], o.width/2))
			}
			r.fill(o.color, polys...)
		case opCircle:
			r.fill(o.color, circle(o.x, o.y, o.w))
		case opText:
			if err := r.text(o); err != nil {
				return nil, err
			}
		}
	}
	return img, nil
}

// rasterizer draws ops onto img at PNGScale.
type rasterizer struct {
	img *image.RGBA
	z   *vector.Rasterizer
}

// fill paints the union of the polygons (in SVG pixels) with colour hex.
// Every polygon is made counter-clockwise first, so overlaps add up instead
// of cancelling.
func (r *rasterizer) fill(hex string, polys ...[][2]float64) {
	// Rasterize only the polygons' bounding box, clipped to the image.
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range polys {
		for _, q := range p {
			x0, y0 = math.Min(x0, q[0]*PNGScale), math.Min(y0, q[1]*PNGScale)
			x1, y1 = math.Max(x1, q[0]*PNGScale), math.Max(y1, q[1]*PNGScale)
		}
	}
	box := image.Rect(int(math.Floor(max(x0, -1))), int(math.Floor(max(y0, -1))),
		int(math.Ceil(min(x1, 1e6))), int(math.Ceil(min(y1, 1e6)))).Intersect(r.img.Bounds())
	if box.Empty() {
		return
	}
	r.z.Reset(box.Dx(), box.Dy())
	r.z.DrawOp = draw.Over
	ox, oy := float64(box.Min.X), float64(box.Min.Y)
	for _, p := range polys {
		if len(p) < 3 {
			continue
		}
		area := 0.0
		for i := range p {
			q := p[(i+1)%len(p)]
			area += p[i][0]*q[1] - q[0]*p[i][1]
		}
		at := func(i int) (float32, float32) {
			if area < 0 {
				i = len(p) - 1 - i
			}
			return float32(p[i][0]*PNGScale - ox), float32(p[i][1]*PNGScale - oy)
		}
		r.z.MoveTo(at(0))
		for i := 1; i < len(p); i++ {
			r.z.LineTo(at(i))
		}
		r.z.ClosePath()
	}
	r.z.Draw(r.img, box, image.NewUniform(parseColor(hex)), image.Point{})
}

// segment is the rectangle a line of width w from (x1, y1) to (x2, y2) covers
// (butt caps).
func segment(x1, y1, x2, y2, w float64) [][2]float64 {
	dx, dy := x2-x1, y2-y1
	l := math.Hypot(dx, dy)
	if l == 0 {
		return nil
	}
	nx, ny := -dy/l*w/2, dx/l*w/2
	return [][2]float64{{x1 + nx, y1 + ny}, {x2 + nx, y2 + ny}, {x2 - nx, y2 - ny}, {x1 - nx, y1 - ny}}
}

// circle is a 32-gon approximating the circle of radius rad around (x, y).
func circle(x, y, rad float64) [][2]float64 {
	const n = 32
	p := make([][2]float64, n)
	for i := range p {
		a := 2 * math.Pi * float64(i) / n
		p[i] = [2]float64{x + rad*math.Cos(a), y + rad*math.Sin(a)}
	}
	return p
}

// parseColor reads "#rrggbb", "white" or "black"; anything else is black.
func parseColor(s string) imagecolor.RGBA {
	switch s {
	case "white":
		return imagecolor.RGBA{255, 255, 255, 255}
	}
	if len(s) == 7 && s[0] == '#' {
		if v, err := strconv.ParseUint(s[1:], 16, 32); err == nil {
			return imagecolor.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255}
		}
	}
	return imagecolor.RGBA{0, 0, 0, 255}
}

// fonts are the parsed Go fonts: regular, bold, italic.
var fonts = sync.OnceValues(func() ([3]*opentype.Font, error) {
	var fs [3]*opentype.Font
	for i, ttf := range [][]byte{goregular.TTF, gobold.TTF, goitalic.TTF} {
		f, err := opentype.Parse(ttf)
		if err != nil {
			return fs, err
		}
		fs[i] = f
	}
	return fs, nil
})

// text draws a text op: measured in the Go font and placed by its anchor, or
// drawn unrotated on a scratch image and turned by -90° onto the figure.
func (r *rasterizer) text(o op) error {
	fs, err := fonts()
	if err != nil {
		return err
	}
	f := fs[0]
	switch {
	case o.style.bold:
		f = fs[1]
	case o.style.italic:
		f = fs[2]
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: o.size * PNGScale, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return err
	}
	defer face.Close()
	ink := image.NewUniform(parseColor(o.style.fill))
	adv := font.MeasureString(face, o.s)
	var shift fixed.Int26_6
	switch o.anchor {
	case "middle":
		shift = adv / 2
	case "end":
		shift = adv
	}
	x, y := fixed.Int26_6(math.Round(o.x*PNGScale*64)), fixed.Int26_6(math.Round(o.y*PNGScale*64))
	if !o.style.rotate {
		d := font.Drawer{Dst: r.img, Src: ink, Face: face, Dot: fixed.Point26_6{X: x - shift, Y: y}}
		d.DrawString(o.s)
		return nil
	}
	// Draw along a scratch image's x axis, baseline at row ascent, then map
	// scratch (u, v) to figure (X + v - ascent, Y - u + shift) with X, Y the
	// anchor in PNG pixels: a turn by -90° around the anchor.
	m := face.Metrics()
	asc, desc := m.Ascent.Ceil(), m.Descent.Ceil()
	w := adv.Ceil() + 2
	scratch := image.NewAlpha(image.Rect(0, 0, w, asc+desc))
	d := font.Drawer{Dst: scratch, Src: image.Opaque, Face: face, Dot: fixed.Point26_6{X: 0, Y: fixed.I(asc)}}
	d.DrawString(o.s)
	X, Y := x.Round(), y.Round()
	sh := shift.Round()
	mask := image.NewAlpha(r.img.Bounds())
	for v := 0; v < asc+desc; v++ {
		for u := 0; u < w; u++ {
			mask.SetAlpha(X+v-asc, Y-u+sh, scratch.AlphaAt(u, v))
		}
	}
	draw.DrawMask(r.img, r.img.Bounds(), ink, image.Point{}, mask, image.Point{}, draw.Over)
	return nil
}
