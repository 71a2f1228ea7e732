package site

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// toc is the site's table of contents as MyST's config.json lists it, with each page's AST read.
type toc struct {
	entries []*tocEntry       // every line in order, the index first
	pages   []*tocEntry       // the entries that are pages, in the same order
	files   map[string]string // slug → HTML file
}

// tocEntry is one line of the table of contents: a page, or a group title (no slug and no page).
type tocEntry struct {
	slug, title string
	level       int
	page        *mystPage
	file        string // the page's HTML file: index.html for the first, its source's name with .html for the others
}

// navItem is one line of the table of contents as a page shows it.
type navItem struct {
	Title   string
	Href    string // "" for a group title
	Level   int
	Current bool
}

// readTOC reads the pages of proj's table of contents from build/content, the index first, and names each page's
// HTML file. It fails when a page has no AST or two pages would be one file.
func readTOC(build string, proj mystProject) (*toc, error) {
	t := &toc{entries: []*tocEntry{{slug: proj.Index, level: 1}}, files: map[string]string{}}
	for _, p := range proj.Pages {
		t.entries = append(t.entries, &tocEntry{slug: p.Slug, title: p.Title, level: p.Level})
	}
	taken := map[string]string{} // HTML file → slug
	for i, e := range t.entries {
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
		taken[e.file], t.files[e.slug] = e.slug, e.file
	}
	for _, e := range t.entries {
		if e.page != nil {
			t.pages = append(t.pages, e)
		}
	}
	return t, nil
}

// nav is the table of contents as the page of current shows it; the index is "Introduction".
func (t *toc) nav(current *tocEntry) []navItem {
	var nav []navItem
	for _, n := range t.entries {
		item := navItem{Title: n.title, Level: n.level, Href: n.file, Current: n == current}
		if n.file == "index.html" {
			item.Title = "Introduction"
		}
		nav = append(nav, item)
	}
	return nav
}

// around is the pages before and after pages[i], nil at either end.
func (t *toc) around(i int) (prev, next *navItem) {
	if i > 0 {
		prev = &navItem{Title: t.pages[i-1].title, Href: t.pages[i-1].file}
	}
	if i+1 < len(t.pages) {
		next = &navItem{Title: t.pages[i+1].title, Href: t.pages[i+1].file}
	}
	return prev, next
}
