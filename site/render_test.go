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
