package site

import (
	"bytes"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var tags = regexp.MustCompile(`</?span[^>]*>`)

func TestHighlightGoKeepsSource(t *testing.T) {
	for _, src := range []string{
		"%noautoget\n%goflags -ldflags=-w\n!*rm -f go.work && go work init\n",
		"import \"fmt\"\n\n// a comment with <html> & co\nfunc f() int { return len(\"a\\\"b\") + 0x1F }\n\n%%\nfmt.Println(`raw\nstring`, 'x', 1.5e3, nil)\n",
		"var s = \"unterminated\nfunc g() {}\n",
		"x := `raw with \r carriage return`\n/* block\ncomment */ y := 2i",
		"",
	} {
		got := highlightGo(src)
		if back := html.UnescapeString(tags.ReplaceAllString(got, "")); back != src {
			t.Errorf("highlightGo(%q) gives back %q:\n%s", src, back, got)
		}
	}
	got := highlightGo("%goflags -w\n// note\nfunc f() error { return nil }\n")
	for _, want := range []string{`<span class="m">%goflags -w</span>`, `<span class="c">// note</span>`,
		`<span class="k">func</span>`, `<span class="b">error</span>`, `<span class="b">nil</span>`} {
		if !strings.Contains(got, want) {
			t.Errorf("highlightGo: no %s in\n%s", want, got)
		}
	}
	if got := highlightGo("!*go run x\n"); strings.Contains(got, `class="k"`) {
		t.Errorf("a GoNB shell line is highlighted as Go: %s", got)
	}
}

func TestRenderNodes(t *testing.T) {
	dir := t.TempDir()
	public, out := filepath.Join(dir, "public"), filepath.Join(dir, "out")
	if err := os.MkdirAll(public, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(public, "abc.png"), []byte("png"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &renderer{page: "p", files: map[string]string{"report": "REPORT.html"}, public: public, out: out}
	root := &node{Type: "root", Children: []*node{
		{Type: "heading", Depth: 2, HTMLID: "sec", Children: []*node{{Type: "text", Value: "A <b> & c"}}},
		{Type: "paragraph", Children: []*node{
			{Type: "link", URL: "/report#c1", Children: []*node{{Type: "text", Value: "the report"}}},
			{Type: "inlineMath", Value: "x", HTML: `<span class="katex">x</span>`},
		}},
		{Type: "block", Kind: "notebook-code", Children: []*node{
			{Type: "code", Lang: "go", Value: "x := 1"},
			{Type: "outputs", Children: []*node{
				{Type: "output", Jupyter: &jupyterData{OutputType: "stream", Name: "stdout", Text: "\x1b[1mbold\x1b[0m\nstep 1\rstep 2\n"}},
				{Type: "output", Jupyter: &jupyterData{OutputType: "display_data",
					Data: map[string]mimeEntry{
						"image/png":  {ContentType: "image/png", Path: "/abc.png"},
						"text/plain": {Content: "Bar chart \"Figure\""},
					},
					Metadata: map[string]map[string]any{"image/png": {"width": 800.0, "height": 300.0}}}},
				{Type: "output", Jupyter: &jupyterData{OutputType: "display_data",
					Data: map[string]mimeEntry{"text/html": {Content: `<pre style="color:#777">cache: loaded</pre>`}}}},
			}},
		}},
	}}
	var b bytes.Buffer
	r.node(&b, root)
	if len(r.errs) > 0 {
		t.Fatal(r.errs)
	}
	got := b.String()
	for _, want := range []string{
		`<h2 id="sec">A &lt;b&gt; &amp; c <a class="anchor" href="#sec"`,
		`<a href="REPORT.html#c1">the report</a>`,
		`<span class="math"><span class="katex">x</span></span>`,
		`<pre class="stream">bold` + "\nstep 2\n</pre>",
		`<img src="assets/abc.png" alt="Bar chart &#34;Figure&#34;" width="800" height="300">`,
		`<div class="output html"><pre style="color:#777">cache: loaded</pre></div>`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered HTML lacks %s:\n%s", want, got)
		}
	}
	if r.figures != 1 || len(r.headings) != 1 || r.headings[0] != (heading{ID: "sec", Text: "A <b> & c", Level: 2}) {
		t.Errorf("figures %d, headings %+v", r.figures, r.headings)
	}
	if _, err := os.Stat(filepath.Join(out, "assets", "abc.png")); err != nil {
		t.Errorf("the figure was not copied: %v", err)
	}
}

func TestRenderRejects(t *testing.T) {
	for name, n := range map[string]*node{
		"an unknown node":            {Type: "footnoteReference"},
		"a link to no page":          {Type: "link", URL: "/nowhere"},
		"an output of no type":       {Type: "output", Jupyter: &jupyterData{OutputType: "weird"}},
		"a display of no known mime": {Type: "output", Jupyter: &jupyterData{OutputType: "display_data", Data: map[string]mimeEntry{"application/x-thing": {}}}},
		"an image file not written":  {Type: "output", Jupyter: &jupyterData{OutputType: "display_data", Data: map[string]mimeEntry{"image/png": {}}}},
	} {
		r := &renderer{files: map[string]string{}, public: t.TempDir(), out: t.TempDir()}
		var b bytes.Buffer
		r.node(&b, n)
		if len(r.errs) == 0 {
			t.Errorf("%s renders without an error: %q", name, b.String())
		}
	}
}

func TestCheckOut(t *testing.T) {
	dir := t.TempDir()
	if err := checkOut(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("a missing folder: %v", err)
	}
	if err := checkOut(dir); err != nil {
		t.Errorf("an empty folder: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkOut(dir); err == nil {
		t.Error("a folder of other files would be replaced")
	}
	page := `<html><head><meta name="generator" content="` + generator + ` (MyST 1.8.3)"></head></html>`
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkOut(dir); err != nil {
		t.Errorf("an earlier build: %v", err)
	}
}

func TestTerminalText(t *testing.T) {
	for in, want := range map[string]string{
		"plain\n":             "plain\n",
		"\x1b[31mred\x1b[0m":  "red",
		"a 1\ra 2\ra 3\nb\n":  "a 3\nb\n",
		"windows\r\nline\r\n": "windows\nline\n",
	} {
		if got := terminalText(in); got != want {
			t.Errorf("terminalText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRunCommandsAreTheREADMEs keeps the commands every page shows the README's two commands.
func TestRunCommandsAreTheREADMEs(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{setupCommand, openCommand} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(cmd) + `(\s|$)`).Match(b) {
			t.Errorf("README.md has no line that begins with %q, which every page of the site shows (site/pages.go)", cmd)
		}
	}
}

func TestFigureCaption(t *testing.T) {
	for alt, want := range map[string][2]string{
		`Bar chart "Figure 12.1: turn-level credit (turn-GAE policy)": reward r_k, value V(s_k)`: {"12.1", "turn-level credit (turn-GAE policy)"},
		`Line charts "Figure 12.2: behavior over training" over step: pass rate`:                 {"12.2", "behavior over training"},
		`Line charts "The default arm from each base agent" over step: reads`:                    {"", "The default arm from each base agent"},
		`Heatmaps "Figure 12.3: by context"`:                                                     {"12.3", "by context"},
		`a figure with no quoted title`:                                                          {"", ""},
	} {
		if n, c := figureCaption(alt); n != want[0] || c != want[1] {
			t.Errorf("figureCaption(%q) = %q, %q; want %q, %q", alt, n, c, want[0], want[1])
		}
	}
}

func TestRenderXrefs(t *testing.T) {
	x := &xrefs{
		sections: map[string]xrefTarget{
			"12.2": {file: "12.2-credit.html", title: "12.2 Credit"},
			"12.3": {file: "12.3-budgets.html", title: "12.3 Budgets"},
		},
		figures: map[string]xrefTarget{"12.1": {file: "12.2-credit.html", id: "figure-12-1", title: "Figure 12.1: credit"}},
	}
	r := &renderer{page: "budgets", file: "12.3-budgets.html", files: map[string]string{"credit": "12.2-credit.html"}, xrefs: x}
	root := &node{Type: "root", Children: []*node{
		{Type: "paragraph", Children: []*node{{Type: "text", Value: "As Section 12.2 & §12.3 show (figure 12.1; Section 12.9, §\u00a012.2)"}}},
		{Type: "heading", Depth: 2, HTMLID: "f", Children: []*node{{Type: "text", Value: "Figure 12.1: credit"}}},
		{Type: "paragraph", Children: []*node{{Type: "link", URL: "/credit", Children: []*node{{Type: "text", Value: "Section 12.2"}}}}},
	}}
	var b bytes.Buffer
	r.node(&b, root)
	if len(r.errs) > 0 {
		t.Fatal(r.errs)
	}
	got := b.String()
	want := `<p>As <a class="xref" href="12.2-credit.html" title="12.2 Credit">Section 12.2</a> &amp; §12.3 show ` +
		`(<a class="xref" href="12.2-credit.html#figure-12-1" title="Figure 12.1: credit">figure 12.1</a>; Section 12.9, ` +
		`<a class="xref" href="12.2-credit.html" title="12.2 Credit">§` + "\u00a0" + `12.2</a>)</p>` + "\n" +
		`<h2 id="f">Figure 12.1: credit <a class="anchor" href="#f" aria-label="link to this section">#</a></h2>` + "\n" +
		`<p><a href="12.2-credit.html">Section 12.2</a></p>` + "\n"
	if got != want {
		t.Errorf("rendered\n%s\nwant\n%s", got, want)
	}
	// A figure on its own page links to itself.
	r = &renderer{file: "12.2-credit.html", xrefs: x}
	b.Reset()
	r.text(&b, "Figure 12.1")
	if want := `<a class="xref" href="#figure-12-1" title="Figure 12.1: credit">Figure 12.1</a>`; b.String() != want {
		t.Errorf("a figure on its own page: %s, want %s", b.String(), want)
	}
}

func TestRenderFigureAndPlumbing(t *testing.T) {
	dir := t.TempDir()
	public, out := filepath.Join(dir, "public"), filepath.Join(dir, "out")
	if err := os.MkdirAll(public, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(public, "f.png"), []byte("png"), 0o644); err != nil {
		t.Fatal(err)
	}
	cell := func(code string, outputs ...*node) *node {
		return &node{Type: "block", Kind: "notebook-code", Children: []*node{
			{Type: "code", Lang: "go", Value: code}, {Type: "outputs", Children: outputs}}}
	}
	figure := func(title string) *node {
		return &node{Type: "output", Jupyter: &jupyterData{OutputType: "display_data", Data: map[string]mimeEntry{
			"image/png": {Path: "/f.png"}, "text/plain": {Content: multiline(`Bar chart "` + title + `": a, b`)}}}}
	}
	r := &renderer{files: map[string]string{}, public: public, out: out}
	var b bytes.Buffer
	r.node(&b, &node{Type: "root", Children: []*node{
		cell("// link\n%goflags -ldflags=-w\n!*rm -f go.work"),
		cell("%goflags -w\nx := 1", figure("Figure 12.1: credit"), figure("Figure 12.1: again"), figure("Beyond the book")),
	}})
	if len(r.errs) > 0 {
		t.Fatal(r.errs)
	}
	got := b.String()
	for _, want := range []string{
		`<details class="cell code-cell plumbing"><summary>` + esc(plumbingSummary) + "</summary>\n" + `<pre class="code">`,
		`<figure class="output figure" id="figure-12-1"><img src="assets/f.png"`,
		`<figcaption><a class="fignum" href="#figure-12-1">Figure 12.1</a>: credit</figcaption></figure>`,
		`<figure class="output figure"><img src="assets/f.png" alt="Bar chart &#34;Figure 12.1: again&#34;: a, b"><figcaption>Figure 12.1: again</figcaption>`,
		`<figcaption>Beyond the book</figcaption>`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered HTML lacks %s:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "<details"); n != 1 {
		t.Errorf("%d cells folded, want the first only:\n%s", n, got)
	}
}

func TestSearchIndex(t *testing.T) {
	build, out := t.TempDir(), t.TempDir()
	records := `{"version":"1","records":[
		{"type":"lvl1","url":"/b","position":0,"hierarchy":{"lvl1":"12.2 B"}},
		{"type":"content","url":"/b","position":1,"hierarchy":{"lvl1":"12.2 B"},"content":"masking text"},
		{"type":"lvl2","url":"/b#s","position":2,"hierarchy":{"lvl1":"12.2 B","lvl2":"S"}},
		{"type":"lvl3","url":"/b#t","position":3,"hierarchy":{"lvl1":"12.2 B","lvl2":"S","lvl3":"T"}},
		{"type":"content","url":"/b#t","position":4,"hierarchy":{"lvl1":"12.2 B","lvl2":"S","lvl3":"T"},"content":"deep"},
		{"type":"content","url":"/","position":1,"hierarchy":{"lvl1":"Intro"},"content":"first"}]}`
	if err := os.WriteFile(filepath.Join(build, "myst.search.json"), []byte(records), 0o644); err != nil {
		t.Fatal(err)
	}
	tc := &toc{files: map[string]string{"index": "index.html", "b": "12.2-b.html"}}
	tc.pages = []*tocEntry{{slug: "index", file: "index.html"}, {slug: "b", file: "12.2-b.html"}}
	if err := writeSearchIndex(build, out, tc); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, searchIndexFile))
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	want := `window.siteSearchIndex = [{"page":"Intro","section":"","url":"index.html","text":"first"},` +
		`{"page":"12.2 B","section":"","url":"12.2-b.html","text":"masking text"},` +
		`{"page":"12.2 B","section":"S","url":"12.2-b.html#s","text":""},` +
		`{"page":"12.2 B","section":"S › T","url":"12.2-b.html#t","text":"deep"}];`
	if !strings.Contains(js, want) {
		t.Errorf("search-index.js:\n%s\nwant\n%s", js, want)
	}
	bad := `{"records":[{"type":"lvl1","url":"/nowhere","hierarchy":{"lvl1":"X"}}]}`
	if err := os.WriteFile(filepath.Join(build, "myst.search.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeSearchIndex(build, out, tc); err == nil {
		t.Error("a record of no page of the site is indexed without an error")
	}
}

func TestRunCommands(t *testing.T) {
	got := runCommands("https://github.com/agentrl-go/agentrl", "12.1-x.ipynb")
	want := "git clone https://github.com/agentrl-go/agentrl.git && cd agentrl\ngo run ./kernelsetup\n.venv/bin/jupyter lab notebooks/12.1-x.ipynb"
	if got != want {
		t.Errorf("runCommands = %q, want %q", got, want)
	}
}
