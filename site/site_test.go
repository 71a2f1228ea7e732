//go:build unix

package site

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestSiteInBrowser builds the static edition into a temporary folder, serves it on 127.0.0.1 and opens every
// page in headless Chromium (Debian's chromium, run as notebooks/harness/browser_test.go runs it: --headless
// --dump-dom). It fails when
//
//   - the build fails or takes more than two minutes;
//   - the site lacks a page for one of notebooks/12.*.ipynb, notebooks/REPORT.md, site/index.md or site/run.md,
//     or has a page of something else;
//   - a page does not answer 200, does not load in the browser as a page of the site (its article, its style
//     sheet), or its title or h1 is not its source's title;
//   - a page shows another number of figures than its source holds, or a figure (any <img>) does not load
//     (naturalWidth 0) or has no alt text;
//   - an internal link (one to the server's own origin) does not answer 200 (redirects are not followed), or
//     its #fragment names no element of the page it points at.
//
// A page that fails is screenshotted into $AGENTRL_SITE_ARTIFACTS, or else a new folder under the system's
// temporary folder; the log names it. Where chromium, node or npm is missing the test skips, unless CI=true
// or AGENTRL_SITE_TEST=1, which make it fail instead.
func TestSiteInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the site build and its browser test")
	}
	chromium := need(t, "/usr/bin/chromium", "chromium", "apt-get install chromium")
	need(t, "", "node", "apt-get install nodejs npm")
	need(t, "", "npm", "apt-get install npm")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s, took := builtSite(t)
	t.Logf("built %d pages in %.1fs (MyST %s)", len(s.Pages), took.Seconds(), s.MystVersion)
	if took > 2*time.Minute {
		t.Errorf("the build took %v, more than 2 minutes", took.Round(time.Second))
	}

	// What the site must hold: every page's title and number of figures, from its source.
	want, err := expectedPages()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Pages {
		w, ok := want[p.Source]
		if !ok {
			t.Errorf("%s: a page of %s, which is not one of the chapter's notebooks, its report or the site's pages", p.File, p.Source)
			continue
		}
		if p.Figures != w.figures {
			t.Errorf("%s: the build rendered %d figures, %s holds %d", p.File, p.Figures, p.Source, w.figures)
		}
	}
	for src := range want {
		if !slices.ContainsFunc(s.Pages, func(p Page) bool { return p.Source == src }) {
			t.Errorf("no page of %s", src)
		}
	}
	if s.Pages[0].File != "index.html" || s.Pages[0].Source != "site/index.md" {
		t.Errorf("the first page is %s from %s, want index.html from site/index.md", s.Pages[0].File, s.Pages[0].Source)
	}

	base := serve(t, s.Out)
	tmp := t.TempDir()
	artifacts := ""
	screenshot := func(file string) {
		if artifacts == "" {
			if artifacts = artifactsDir(t); artifacts == "" {
				return
			}
		}
		png := filepath.Join(artifacts, strings.TrimSuffix(file, ".html")+".png")
		sctx, scancel := context.WithTimeout(ctx, browserWait)
		defer scancel()
		out, err := chromiumCmd(sctx, chromium, tmp, "--window-size=1400,2400", "--screenshot="+png, base+file).CombinedOutput()
		if err != nil {
			t.Logf("%s: no screenshot: %v (%s)", file, err, lastLine(string(out)))
			return
		}
		t.Logf("%s: screenshot in %s", file, png)
	}

	ids := map[string][]string{} // page path ("/REPORT.html") → the ids of its elements
	links := map[string][]string{}
	for _, p := range s.Pages {
		w := want[p.Source]
		failed := false
		fail := func(format string, args ...any) {
			t.Errorf("%s: "+format, append([]any{p.File}, args...)...)
			failed = true
		}
		if code, ctype := get(t, base+p.File); code != http.StatusOK || !strings.HasPrefix(ctype, "text/html") {
			fail("the server answers %d (%s)", code, ctype)
		}
		r, err := probe(ctx, chromium, tmp, base, p.File)
		if err != nil {
			fail("%v", err)
			screenshot(p.File)
			continue
		}
		if r.Error != "" {
			fail("did not load as a page of the site: %s", r.Error)
		}
		if !r.Article || r.StyleRules == 0 {
			fail("did not render as a page of the site (article found: %v, style rules loaded: %d)", r.Article, r.StyleRules)
		}
		if wantTitle := w.title + " · " + s.Title; plain(r.Title) != plain(wantTitle) {
			fail("title %q, want %q", r.Title, wantTitle)
		}
		if len(r.H1) != 1 || plain(r.H1[0]) != plain(w.title) {
			fail("h1 %q, want one, %q (the title of %s)", r.H1, w.title, p.Source)
		}
		if len(r.Images) != w.figures {
			fail("%d figures in the browser, %s holds %d", len(r.Images), p.Source, w.figures)
		}
		for _, img := range r.Images {
			if !img.Complete || img.NaturalWidth == 0 {
				fail("the figure %s does not load (complete %v, naturalWidth %d)", img.Src, img.Complete, img.NaturalWidth)
			}
			if strings.TrimSpace(img.Alt) == "" {
				fail("the figure %s has no alt text", img.Src)
			}
		}
		t.Logf("%s: %q, %d figures, %d links", p.File, r.Title, len(r.Images), len(r.Links))
		ids["/"+p.File] = r.IDs
		for _, l := range r.Links {
			links[l] = append(links[l], p.File)
		}
		if failed {
			screenshot(p.File)
		}
	}

	// Every internal link answers 200 and its fragment names an element of the page it points at.
	origin, _ := url.Parse(base)
	internal, resolved := 0, 0
	for _, l := range slices.Sorted(maps.Keys(links)) {
		u, err := url.Parse(l)
		if err != nil {
			t.Errorf("%s: link %q: %v", links[l][0], l, err)
			continue
		}
		if u.Host != origin.Host || u.Scheme != origin.Scheme {
			continue // an external link: not this test's business
		}
		internal++
		target := u.Path
		if target == "/" {
			target = "/index.html"
		}
		if code, _ := get(t, base+strings.TrimPrefix(target, "/")); code != http.StatusOK {
			t.Errorf("%v: the link %s answers %d", links[l], u.RequestURI(), code)
			continue
		}
		if u.Fragment != "" {
			pageIDs, ok := ids[target]
			if !ok {
				t.Errorf("%v: the link %s has a fragment but points at no page", links[l], l)
				continue
			} else if !slices.Contains(pageIDs, u.Fragment) {
				t.Errorf("%v: the link %s names no element of %s", links[l], "#"+u.Fragment, target)
				continue
			}
		}
		resolved++
	}
	t.Logf("%d of %d internal links resolve", resolved, internal)
	if internal < len(s.Pages) {
		t.Errorf("only %d internal links across %d pages: the table of contents alone links every page", internal, len(s.Pages))
	}
}

// The site that the browser tests open is built once per test binary (TestMain removes it).
var (
	buildOnce sync.Once
	buildDir  string
	built     *Site
	buildTook time.Duration
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// builtSite builds the site from this folder into a temporary folder the first time a test asks, and returns it
// and how long the build took; the test fails where the build did.
func builtSite(t *testing.T) (*Site, time.Duration) {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "agentrl-site-test-"); buildErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		start := time.Now()
		built, buildErr = Build(ctx, Options{Dir: ".", Out: filepath.Join(buildDir, "html"), Log: testLog{t}})
		buildTook = time.Since(start)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built, buildTook
}

// artifactsDir is the folder for a failing browser test's screenshots: $AGENTRL_SITE_ARTIFACTS, or else a new
// folder under the system's temporary folder ("" when it cannot be made, which the test reports).
func artifactsDir(t *testing.T) string {
	dir := os.Getenv("AGENTRL_SITE_ARTIFACTS")
	var err error
	if dir == "" {
		dir, err = os.MkdirTemp("", "agentrl-site-failures-")
	} else {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		t.Errorf("no folder for screenshots: %v", err)
		return ""
	}
	return dir
}

// browserWait bounds one Chromium run.
const browserWait = 90 * time.Second

// need returns the path of a program, looking first at the Debian path; where it is missing the test skips,
// or fails when CI=true or AGENTRL_SITE_TEST=1.
func need(t *testing.T, debian, name, install string) string {
	t.Helper()
	if debian != "" {
		if _, err := os.Stat(debian); err == nil {
			return debian
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	msg := fmt.Sprintf("%s not found (Debian: %s)", name, install)
	if os.Getenv("CI") == "true" || os.Getenv("AGENTRL_SITE_TEST") == "1" {
		t.Fatal(msg + "; CI=true or AGENTRL_SITE_TEST=1 requires the site's browser test")
	}
	t.Skip(msg + "; skipping the site's browser test (CI=true or AGENTRL_SITE_TEST=1 requires it)")
	return ""
}

// testLog writes the build's output to the test's log, a line at a time.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	sc := bufio.NewScanner(strings.NewReader(string(p)))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			l.t.Log(line)
		}
	}
	return len(p), nil
}

// wantPage is what a page must show.
type wantPage struct {
	title   string
	figures int
}

// expectedPages reads, from the repository, the pages the site must have: by source path, relative to the
// repository root.
func expectedPages() (map[string]wantPage, error) {
	want := map[string]wantPage{}
	nbs, err := filepath.Glob("../notebooks/12.*.ipynb")
	if err != nil || len(nbs) == 0 {
		return nil, fmt.Errorf("no notebooks in ../notebooks (%v)", err)
	}
	for _, nb := range nbs {
		w, err := notebookPage(nb)
		if err != nil {
			return nil, err
		}
		want["notebooks/"+filepath.Base(nb)] = w
	}
	for _, md := range []string{"../notebooks/REPORT.md", "index.md", "run.md"} {
		b, err := os.ReadFile(md)
		if err != nil {
			return nil, err
		}
		title := markdownTitle(string(b))
		if title == "" {
			return nil, fmt.Errorf("%s has no title", md)
		}
		rel := filepath.ToSlash(filepath.Clean(filepath.Join("site", md)))
		want[rel] = wantPage{title: title, figures: strings.Count(string(b), "![")}
	}
	return want, nil
}

// notebookPage is a notebook's title (its first markdown heading) and figures (image outputs).
func notebookPage(file string) (wantPage, error) {
	var nb struct {
		Cells []struct {
			Type    string    `json:"cell_type"`
			Source  multiline `json:"source"`
			Outputs []struct {
				Type string                     `json:"output_type"`
				Data map[string]json.RawMessage `json:"data"`
			} `json:"outputs"`
		} `json:"cells"`
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return wantPage{}, err
	}
	if err := json.Unmarshal(b, &nb); err != nil {
		return wantPage{}, fmt.Errorf("%s: %v", file, err)
	}
	var w wantPage
	for _, c := range nb.Cells {
		if c.Type == "markdown" && w.title == "" {
			w.title = markdownTitle(string(c.Source))
		}
		for _, o := range c.Outputs {
			if o.Type != "display_data" && o.Type != "execute_result" {
				continue
			}
			if slices.ContainsFunc(imageTypes, func(m string) bool { return o.Data[m] != nil }) {
				w.figures++
			}
		}
	}
	if w.title == "" {
		return w, fmt.Errorf("%s has no heading", file)
	}
	return w, nil
}

var frontTitle = regexp.MustCompile(`(?m)\A---\n(?:.*\n)*?title:\s*(.+)\n(?:.*\n)*?---\n`)

// markdownTitle is a Markdown text's front matter title, else its first "# " heading.
func markdownTitle(md string) string {
	if m := frontTitle.FindStringSubmatch(md); m != nil {
		return strings.Trim(strings.TrimSpace(m[1]), `"'`)
	}
	for _, line := range strings.Split(md, "\n") {
		if h, ok := strings.CutPrefix(line, "# "); ok {
			return strings.TrimSpace(h)
		}
	}
	return ""
}

// plain folds the typographic quotes that MyST puts in titles to ASCII ones and trims the text.
func plain(s string) string {
	return strings.TrimSpace(strings.NewReplacer("\u2018", "'", "\u2019", "'", "\u201c", `"`, "\u201d", `"`).Replace(s))
}

// serve serves the folder out on 127.0.0.1 as a static host such as GitHub Pages does (a folder's
// index.html at its path; no redirects) until the test ends, and returns the base URL, ending in "/".
func serve(t *testing.T, out string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(out)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/__probe", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		page, _ := json.Marshal(r.URL.Query().Get("page"))
		fmt.Fprintf(w, probePage, page)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if name == "" || strings.HasSuffix(r.URL.Path, "/") {
			name = path.Join(name, "index.html")
		}
		f, err := root.Open(name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil || fi.IsDir() {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, name, fi.ModTime(), f)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close(); root.Close() })
	return fmt.Sprintf("http://%s/", l.Addr())
}

// get fetches u without following redirects and returns the status code and content type.
func get(t *testing.T, u string) (int, string) {
	t.Helper()
	client := &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Get(u)
	if err != nil {
		t.Errorf("GET %s: %v", u, err)
		return 0, ""
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Content-Type")
}

// probePage loads a page of the site (%s: its path, as a JSON string) in a frame of the same origin, and
// when the frame and its images have loaded, writes what the page shows as JSON into #probe, which
// Chromium's --dump-dom prints. The page itself is served as it is.
const probePage = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>probe</title></head>
<body>
<iframe id="frame" style="width:1400px;height:2400px;border:0"></iframe>
<pre id="probe"></pre>
<script>
const frame = document.getElementById("frame");
const out = document.getElementById("probe");
frame.addEventListener("load", () => {
  const r = {};
  try {
    const d = frame.contentDocument;
    if (!d || !d.location.href.startsWith(location.origin)) throw new Error("the frame shows no page of this origin");
    r.url = d.location.href;
    r.title = d.title;
    r.h1 = [...d.querySelectorAll("h1")].map(e => e.textContent.replace(/\s+/g, " ").trim());
    r.article = !!d.querySelector("main article");
    r.styleRules = [...d.styleSheets].reduce((n, s) => n + s.cssRules.length, 0);
    r.images = [...d.images].map(i => ({src: i.currentSrc || i.src, alt: i.alt, complete: i.complete, naturalWidth: i.naturalWidth}));
    r.links = [...d.querySelectorAll("a[href]")].map(a => a.href);
    r.ids = [...d.querySelectorAll("[id]")].map(e => e.id);
  } catch (e) {
    r.error = String(e);
  }
  out.textContent = JSON.stringify(r);
});
frame.src = %s;
</script>
</body></html>
`

// probeResult is what probePage reports.
type probeResult struct {
	Error      string   `json:"error"`
	URL        string   `json:"url"`
	Title      string   `json:"title"`
	H1         []string `json:"h1"`
	Article    bool     `json:"article"`
	StyleRules int      `json:"styleRules"`
	Images     []struct {
		Src          string `json:"src"`
		Alt          string `json:"alt"`
		Complete     bool   `json:"complete"`
		NaturalWidth int    `json:"naturalWidth"`
	} `json:"images"`
	Links []string `json:"links"`
	IDs   []string `json:"ids"`
}

var probeOut = regexp.MustCompile(`(?s)<pre id="probe">(.*?)</pre>`)

// probe opens file of the site in headless Chromium through probePage and returns what it reports.
func probe(ctx context.Context, chromium, tmp, base, file string) (*probeResult, error) {
	pctx, cancel := context.WithTimeout(ctx, browserWait)
	defer cancel()
	cmd := chromiumCmd(pctx, chromium, tmp, "--virtual-time-budget=15000", "--dump-dom",
		base+"__probe?page="+url.QueryEscape(file))
	var dom, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &dom, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("chromium: %v (%s)", err, lastLine(stderr.String()))
	}
	m := probeOut.FindStringSubmatch(dom.String())
	if m == nil || strings.TrimSpace(m[1]) == "" {
		return nil, fmt.Errorf("the page did not finish loading in Chromium (no report in %d bytes of DOM)", dom.Len())
	}
	var r probeResult
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &r); err != nil {
		return nil, fmt.Errorf("the probe's report: %v", err)
	}
	return &r, nil
}

// chromiumCmd is headless Chromium in its own process group, killed as a group when ctx ends.
func chromiumCmd(ctx context.Context, chromium, tmp string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, chromium, append([]string{"--headless", "--no-sandbox", "--disable-gpu",
		"--no-first-run", "--disable-extensions", "--hide-scrollbars", "--user-data-dir=" + filepath.Join(tmp, "chromium")}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
