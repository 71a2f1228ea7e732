package site

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// mystConfig is the part of MyST's _build/site/config.json that the site uses.
type mystConfig struct {
	Myst     string `json:"myst"`
	Projects []struct {
		Title string `json:"title"`
		Index string `json:"index"` // the slug of the first page
		Pages []struct {
			Slug  string `json:"slug"` // "" for a group title of the table of contents
			Title string `json:"title"`
			Level int    `json:"level"`
		} `json:"pages"`
	} `json:"projects"`
}

// mystPage is one page's file in MyST's _build/site/content.
type mystPage struct {
	Kind        string `json:"kind"` // "Notebook" or "Article"
	Slug        string `json:"slug"`
	Location    string `json:"location"` // the source, relative to the site folder, with a leading "/"
	Frontmatter struct {
		Title string `json:"title"`
	} `json:"frontmatter"`
	Mdast *node `json:"mdast"`
}

// node is a node of MyST's AST (mdast and MyST's extensions), with the fields the renderer reads.
type node struct {
	Type       string       `json:"type"`
	Children   []*node      `json:"children"`
	Value      string       `json:"value"`
	Kind       string       `json:"kind"`    // block: "notebook-code", "notebook-content"
	Depth      int          `json:"depth"`   // heading
	HTMLID     string       `json:"html_id"` // heading, crossReference, mystTarget
	Label      string       `json:"label"`   // mystTarget
	Lang       string       `json:"lang"`    // code
	HTML       string       `json:"html"`    // math, inlineMath: KaTeX's rendering
	Ordered    bool         `json:"ordered"` // list
	Start      *int         `json:"start"`   // list
	Header     bool         `json:"header"`  // tableCell
	Align      string       `json:"align"`   // tableCell
	URL        string       `json:"url"`     // link, image, crossReference
	Title      string       `json:"title"`   // link, image
	Alt        string       `json:"alt"`     // image
	Class      string       `json:"class"`   // admonition, container, div, span
	Enumerator string       `json:"enumerator"`
	Jupyter    *jupyterData `json:"jupyter_data"` // output
}

// jupyterData is a notebook output as MyST keeps it: a MIME bundle's entries hold their content inline, or,
// for images and long outputs, the path of a file MyST wrote into _build/site/public.
type jupyterData struct {
	OutputType string                    `json:"output_type"`
	Name       string                    `json:"name"` // stream: "stdout", "stderr"
	Text       multiline                 `json:"text"`
	Data       map[string]mimeEntry      `json:"data"`
	Metadata   map[string]map[string]any `json:"metadata"`
	EName      string                    `json:"ename"`
	EValue     string                    `json:"evalue"`
	Traceback  []string                  `json:"traceback"`
}

type mimeEntry struct {
	ContentType string    `json:"content_type"`
	Content     multiline `json:"content"`
	Path        string    `json:"path"`
}

// multiline is a notebook string: a string or a list of lines.
type multiline string

func (m *multiline) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*m = multiline(s)
		return nil
	}
	var lines []string
	if err := json.Unmarshal(b, &lines); err != nil {
		return err
	}
	*m = multiline(strings.Join(lines, ""))
	return nil
}

// navItem is one line of the table of contents.
type navItem struct {
	Title   string
	Href    string // "" for a group title
	Level   int
	Current bool
}

// heading is one line of a page's "On this page" list.
type heading struct {
	ID, Text string
	Level    int
}

// pageData is what theme/page.html renders.
type pageData struct {
	Generator   string
	SiteTitle   string
	Title       string
	Nav         []navItem
	Headings    []heading
	Body        template.HTML
	Source      string // repository-relative source file
	Index       bool   // the site's first page, which names no source
	Notebook    bool
	Download    string // the notebook's copy, relative to the page
	Numerics    string // what computed the notebook's outputs (its metadata's agentrl.numerics)
	Prev, Next  *navItem
	MystVersion string
}

// render reads MyST's output in dir/_build/site and writes the HTML site into out, replacing it.
func render(dir, root, out, mystVersion string) (*Site, error) {
	build := filepath.Join(dir, "_build", "site")
	var cfg mystConfig
	if err := readJSON(filepath.Join(build, "config.json"), &cfg); err != nil {
		return nil, err
	}
	if len(cfg.Projects) != 1 {
		return nil, fmt.Errorf("site: config.json has %d projects, want 1", len(cfg.Projects))
	}
	proj := cfg.Projects[0]

	// The pages in the table of contents' order, the index first, and each slug's HTML file.
	type entry struct {
		slug, title string
		level       int
		page        *mystPage
		file        string
	}
	entries := []*entry{{slug: proj.Index, level: 1}}
	for _, p := range proj.Pages {
		entries = append(entries, &entry{slug: p.Slug, title: p.Title, level: p.Level})
	}
	files := map[string]string{} // slug → HTML file
	taken := map[string]string{} // HTML file → slug
	for i, e := range entries {
		if e.slug == "" {
			continue
		}
		e.page = new(mystPage)
		if err := readJSON(filepath.Join(build, "content", e.slug+".json"), e.page); err != nil {
			return nil, err
		}
		if e.page.Mdast == nil {
			return nil, fmt.Errorf("site: page %s has no AST", e.slug)
		}
		if e.title == "" {
			e.title = e.page.Frontmatter.Title
		}
		e.file = "index.html"
		if i > 0 {
			base := path.Base(e.page.Location)
			e.file = strings.TrimSuffix(base, path.Ext(base)) + ".html"
		}
		if other, ok := taken[e.file]; ok {
			return nil, fmt.Errorf("site: pages %s and %s would both be %s", other, e.slug, e.file)
		}
		taken[e.file], files[e.slug] = e.slug, e.file
	}

	tmpl, err := template.ParseFS(theme, "theme/page.html")
	if err != nil {
		return nil, err
	}
	css, err := theme.ReadFile("theme/style.css")
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(out, "assets"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(out, "style.css"), css, 0o644); err != nil {
		return nil, err
	}

	site := &Site{Out: out, Title: proj.Title, MystVersion: mystVersion}
	var pages []*entry
	for _, e := range entries {
		if e.page != nil {
			pages = append(pages, e)
		}
	}
	for i, e := range pages {
		src := filepath.Join(dir, filepath.FromSlash(e.page.Location))
		rel, err := filepath.Rel(root, src)
		if err != nil {
			return nil, err
		}
		r := &renderer{page: e.slug, files: files, public: filepath.Join(build, "public"), out: out}
		var body bytes.Buffer
		r.children(&body, e.page.Mdast)
		if len(r.errs) > 0 {
			return nil, fmt.Errorf("site: %s: %s", rel, strings.Join(r.errs, "; "))
		}
		if len(r.headings) < 2 {
			r.headings = nil // a list of one section is no guide
		}
		d := pageData{
			Generator:   generator + " (MyST " + mystVersion + ")",
			SiteTitle:   proj.Title,
			Title:       e.title,
			Headings:    r.headings,
			Body:        template.HTML(body.String()),
			Source:      filepath.ToSlash(rel),
			Index:       i == 0,
			MystVersion: mystVersion,
		}
		for _, n := range entries {
			item := navItem{Title: n.title, Level: n.level, Href: n.file, Current: n == e}
			if n.file == "index.html" {
				item.Title = "Introduction"
			}
			d.Nav = append(d.Nav, item)
		}
		if i > 0 {
			d.Prev = &navItem{Title: pages[i-1].title, Href: pages[i-1].file}
		}
		if i+1 < len(pages) {
			d.Next = &navItem{Title: pages[i+1].title, Href: pages[i+1].file}
		}
		if e.page.Kind == "Notebook" {
			d.Notebook = true
			if d.Numerics, err = numerics(src); err != nil {
				return nil, err
			}
			d.Download = "notebooks/" + filepath.Base(src)
			if err := copyFile(src, filepath.Join(out, "notebooks", filepath.Base(src))); err != nil {
				return nil, err
			}
		}
		var html bytes.Buffer
		if err := tmpl.Execute(&html, d); err != nil {
			return nil, fmt.Errorf("site: %s: %w", rel, err)
		}
		if err := os.WriteFile(filepath.Join(out, e.file), html.Bytes(), 0o644); err != nil {
			return nil, err
		}
		site.Pages = append(site.Pages, Page{File: e.file, Title: e.title, Source: d.Source, Figures: r.figures})
	}
	return site, nil
}

// renderer writes one page's AST as HTML. Problems (a node or output it does not know, a link to no page)
// are collected in errs.
type renderer struct {
	page     string            // the page's slug, for messages
	files    map[string]string // slug → HTML file of every page
	public   string            // MyST's folder of output files
	out      string            // the site's folder; figures go to out/assets
	headings []heading
	figures  int
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

func (r *renderer) node(w *bytes.Buffer, n *node) {
	switch n.Type {
	case "root":
		r.children(w, n)
	case "block":
		switch n.Kind {
		case "notebook-code":
			r.wrap(w, n, `<div class="cell code-cell">`, "</div>\n")
		default:
			r.wrap(w, n, `<div class="cell">`, "</div>\n")
		}
	case "paragraph":
		r.wrap(w, n, "<p>", "</p>\n")
	case "text":
		w.WriteString(esc(n.Value))
	case "emphasis":
		r.wrap(w, n, "<em>", "</em>")
	case "strong":
		r.wrap(w, n, "<strong>", "</strong>")
	case "delete":
		r.wrap(w, n, "<del>", "</del>")
	case "subscript":
		r.wrap(w, n, "<sub>", "</sub>")
	case "superscript":
		r.wrap(w, n, "<sup>", "</sup>")
	case "break":
		w.WriteString("<br>")
	case "thematicBreak":
		w.WriteString("<hr>\n")
	case "blockquote":
		r.wrap(w, n, "<blockquote>", "</blockquote>\n")
	case "inlineCode":
		fmt.Fprintf(w, "<code>%s</code>", esc(n.Value))
	case "inlineMath":
		r.math(w, n, "span")
	case "math":
		r.math(w, n, "div")
	case "heading":
		r.heading(w, n)
	case "list":
		tag := "ul"
		if n.Ordered {
			tag = "ol"
		}
		start := ""
		if n.Ordered && n.Start != nil && *n.Start != 1 {
			start = fmt.Sprintf(` start="%d"`, *n.Start)
		}
		r.wrap(w, n, "<"+tag+start+">\n", "</"+tag+">\n")
	case "listItem":
		r.wrap(w, n, "<li>", "</li>\n")
	case "table":
		r.wrap(w, n, `<div class="table-wrap"><table>`+"\n", "</table></div>\n")
	case "tableRow":
		r.wrap(w, n, "<tr>", "</tr>\n")
	case "tableCell":
		tag := "td"
		if n.Header {
			tag = "th"
		}
		align := ""
		if n.Align != "" {
			align = fmt.Sprintf(` style="text-align:%s"`, esc(n.Align))
		}
		r.wrap(w, n, "<"+tag+align+">", "</"+tag+">")
	case "link", "crossReference":
		r.link(w, n)
	case "image":
		src := r.asset(n.URL)
		r.figures++
		fmt.Fprintf(w, `<img src="%s" alt="%s">`, esc(src), esc(n.Alt))
	case "code":
		r.code(w, n)
	case "outputs":
		r.wrap(w, n, `<div class="outputs">`, "</div>\n")
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
	case "admonitionTitle":
		r.wrap(w, n, `<p class="admonition-title">`, "</p>\n")
	case "container":
		r.wrap(w, n, "<figure>", "</figure>\n")
	case "caption", "legend":
		r.wrap(w, n, "<figcaption>", "</figcaption>\n")
	case "mystTarget":
		fmt.Fprintf(w, `<span id="%s"></span>`, esc(cmpOr(n.HTMLID, n.Label)))
	case "comment":
	default:
		r.errorf("MyST node %q is not rendered by site/render.go", n.Type)
	}
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
	r.children(&text, n)
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
	r.children(w, n)
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

// output writes one notebook output: a stream, an error, or a display's richest form that a page can show
// (an image, then HTML, then plain text).
func (r *renderer) output(w *bytes.Buffer, n *node) {
	d := n.Jupyter
	if d == nil {
		r.errorf("an output without jupyter_data")
		return
	}
	switch d.OutputType {
	case "stream":
		class := "stream"
		if d.Name == "stderr" {
			class += " stderr"
		}
		fmt.Fprintf(w, `<pre class="%s">%s</pre>`+"\n", class, esc(terminalText(string(d.Text))))
	case "error":
		text := strings.Join(d.Traceback, "\n")
		if text == "" {
			text = d.EName + ": " + d.EValue
		}
		fmt.Fprintf(w, `<pre class="error">%s</pre>`+"\n", esc(terminalText(text)))
	case "display_data", "execute_result", "update_display_data":
		r.display(w, d)
	default:
		r.errorf("notebook output of type %q is not rendered", d.OutputType)
	}
}

var imageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"}

func (r *renderer) display(w *bytes.Buffer, d *jupyterData) {
	for _, mime := range imageTypes {
		e, ok := d.Data[mime]
		if !ok {
			continue
		}
		src := e.Path
		if src == "" {
			r.errorf("a %s output whose file MyST did not write", mime)
			return
		}
		src = r.asset(src)
		alt := r.content(d.Data["text/plain"])
		size := ""
		if md := d.Metadata[mime]; md != nil {
			if wd, ok := md["width"].(float64); ok && wd > 0 {
				size += fmt.Sprintf(` width="%d"`, int(wd))
			}
			if ht, ok := md["height"].(float64); ok && ht > 0 {
				size += fmt.Sprintf(` height="%d"`, int(ht))
			}
		}
		r.figures++
		fmt.Fprintf(w, `<div class="output figure"><img src="%s" alt="%s"%s></div>`+"\n", esc(src), esc(alt), size)
		return
	}
	if e, ok := d.Data["text/html"]; ok {
		// The notebooks' own HTML outputs (the grey summary of what the result store did).
		fmt.Fprintf(w, `<div class="output html">%s</div>`+"\n", r.content(e))
		return
	}
	if e, ok := d.Data["text/plain"]; ok {
		fmt.Fprintf(w, `<pre class="output">%s</pre>`+"\n", esc(terminalText(r.content(e))))
		return
	}
	mimes := make([]string, 0, len(d.Data))
	for m := range d.Data {
		mimes = append(mimes, m)
	}
	slices.Sort(mimes)
	r.errorf("a display output with only %s is not rendered", strings.Join(mimes, ", "))
}

// content is a MIME entry's text, inline or in the file MyST wrote for a long one.
func (r *renderer) content(e mimeEntry) string {
	if e.Content != "" || e.Path == "" {
		return string(e.Content)
	}
	b, err := os.ReadFile(filepath.Join(r.public, path.Base(e.Path)))
	if err != nil {
		r.errorf("%v", err)
	}
	return string(b)
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// terminalText is what a terminal would show of s: no ANSI escapes, and of a line that carriage returns
// rewrote, the last version.
func terminalText(s string) string {
	s = ansi.ReplaceAllString(s, "")
	if !strings.Contains(s, "\r") {
		return s
	}
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		if j := strings.LastIndex(strings.TrimRight(l, "\r"), "\r"); j >= 0 {
			lines[i] = l[j+1:]
		}
		lines[i] = strings.TrimRight(lines[i], "\r")
	}
	return strings.Join(lines, "\n")
}

// numerics is what a notebook's metadata says computed its outputs ("" when it says nothing).
func numerics(ipynb string) (string, error) {
	var nb struct {
		Metadata struct {
			Agentrl struct {
				Numerics string `json:"numerics"`
			} `json:"agentrl"`
		} `json:"metadata"`
	}
	if err := readJSON(ipynb, &nb); err != nil {
		return "", err
	}
	return nb.Metadata.Agentrl.Numerics, nil
}

func readJSON(file string, v any) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("site: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("site: %s: %w", file, err)
	}
	return nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("site: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
