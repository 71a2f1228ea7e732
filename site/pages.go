package site

import (
	"bytes"
	"fmt"
	"html/template"
	"os"
	"path"
	"path/filepath"
	"strings"
)

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
	SourceURL   string // the source in the repository: Repo/blob/Ref/Source
	Notebook    bool
	Download    string // the notebook's copy, relative to the page
	Numerics    string // what computed the notebook's outputs (its metadata's agentrl.numerics)
	Backend     string // the numerics' first part: "xla", "go"
	Prev, Next  *navItem
	MystVersion string
	Repo        string // the repository's address
	RunCommands string // a clone of the repository, the README's two commands, and the notebook to open
}

// setupCommand and openCommand are the README's two commands (its Setup and Open the chapter), which every page
// shows after a clone; TestRunCommandsAreTheREADMEs keeps them the README's.
const (
	setupCommand = "go run ./kernelsetup"
	openCommand  = ".venv/bin/jupyter lab notebooks/"
)

// runCommands are the commands that clone repo, set it up and open notebook (a file of notebooks/; "" opens the
// folder) in JupyterLab.
func runCommands(repo, notebook string) string {
	return "git clone " + repo + ".git && cd " + path.Base(repo) + "\n" + setupCommand + "\n" + openCommand + notebook
}

// render reads MyST's output in dir/_build/site and writes the HTML site into site.Out, replacing it; site holds
// the MyST version and the repository's address, and render adds the title and pages.
func render(dir, root string, site *Site) (*Site, error) {
	out := site.Out
	build := filepath.Join(dir, "_build", "site")
	var cfg mystConfig
	if err := readJSON(filepath.Join(build, "config.json"), &cfg); err != nil {
		return nil, err
	}
	if len(cfg.Projects) != 1 {
		return nil, fmt.Errorf("site: config.json has %d projects, want 1", len(cfg.Projects))
	}
	proj := cfg.Projects[0]
	toc, err := readTOC(build, proj)
	if err != nil {
		return nil, err
	}
	xrefs, err := findXrefs(toc, filepath.Join(build, "public"))
	if err != nil {
		return nil, err
	}
	tmpl, err := startOut(out)
	if err != nil {
		return nil, err
	}
	if err := writeSearchIndex(build, out, toc); err != nil {
		return nil, err
	}
	site.Title = proj.Title
	w := &pageWriter{site: site, toc: toc, xrefs: xrefs, dir: dir, root: root, build: build, tmpl: tmpl}
	for i := range toc.pages {
		p, err := w.write(i)
		if err != nil {
			return nil, err
		}
		site.Pages = append(site.Pages, p)
	}
	return site, nil
}

// themeFiles are the theme's files that every page loads, copied into the site's folder as they are.
var themeFiles = []string{"style.css", "site.js", "search.js"}

// startOut parses the theme's page template and replaces out with a folder holding the theme's style sheet and
// scripts and an empty assets folder.
func startOut(out string) (*template.Template, error) {
	tmpl, err := template.ParseFS(theme, "theme/page.html")
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(out, "assets"), 0o755); err != nil {
		return nil, err
	}
	for _, name := range themeFiles {
		b, err := theme.ReadFile("theme/" + name)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			return nil, err
		}
	}
	return tmpl, nil
}

// pageWriter writes the pages of one site with the theme's template.
type pageWriter struct {
	site  *Site // the site being written: its folder, title and MyST version
	toc   *toc
	xrefs *xrefs
	dir   string // the site folder, holding myst.yml
	root  string // the repository root, which pages name their sources from
	build string // MyST's output, dir/_build/site
	tmpl  *template.Template
}

// write renders toc.pages[i] into the site's folder as its HTML file, with a copy of a notebook for download, and
// returns what it wrote. It fails naming the source when its AST holds what the renderer does not know.
func (w *pageWriter) write(i int) (Page, error) {
	e := w.toc.pages[i]
	src := filepath.Join(w.dir, filepath.FromSlash(e.page.Location))
	rel, err := filepath.Rel(w.root, src)
	if err != nil {
		return Page{}, err
	}
	r := &renderer{page: e.slug, file: e.file, files: w.toc.files, xrefs: w.xrefs, public: filepath.Join(w.build, "public"), out: w.site.Out}
	var body bytes.Buffer
	r.children(&body, e.page.Mdast)
	if len(r.errs) > 0 {
		return Page{}, fmt.Errorf("site: %s: %s", rel, strings.Join(r.errs, "; "))
	}
	if len(r.headings) < 2 {
		r.headings = nil // a list of one section is no guide
	}
	d := pageData{
		Generator:   generator + " (MyST " + w.site.MystVersion + ")",
		SiteTitle:   w.site.Title,
		Title:       e.title,
		Nav:         w.toc.nav(e),
		Headings:    r.headings,
		Body:        template.HTML(body.String()),
		Source:      filepath.ToSlash(rel),
		Index:       i == 0,
		MystVersion: w.site.MystVersion,
		Repo:        w.site.Repo,
		RunCommands: runCommands(w.site.Repo, ""),
	}
	d.SourceURL = w.site.Repo + "/blob/" + w.site.Ref + "/" + d.Source
	d.Prev, d.Next = w.toc.around(i)
	if e.page.Kind == "Notebook" {
		d.Notebook = true
		if d.Numerics, err = numerics(src); err != nil {
			return Page{}, err
		}
		d.Backend, _, _ = strings.Cut(d.Numerics, "/")
		d.Download = "notebooks/" + filepath.Base(src)
		d.RunCommands = runCommands(w.site.Repo, filepath.Base(src))
		if err := copyFile(src, filepath.Join(w.site.Out, "notebooks", filepath.Base(src))); err != nil {
			return Page{}, err
		}
	}
	var html bytes.Buffer
	if err := w.tmpl.Execute(&html, d); err != nil {
		return Page{}, fmt.Errorf("site: %s: %w", rel, err)
	}
	if err := os.WriteFile(filepath.Join(w.site.Out, e.file), html.Bytes(), 0o644); err != nil {
		return Page{}, err
	}
	return Page{File: e.file, Title: e.title, Source: d.Source, Figures: r.figures}, nil
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

// copyFile copies src to dst, making dst's folder.
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
