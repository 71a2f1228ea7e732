//go:build unix

package site

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// features is what site/browsertest/features.mjs reports.
type features struct {
	Error  string `json:"error"`
	Search struct {
		Results []struct {
			Href, Title, Text string
		} `json:"results"`
		Landed *struct {
			URL, H1       string
			Target, Holds bool
		} `json:"landed"`
	} `json:"search"`
	Copy struct {
		Code      string  `json:"code"`
		Clipboard *string `json:"clipboard"`
		Label     string  `json:"label"`
	} `json:"copy"`
	Theme       map[string]colours `json:"theme"`
	Phone       []phonePage        `json:"phone"`
	PhoneSearch struct {
		Scroll, Viewport int
		Left, Right      float64
	} `json:"phoneSearch"`
	Follow []struct {
		Text, From, Href string
		Landed           *struct {
			URL, H1 string
			Target  *struct{ Tag, Text string }
		}
	} `json:"follow"`
	Errors []string `json:"errors"`
}

// colours are what a page shows under one colour scheme.
type colours struct {
	Bg, Fg, Code, Pressed string
	Stored                *string
}

// phonePage is one page as the phone shows it.
type phonePage struct {
	Page         string
	Closed, Open struct{ Scroll, Viewport, Inner int }
	TocShown     bool
	Menu         struct {
		Shown bool
		Links int
	}
	Numerics, Plumbing struct {
		Present, Open bool
		Text          string
	}
	Xrefs    []struct{ Text, Href string }
	Figures  []struct{ ID, Caption string }
	Unlinked []string
}

// phoneWidth and phoneHeight are the phone's viewport in CSS pixels (an iPhone 12 to 15's).
const phoneWidth, phoneHeight = 390, 844

// TestSiteFeatures goes through the built site in headless Chromium as a reader would, driven by puppeteer-core
// (pinned in site/browsertest, where the test runs `npm ci` when needed; it downloads no browser), and fails
// unless
//
//   - typing "masking" into the search box lists the 12.4 page, and its result opens that page on a section that
//     says "masking";
//   - a code cell's copy button puts the cell's code (as the notebook holds it) on the clipboard;
//   - the page's colours (background, text, code) differ under the system's dark scheme; the toggle switches them
//     back, and the choice holds after a reload and on another page; the toggle returns to the dark scheme, and
//     turns a light one dark;
//   - at 390 × 844 no page is wider than the viewport, with the menu closed or open or the search's results shown;
//     the contents are folded behind the menu button, which shows them; on a notebook's page the numerics key and
//     the link cell are folded;
//   - "Section 12.2" on another page than 12.2's is a link that opens 12.2's page, and "Figure 12.1" one that opens
//     the figure with its numbered caption; no mention of a section or figure that the site has is left unlinked
//     (a section's mentions of itself excepted);
//   - a page throws a script error.
//
// Screenshots of each step go to $AGENTRL_SITE_ARTIFACTS, or else a new temporary folder, when it fails. It skips
// where chromium, node or npm is missing, unless CI=true or AGENTRL_SITE_TEST=1.
func TestSiteFeatures(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the site build and its browser test")
	}
	chromium := need(t, "/usr/bin/chromium", "chromium", "apt-get install chromium")
	node := need(t, "", "node", "apt-get install nodejs npm")
	need(t, "", "npm", "apt-get install npm")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := ensureNodePackage(ctx, "browsertest", "puppeteer-core", testLog{t}); err != nil {
		t.Fatal(err)
	}
	s, _ := builtSite(t)
	file := func(section string) string {
		for _, p := range s.Pages {
			if strings.HasPrefix(path.Base(p.Source), section+"-") {
				return p.File
			}
		}
		t.Fatalf("no page of notebook %s", section)
		return ""
	}
	var pages []string
	for _, p := range s.Pages {
		pages = append(pages, p.File)
	}
	shots := t.TempDir()
	plan := map[string]any{
		"base": serve(t, s.Out), "chromium": chromium, "profile": filepath.Join(t.TempDir(), "profile"), "shots": shots,
		"pages":  pages,
		"search": map[string]string{"page": "index.html", "query": "masking", "want": file("12.4")},
		"copy":   map[string]string{"page": file("12.4")},
		"theme":  map[string][]string{"pages": {"index.html", file("12.2")}},
		"phone":  map[string]int{"width": phoneWidth, "height": phoneHeight},
		"follow": []string{"Section 12.2", "Figure 12.1"},
	}
	b, _ := json.Marshal(plan)
	cmd := exec.CommandContext(ctx, node, "features.mjs", string(b))
	cmd.Dir = "browsertest"
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("browsertest/features.mjs: %v\n%s", err, stderr.String())
	}
	var f features
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatalf("browsertest/features.mjs's report: %v\n%s", err, out)
	}
	if f.Error != "" {
		t.Error("the browser session failed: " + f.Error)
	}
	for _, e := range f.Errors {
		t.Errorf("a script error: %s", e)
	}
	checkSearch(t, f, file("12.4"))
	checkCopy(t, f, file("12.4"))
	checkTheme(t, f)
	checkPhone(t, f, s)
	checkFollow(t, f, s, file("12.2"))
	if t.Failed() {
		keepShots(t, shots)
	}
}

func checkSearch(t *testing.T, f features, want string) {
	found := slices.ContainsFunc(f.Search.Results, func(r struct{ Href, Title, Text string }) bool {
		u, err := url.Parse(r.Href)
		return err == nil && path.Base(u.Path) == want
	})
	if !found {
		t.Errorf("searching for \"masking\" lists no section of %s: %+v", want, f.Search.Results)
		return
	}
	t.Logf("search \"masking\": %d results, the first %q", len(f.Search.Results), f.Search.Results[0].Title)
	l := f.Search.Landed
	switch {
	case l == nil:
		t.Errorf("the search's result for %s opened nothing", want)
	case !strings.HasPrefix(l.H1, "12.4 ") || !l.Target || !l.Holds:
		t.Errorf("the search's result for %s opened %s (h1 %q, its #fragment found %v, says \"masking\" %v)", want, l.URL, l.H1, l.Target, l.Holds)
	}
}

// checkCopy compares the clipboard after a press of the copy button with the notebook's cell: the first code cell
// after the link cell of the notebook that page shows.
func checkCopy(t *testing.T, f features, page string) {
	cells, err := codeCells(filepath.Join("..", "notebooks", strings.TrimSuffix(page, ".html")+".ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) < 2 {
		t.Fatalf("%s has %d code cells, want a link cell and another", page, len(cells))
	}
	want := strings.TrimRight(cells[1], "\n")
	switch {
	case f.Copy.Clipboard == nil:
		t.Errorf("%s: the first code cell has no copy button", page)
	case strings.TrimRight(*f.Copy.Clipboard, "\n") != want:
		t.Errorf("%s: after the copy button (%q) the clipboard holds\n%q\nwant the cell's code\n%q", page, f.Copy.Label, *f.Copy.Clipboard, want)
	case f.Copy.Label != "Copied":
		t.Errorf("%s: the copy button says %q after copying, want \"Copied\"", page, f.Copy.Label)
	default:
		t.Logf("copy: %d characters of %s's second code cell on the clipboard", len(*f.Copy.Clipboard), page)
	}
}

// codeCells is the source of every code cell of a notebook.
func codeCells(ipynb string) ([]string, error) {
	var nb struct {
		Cells []struct {
			Type   string    `json:"cell_type"`
			Source multiline `json:"source"`
		} `json:"cells"`
	}
	if err := readJSON(ipynb, &nb); err != nil {
		return nil, err
	}
	var cells []string
	for _, c := range nb.Cells {
		if c.Type == "code" {
			cells = append(cells, string(c.Source))
		}
	}
	return cells, nil
}

func checkTheme(t *testing.T, f features) {
	th := f.Theme
	light, dark := th["light"], th["dark"]
	if light.Bg == "" || light.Fg == "" {
		t.Fatalf("no colours read: %+v", th)
	}
	if light.Bg == dark.Bg || light.Fg == dark.Fg || light.Code == dark.Code {
		t.Errorf("the dark scheme changes no colour: light %+v, dark %+v", light, dark)
	}
	same := func(name string, got, want colours, pressed string) {
		if got.Bg != want.Bg || got.Fg != want.Fg || got.Code != want.Code || got.Pressed != pressed {
			t.Errorf("%s: colours %+v (toggle pressed %q), want %+v (pressed %q)", name, got, got.Pressed, want, pressed)
		}
	}
	same("the dark scheme", dark, dark, "true")
	same("the toggle pressed under the dark scheme", th["toggled"], light, "false")
	same("after a reload", th["reloaded"], light, "false")
	same("on another page", th["otherPage"], light, "false")
	same("the toggle pressed again", th["toggledBack"], dark, "true")
	same("the toggle pressed under the light scheme", th["darkOnLight"], dark, "true")
	if s := th["reloaded"].Stored; s == nil || *s != "light" {
		t.Errorf("the toggle's choice is not remembered (localStorage holds %v)", s)
	}
	if s := th["toggledBack"].Stored; s != nil {
		t.Errorf("a choice that agrees with the system's scheme is still remembered (%q)", *s)
	}
	t.Logf("colours: light %s on %s, dark %s on %s", light.Fg, light.Bg, dark.Fg, dark.Bg)
}

func checkPhone(t *testing.T, f features, s *Site) {
	if len(f.Phone) != len(s.Pages) {
		t.Errorf("the phone opened %d pages, the site has %d", len(f.Phone), len(s.Pages))
	}
	sources := map[string]string{}
	for _, p := range s.Pages {
		sources[p.File] = p.Source
	}
	for _, p := range f.Phone {
		for name, w := range map[string]struct{ Scroll, Viewport, Inner int }{"the menu closed": p.Closed, "the menu open": p.Open} {
			if w.Viewport != phoneWidth || w.Scroll > w.Viewport {
				t.Errorf("%s at %d × %d with %s: the document is %d px wide, the viewport %d", p.Page, phoneWidth, phoneHeight, name, w.Scroll, w.Viewport)
			}
		}
		if p.TocShown || !p.Menu.Shown || p.Menu.Links < len(s.Pages) {
			t.Errorf("%s on the phone: contents shown before the menu button %v, after it %v with %d links", p.Page, p.TocShown, p.Menu.Shown, p.Menu.Links)
		}
		if !strings.HasSuffix(sources[p.Page], ".ipynb") {
			continue
		}
		if !p.Numerics.Present || p.Numerics.Open {
			t.Errorf("%s: the numerics key is not folded (details present %v, open %v)", p.Page, p.Numerics.Present, p.Numerics.Open)
		}
		if !p.Plumbing.Present || p.Plumbing.Open || !strings.Contains(p.Plumbing.Text, "%goflags") {
			t.Errorf("%s: the link cell is not folded (details present %v, open %v, holds %%goflags %v)", p.Page, p.Plumbing.Present, p.Plumbing.Open, strings.Contains(p.Plumbing.Text, "%goflags"))
		}
	}
	if ps := f.PhoneSearch; ps.Scroll > ps.Viewport || ps.Left < 0 || ps.Right > float64(ps.Viewport) {
		t.Errorf("the search's results on the phone: the document %d px wide, the viewport %d, the results from %.0f to %.0f px", ps.Scroll, ps.Viewport, ps.Left, ps.Right)
	}
}

var mentionNumber = regexp.MustCompile(`^(Section|Figure|figure|§)[ \x{a0}]?(\d+\.\d+)$`)

// checkFollow checks the cross-references: the followed links land where they say, and no mention of a section
// or figure that the site has is left as plain text.
func checkFollow(t *testing.T, f features, s *Site, section122 string) {
	figures := map[string]string{} // figure id → page
	for _, p := range f.Phone {
		for _, fig := range p.Figures {
			figures[fig.ID] = p.Page
		}
	}
	for _, fl := range f.Follow {
		switch {
		case fl.From == "":
			t.Errorf("no page links %q to another page", fl.Text)
		case fl.Landed == nil:
			t.Errorf("%s: the link %q opened nothing", fl.From, fl.Text)
		case fl.Text == "Section 12.2" && (path.Base(mustURL(t, fl.Landed.URL).Path) != section122 || !strings.HasPrefix(fl.Landed.H1, "12.2 ")):
			t.Errorf("%s: the link %q opened %s (h1 %q), want %s", fl.From, fl.Text, fl.Landed.URL, fl.Landed.H1, section122)
		case strings.HasPrefix(fl.Text, "Figure ") && (fl.Landed.Target == nil || fl.Landed.Target.Tag != "figure" || !strings.Contains(fl.Landed.Target.Text, fl.Text+": ")):
			t.Errorf("%s: the link %q opened %s, at %+v: want a figure captioned %q", fl.From, fl.Text, fl.Landed.URL, fl.Landed.Target, fl.Text+": …")
		default:
			t.Logf("%s: %q opens %s", fl.From, fl.Text, fl.Landed.URL)
		}
	}
	for _, p := range f.Phone {
		for _, m := range p.Unlinked {
			sm := mentionNumber.FindStringSubmatch(m)
			if sm == nil {
				continue
			}
			kind, number := sm[1], sm[2]
			if strings.EqualFold(kind, "figure") {
				if _, ok := figures[figureID(number)]; ok {
					t.Errorf("%s: %q is plain text, the site has that figure", p.Page, m)
				}
				continue
			}
			if target := sectionPage(s, number); target != "" && target != p.Page {
				t.Errorf("%s: %q is plain text, the site has that section (%s)", p.Page, m, target)
			}
		}
	}
}

// sectionPage is the page of the notebook of a section ("12.2"), "" where the site has none.
func sectionPage(s *Site, number string) string {
	for _, p := range s.Pages {
		if strings.HasPrefix(path.Base(p.Source), number+"-") {
			return p.File
		}
	}
	return ""
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return u
}

// keepShots copies the session's screenshots where a failure's artifacts go.
func keepShots(t *testing.T, shots string) {
	dir := artifactsDir(t)
	if dir == "" {
		return
	}
	entries, _ := os.ReadDir(shots)
	for _, e := range entries {
		if err := copyFile(filepath.Join(shots, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Logf("screenshot %s: %v", e.Name(), err)
		}
	}
	t.Logf("%d screenshots of the session in %s", len(entries), dir)
}
