package site

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// xrefs are the chapter's numbered parts that a page's text names ("Section 12.2", "§12.2", "Figure 12.1") and
// where each is. A section is the page whose title begins with its number; a figure is the image output whose
// title (the quoted title that package chart writes into the output's text/plain) begins with "Figure N.M:".
type xrefs struct {
	sections map[string]xrefTarget // "12.2" → its page
	figures  map[string]xrefTarget // "12.1" → the page and id of its figure
}

// xrefTarget is where a cross-reference points: a page, and the id of an element on it ("" for the page).
type xrefTarget struct {
	file, id, title string
}

var (
	// sectionTitle is a page title that begins with a section number: "12.4 Context management …".
	sectionTitle = regexp.MustCompile(`^(\d+\.\d+) `)
	// quotedTitle is the title in an image output's text: `Bar chart "Figure 12.1: …": reward …`, `Line charts
	// "…" over step: …`.
	quotedTitle = regexp.MustCompile(`^[^"]*"(.+?)"(?:[:\s]|$)`)
	// figureNumber is a numbered figure's title: "Figure 12.1: turn-level credit …".
	figureNumber = regexp.MustCompile(`^Figure (\d+\.\d+):\s*(.*)$`)
	// mention is a cross-reference in running text: "Section 12.2", "§12.2", "§ 12.2", "Figure 12.1", "figure 12.1".
	mention = regexp.MustCompile(`\b(Section|Figure|figure)[ \x{a0}](\d+\.\d+)\b|§[ \x{a0}]?(\d+\.\d+)\b`)
)

// figureID is the id of a numbered figure's element: "figure-12-1".
func figureID(number string) string {
	return "figure-" + strings.ReplaceAll(number, ".", "-")
}

// figureCaption splits an image output's text into the figure's number ("" when it has none) and its caption
// (the chart's title after the number; "" when the text quotes no title).
func figureCaption(alt string) (number, caption string) {
	m := quotedTitle.FindStringSubmatch(alt)
	if m == nil {
		return "", ""
	}
	if f := figureNumber.FindStringSubmatch(m[1]); f != nil {
		return f[1], f[2]
	}
	return "", m[1]
}

// findXrefs reads where the sections and numbered figures of the site's pages are, so that a page can link a
// mention of one on any other page. The first figure of a number is the one linked.
func findXrefs(t *toc, public string) (*xrefs, error) {
	x := &xrefs{sections: map[string]xrefTarget{}, figures: map[string]xrefTarget{}}
	for _, e := range t.pages {
		if m := sectionTitle.FindStringSubmatch(e.title); m != nil {
			if _, ok := x.sections[m[1]]; !ok {
				x.sections[m[1]] = xrefTarget{file: e.file, title: e.title}
			}
		}
		var err error
		walk(e.page.Mdast, func(n *node) {
			if n.Type != "output" || n.Jupyter == nil || err != nil || !hasImage(n.Jupyter) {
				return
			}
			var alt string
			if alt, err = mimeText(public, n.Jupyter.Data["text/plain"]); err != nil {
				return
			}
			number, caption := figureCaption(alt)
			if _, ok := x.figures[number]; number != "" && !ok {
				x.figures[number] = xrefTarget{file: e.file, id: figureID(number), title: "Figure " + number + ": " + caption}
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return x, nil
}

// walk calls fn on n and every node below it, in document order.
func walk(n *node, fn func(*node)) {
	fn(n)
	for _, c := range n.Children {
		walk(c, fn)
	}
}

// hasImage says whether a display output holds an image that a page shows as a figure.
func hasImage(d *jupyterData) bool {
	for _, mime := range imageTypes {
		if _, ok := d.Data[mime]; ok {
			return true
		}
	}
	return false
}

// text writes running text, with each mention of a section or figure that resolves as a link to it: a section on
// another page, a figure on any page. Inside a link or a heading (r.plain > 0) text is written as it is.
func (r *renderer) text(w *bytes.Buffer, s string) {
	if r.plain > 0 || r.xrefs == nil {
		w.WriteString(esc(s))
		return
	}
	last := 0
	for _, m := range mention.FindAllStringSubmatchIndex(s, -1) {
		target, ok := r.resolve(s, m)
		if !ok {
			continue
		}
		href := target.file
		if target.file == r.file {
			href = ""
		}
		if target.id != "" {
			href += "#" + target.id
		}
		w.WriteString(esc(s[last:m[0]]))
		fmt.Fprintf(w, `<a class="xref" href="%s" title="%s">%s</a>`, esc(href), esc(target.title), esc(s[m[0]:m[1]]))
		last = m[1]
	}
	w.WriteString(esc(s[last:]))
}

// resolve is the target of one match of mention in s, and whether it links: a section's own page does not link
// to itself.
func (r *renderer) resolve(s string, m []int) (xrefTarget, bool) {
	switch {
	case m[2] >= 0 && strings.EqualFold(s[m[2]:m[3]], "figure"):
		t, ok := r.xrefs.figures[s[m[4]:m[5]]]
		return t, ok
	case m[2] >= 0:
		t, ok := r.xrefs.sections[s[m[4]:m[5]]]
		return t, ok && t.file != r.file
	default:
		t, ok := r.xrefs.sections[s[m[6]:m[7]]]
		return t, ok && t.file != r.file
	}
}
