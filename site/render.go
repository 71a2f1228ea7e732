package site

import (
	"bytes"
	"fmt"
	"html"
	"path"
	"path/filepath"
	"strings"
)

// heading is one line of a page's "On this page" list.
type heading struct {
	ID, Text string
	Level    int
}

// renderer writes one page's AST as HTML. Problems (a node or output it does not know, a link to no page)
// are collected in errs.
type renderer struct {
	page     string            // the page's slug, for messages
	file     string            // the page's HTML file
	files    map[string]string // slug → HTML file of every page
	xrefs    *xrefs            // the sections and figures that text may link; nil links none
	public   string            // MyST's folder of output files
	out      string            // the site's folder; figures go to out/assets
	headings []heading
	figures  int
	cells    int             // the code cells written so far
	plain    int             // > 0 inside a link or heading, whose text links nothing
	ids      map[string]bool // the ids given to figures
	errs     []string
}

func (r *renderer) errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *renderer) children(w *bytes.Buffer, n *node) {
	for _, c := range n.Children {
		r.node(w, c)
	}
}

// wrap writes the children of n between an opening and a closing tag.
func (r *renderer) wrap(w *bytes.Buffer, n *node, open, close string) {
	w.WriteString(open)
	r.children(w, n)
	w.WriteString(close)
}

var esc = html.EscapeString

// wrapTags holds the nodes written as their children between an opening and a closing tag.
var wrapTags = map[string]struct{ open, close string }{
	"paragraph":       {"<p>", "</p>\n"},
	"emphasis":        {"<em>", "</em>"},
	"strong":          {"<strong>", "</strong>"},
	"delete":          {"<del>", "</del>"},
	"subscript":       {"<sub>", "</sub>"},
	"superscript":     {"<sup>", "</sup>"},
	"blockquote":      {"<blockquote>", "</blockquote>\n"},
	"listItem":        {"<li>", "</li>\n"},
	"table":           {`<div class="table-wrap"><table>` + "\n", "</table></div>\n"},
	"tableRow":        {"<tr>", "</tr>\n"},
	"outputs":         {`<div class="outputs">`, "</div>\n"},
	"admonitionTitle": {`<p class="admonition-title">`, "</p>\n"},
	"container":       {"<figure>", "</figure>\n"},
	"caption":         {"<figcaption>", "</figcaption>\n"},
	"legend":          {"<figcaption>", "</figcaption>\n"},
}

// node writes n and its subtree as HTML; a node type it does not know is an error.
func (r *renderer) node(w *bytes.Buffer, n *node) {
	if t, ok := wrapTags[n.Type]; ok {
		r.wrap(w, n, t.open, t.close)
		return
	}
	switch n.Type {
	case "root":
		r.children(w, n)
	case "block":
		r.block(w, n)
	case "text":
		r.text(w, n.Value)
	case "break":
		w.WriteString("<br>")
	case "thematicBreak":
		w.WriteString("<hr>\n")
	case "inlineCode":
		fmt.Fprintf(w, "<code>%s</code>", esc(n.Value))
	case "inlineMath":
		r.math(w, n, "span")
	case "math":
		r.math(w, n, "div")
	case "heading":
		r.heading(w, n)
	case "list":
		r.list(w, n)
	case "tableCell":
		r.tableCell(w, n)
	case "link", "crossReference":
		r.link(w, n)
	case "image":
		src := r.asset(n.URL)
		r.figures++
		fmt.Fprintf(w, `<img src="%s" alt="%s">`, esc(src), esc(n.Alt))
	case "code":
		r.code(w, n)
	case "output":
		r.output(w, n)
	case "html":
		w.WriteString(n.Value) // raw HTML that the page's author wrote
	case "admonition":
		class := "admonition"
		if n.Kind != "" {
			class += " " + n.Kind
		}
		r.wrap(w, n, `<aside class="`+esc(class)+`">`, "</aside>\n")
	case "mystTarget":
		fmt.Fprintf(w, `<span id="%s"></span>`, esc(cmpOr(n.HTMLID, n.Label)))
	case "comment":
	default:
		r.errorf("MyST node %q is not rendered by site/render.go", n.Type)
	}
}

// plumbingSummary is what a notebook's folded link cell says it is.
const plumbingSummary = "The link cell: GoNB plumbing that links this notebook to the repository's Go module"

// block writes a notebook cell. A notebook's first code cell, when it holds GoNB's special lines (`%goflags`,
// `!*… go work …`: the cell that links the notebook to the module), is folded into a details element.
func (r *renderer) block(w *bytes.Buffer, n *node) {
	if n.Kind != "notebook-code" {
		r.wrap(w, n, `<div class="cell">`, "</div>\n")
		return
	}
	r.cells++
	if r.cells == 1 && isPlumbing(n) {
		r.wrap(w, n, `<details class="cell code-cell plumbing"><summary>`+esc(plumbingSummary)+"</summary>\n", "</details>\n")
		return
	}
	r.wrap(w, n, `<div class="cell code-cell">`, "</div>\n")
}

// isPlumbing says whether a code cell's code has a line of GoNB's own (`%…` or `!…`), which is not Go.
func isPlumbing(n *node) bool {
	for _, c := range n.Children {
		if c.Type != "code" {
			continue
		}
		for _, line := range strings.Split(c.Value, "\n") {
			if l := strings.TrimLeft(line, " \t"); strings.HasPrefix(l, "%") || strings.HasPrefix(l, "!") {
				return true
			}
		}
	}
	return false
}

// list writes a bulleted list, or a numbered one with its first number where that is not 1.
func (r *renderer) list(w *bytes.Buffer, n *node) {
	tag := "ul"
	if n.Ordered {
		tag = "ol"
	}
	start := ""
	if n.Ordered && n.Start != nil && *n.Start != 1 {
		start = fmt.Sprintf(` start="%d"`, *n.Start)
	}
	r.wrap(w, n, "<"+tag+start+">\n", "</"+tag+">\n")
}

// tableCell writes a table's header or data cell, with its alignment.
func (r *renderer) tableCell(w *bytes.Buffer, n *node) {
	tag := "td"
	if n.Header {
		tag = "th"
	}
	align := ""
	if n.Align != "" {
		align = fmt.Sprintf(` style="text-align:%s"`, esc(n.Align))
	}
	r.wrap(w, n, "<"+tag+align+">", "</"+tag+">")
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// math writes KaTeX's rendering, which MyST made, or the TeX source where there is none.
func (r *renderer) math(w *bytes.Buffer, n *node, tag string) {
	fmt.Fprintf(w, `<%s class="math">`, tag)
	if tag == "div" {
		w.WriteString(`<div class="formula">`)
	}
	if n.HTML != "" {
		w.WriteString(n.HTML)
	} else {
		w.WriteString(esc(n.Value))
	}
	if tag == "div" {
		w.WriteString("</div>")
	}
	if n.Enumerator != "" {
		fmt.Fprintf(w, `<span class="eqno">(%s)</span>`, esc(n.Enumerator))
	}
	fmt.Fprintf(w, "</%s>", tag)
	if tag == "div" {
		w.WriteString("\n")
	}
}

func (r *renderer) heading(w *bytes.Buffer, n *node) {
	// The page's title is its h1; headings in the content start at h2.
	level := min(max(n.Depth, 2), 6)
	var text bytes.Buffer
	r.plain++
	r.children(&text, n)
	r.plain--
	if n.HTMLID == "" {
		fmt.Fprintf(w, "<h%d>%s</h%d>\n", level, text.String(), level)
		return
	}
	fmt.Fprintf(w, `<h%d id="%s">%s <a class="anchor" href="#%s" aria-label="link to this section">#</a></h%d>`+"\n",
		level, esc(n.HTMLID), text.String(), esc(n.HTMLID), level)
	if level <= 3 {
		r.headings = append(r.headings, heading{ID: n.HTMLID, Text: plainText(n), Level: level})
	}
}

// plainText is the text of n's subtree.
func plainText(n *node) string {
	var b strings.Builder
	var walk func(*node)
	walk = func(n *node) {
		switch n.Type {
		case "text", "inlineCode", "inlineMath":
			b.WriteString(n.Value)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// link writes a link; MyST has resolved a link to another page of the project to "/slug" (or "/slug#id").
func (r *renderer) link(w *bytes.Buffer, n *node) {
	href := n.URL
	if strings.HasPrefix(href, "/") && !strings.HasPrefix(href, "//") {
		slug, frag, _ := strings.Cut(strings.TrimPrefix(href, "/"), "#")
		file, ok := r.files[slug]
		if !ok {
			r.errorf("link to %q: no such page in the site", href)
		}
		href = file
		if frag != "" {
			href += "#" + frag
		}
	}
	title := ""
	if n.Title != "" {
		title = fmt.Sprintf(` title="%s"`, esc(n.Title))
	}
	fmt.Fprintf(w, `<a href="%s"%s>`, esc(href), title)
	if len(n.Children) == 0 {
		w.WriteString(esc(n.URL))
	}
	r.plain++
	r.children(w, n)
	r.plain--
	w.WriteString("</a>")
}

// asset copies a file that MyST wrote (a path such as "/1eed….png") into out/assets and returns its URL
// relative to a page.
func (r *renderer) asset(p string) string {
	name := path.Base(p)
	if p == "" || name == "." || name == "/" {
		r.errorf("an image or output file with no path")
		return ""
	}
	if err := copyFile(filepath.Join(r.public, name), filepath.Join(r.out, "assets", name)); err != nil {
		r.errorf("%v", err)
	}
	return "assets/" + name
}

func (r *renderer) code(w *bytes.Buffer, n *node) {
	lang := n.Lang
	var body string
	if lang == "go" {
		body = highlightGo(n.Value)
	} else {
		body = esc(n.Value)
	}
	class := ""
	if lang != "" {
		class = fmt.Sprintf(` class="language-%s"`, esc(lang))
	}
	pre := `<pre class="code">`
	if n.Value == "" {
		pre = `<pre class="code empty">`
	}
	fmt.Fprintf(w, "%s<code%s>%s</code></pre>\n", pre, class, body)
}
