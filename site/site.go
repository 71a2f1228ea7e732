// Package site builds the static edition of chapter 12: a website of the seven executed notebooks, the
// book-vs-run report (notebooks/REPORT.md), an introduction and a page on running the chapter, made from the
// committed files without executing anything.
//
// MyST (the mystmd npm package, pinned in package.json and package-lock.json) reads the pages that myst.yml
// lists, in place, and writes its AST of each (`myst build --site`: text, math rendered by KaTeX, code cells and
// their outputs, figures written out as files). MyST's own HTML themes are not published to any package
// registry (`myst build --html` fetches them from GitHub), so this package renders that AST itself, with the
// page template, style sheet and scripts in theme/. [Build] does both; `go run ./site/cmd/build` is the command.
//
// What a page offers beyond the AST: search over every page from MyST's own index (search.go writes it for
// theme/search.js); a copy button on each block of code, light and dark colours as the system prefers with a
// remembered toggle, and a menu for the contents on a phone (theme/site.js); "Section 12.2", "§12.2" and
// "Figure 12.1" in the text as links to the section's page or the figure, and the chapter's figures with
// numbered captions (xref.go); links to the page's source in the repository, its .ipynb and the commands that
// clone and run it; and a notebook's link cell and numerics key folded away.
package site

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentrl-go/agentrl/internal/tail"
)

//go:embed theme/page.html theme/style.css theme/site.js theme/search.js
var theme embed.FS

// generator is the content of every page's generator meta tag; Build replaces an existing output folder only
// when its index.html carries it.
const generator = "agentrl static edition"

// Options says where [Build] reads and writes.
type Options struct {
	// Dir is the site folder: myst.yml, package.json, package-lock.json and theme/template.yml. MyST writes
	// its AST into Dir/_build/site.
	Dir string
	// Out is the folder the HTML is written to; "" means Dir/_build/html. Build replaces it whole, and refuses
	// to when it exists, is not empty and is not an earlier build's output.
	Out string
	// Log receives MyST's and npm's output and Build's progress; nil discards it.
	Log io.Writer
	// Repo is the repository's web address, which every page links its source into (as Repo/blob/Ref/path,
	// GitHub's layout) and clones in its commands; "" means the module path's (https://github.com/agentrl-go/agentrl).
	Repo string
	// Ref is the branch or commit the source links name; "" means main.
	Ref string
}

// Page is one page of a built site.
type Page struct {
	File   string // the HTML file, relative to the output folder ("index.html", "REPORT.html", …)
	Title  string // the page's title: its first heading or front matter title
	Source string // the file it was made from, relative to the repository root ("notebooks/REPORT.md")
	// Figures is the number of figures (image outputs and images) on the page.
	Figures int
}

// Site is what [Build] wrote.
type Site struct {
	Out         string // the output folder (absolute)
	Title       string // the site's title (myst.yml's project title)
	MystVersion string // the mystmd version that read the pages
	Repo, Ref   string // the repository and branch or commit that pages link their sources into
	Pages       []Page // in the table of contents' order; the first is index.html
}

// Build makes the site: it installs the pinned mystmd with `npm ci` when Dir/node_modules does not hold the
// locked version, runs `myst build --site` in Dir (which executes nothing: notebooks keep their committed
// outputs), and renders every page of myst.yml's table of contents into Out, with the figures, a copy of each
// notebook for download, the theme's style sheet and scripts, and the search index. It needs Node.js and npm on
// PATH. It fails when MyST fails, when a page holds a kind of
// MyST node or output that the renderer does not know (rather than leave it out), and when an internal link
// points at no page of the site. Two builds of one site folder must not run at once: MyST writes its AST into
// Dir/_build/site, which each build clears first.
func Build(ctx context.Context, o Options) (*Site, error) {
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "myst.yml")); err != nil {
		return nil, fmt.Errorf("site: %s is not the site folder (no myst.yml): %w", dir, err)
	}
	out := o.Out
	if out == "" {
		out = filepath.Join(dir, "_build", "html")
	}
	if out, err = filepath.Abs(out); err != nil {
		return nil, err
	}
	if err := checkOut(out); err != nil {
		return nil, err
	}
	root, err := repoRoot(dir)
	if err != nil {
		return nil, err
	}
	site := &Site{Out: out, Repo: strings.TrimSuffix(o.Repo, "/"), Ref: cmp.Or(o.Ref, "main")}
	if site.Repo == "" {
		if site.Repo, err = moduleRepo(root); err != nil {
			return nil, err
		}
	}

	start := time.Now()
	myst, version, err := ensureMyst(ctx, dir, logw)
	if err != nil {
		return nil, err
	}
	// A stale AST (a page renamed or removed since) must not survive into this build.
	if err := os.RemoveAll(filepath.Join(dir, "_build", "site")); err != nil {
		return nil, err
	}
	fmt.Fprintf(logw, "site: myst %s build --site\n", version)
	if err := run(ctx, dir, logw, "node", myst, "build", "--site"); err != nil {
		return nil, fmt.Errorf("site: myst build --site: %w", err)
	}
	fmt.Fprintf(logw, "site: MyST read the pages in %.1fs\n", time.Since(start).Seconds())

	site.MystVersion = version
	s, err := render(dir, root, site)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logw, "site: wrote %d pages to %s (%.1fs in all)\n", len(s.Pages), out, time.Since(start).Seconds())
	return s, nil
}

// checkOut refuses an output folder that holds something other than an earlier build.
func checkOut(out string) error {
	entries, err := os.ReadDir(out)
	if errors.Is(err, os.ErrNotExist) || err == nil && len(entries) == 0 {
		return nil
	}
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil || !bytes.Contains(b, []byte(`<meta name="generator" content="`+generator)) {
		return fmt.Errorf("site: %s is not empty and holds no earlier build (index.html made by this program); not replacing it", out)
	}
	return nil
}

// repoRoot is the first folder at or above dir that holds a go.mod.
func repoRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("site: no go.mod at or above %s", dir)
		}
	}
}

// moduleRepo is the web address of the repository that root's go.mod names as its module path
// ("github.com/agentrl-go/agentrl" → "https://github.com/agentrl-go/agentrl").
func moduleRepo(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("site: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if mod, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return "https://" + strings.Trim(strings.TrimSpace(mod), `"`), nil
		}
	}
	return "", fmt.Errorf("site: %s/go.mod names no module", root)
}

// ensureMyst makes sure dir/node_modules holds the mystmd version that package-lock.json pins, running
// `npm ci` when it does not, and returns the path of MyST's command-line script and its version.
func ensureMyst(ctx context.Context, dir string, logw io.Writer) (script, version string, err error) {
	p, err := ensureNodePackage(ctx, dir, "mystmd", logw)
	if err != nil {
		return "", "", err
	}
	if p.Bin["myst"] == "" {
		return "", "", errors.New("site: mystmd's package.json names no myst command")
	}
	return filepath.Join(dir, "node_modules", "mystmd", filepath.FromSlash(p.Bin["myst"])), p.Version, nil
}

// nodePackage is the part of an installed npm package's package.json that the site reads.
type nodePackage struct {
	Version string            `json:"version"`
	Bin     map[string]string `json:"bin"`
}

// ensureNodePackage makes sure dir/node_modules holds the version of the npm package name that
// dir/package-lock.json pins, running `npm ci` in dir when it does not (with PUPPETEER_SKIP_DOWNLOAD=1: no
// package may download a browser), and returns its package.json. It needs Node.js and npm on PATH.
func ensureNodePackage(ctx context.Context, dir, name string, logw io.Writer) (nodePackage, error) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nodePackage{}, fmt.Errorf("site: %s not found: the site needs Node.js and npm (Debian: apt-get install nodejs npm)", tool)
		}
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	if err := readJSON(filepath.Join(dir, "package-lock.json"), &lock); err != nil {
		return nodePackage{}, err
	}
	want := lock.Packages["node_modules/"+name].Version
	if want == "" {
		return nodePackage{}, fmt.Errorf("site: %s/package-lock.json pins no %s", dir, name)
	}
	read := func() (nodePackage, error) {
		var p nodePackage
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", name, "package.json"))
		if err == nil {
			err = json.Unmarshal(b, &p)
		}
		return p, err
	}
	p, err := read()
	if err == nil && p.Version == want {
		return p, nil
	}
	fmt.Fprintf(logw, "site: npm ci in %s (%s %s)\n", filepath.Base(dir), name, want)
	if err := run(ctx, dir, logw, "npm", "ci", "--no-audit", "--no-fund"); err != nil {
		return nodePackage{}, fmt.Errorf("site: npm ci in %s: %w", dir, err)
	}
	if p, err = read(); err != nil {
		return nodePackage{}, fmt.Errorf("site: after npm ci: %w", err)
	}
	if p.Version != want {
		return nodePackage{}, fmt.Errorf("site: after npm ci %s/node_modules holds %s %s, package-lock.json pins %s", dir, name, p.Version, want)
	}
	return p, nil
}

// run runs a command in dir with its output going to logw; on failure the error carries the output's last
// lines.
func run(ctx context.Context, dir string, logw io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PUPPETEER_SKIP_DOWNLOAD=1")
	var tail tail.Buffer
	cmd.Stdout = io.MultiWriter(logw, &tail)
	cmd.Stderr = cmd.Stdout
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v\n%s", err, tail.String())
	}
	return nil
}
