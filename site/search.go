package site

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// searchIndexFile is the site's search index, which theme/search.js loads the first time a reader searches. It is
// a script (it sets window.siteSearchIndex), not JSON, so that search works on pages opened from disk too, where
// a page may not fetch a file.
const searchIndexFile = "search-index.js"

// searchRecord is one record of MyST's search index (_build/site/myst.search.json): a heading ("lvl1" … "lvl6")
// or the text below one ("content"), at the address of its section.
type searchRecord struct {
	Type      string            `json:"type"`
	URL       string            `json:"url"` // "/slug", "/slug#id"; the index page is "/"
	Position  int               `json:"position"`
	Hierarchy map[string]string `json:"hierarchy"` // "lvl1": the page's title, "lvl2": its section's, …
	Content   string            `json:"content"`
}

// searchEntry is one section of a page in the site's index.
type searchEntry struct {
	Page    string `json:"page"`    // the page's title
	Section string `json:"section"` // the section's headings below the page's title, joined by " › "; "" at its top
	URL     string `json:"url"`     // the section's address relative to a page: "12.4-context-management.html#…"
	Text    string `json:"text"`    // the section's text, its code cells' too
}

// writeSearchIndex reads MyST's search index from build and writes the site's into out: one entry per section,
// in the order of the table of contents, addressed to the site's HTML files. It fails on a record whose page is
// not one of the site's.
func writeSearchIndex(build, out string, t *toc) error {
	var idx struct {
		Records []searchRecord `json:"records"`
	}
	if err := readJSON(filepath.Join(build, "myst.search.json"), &idx); err != nil {
		return err
	}
	order := map[string]int{} // slug → place in the table of contents
	for i, e := range t.pages {
		order[e.slug] = i
	}
	type keyed struct {
		page, pos int
		entry     *searchEntry
	}
	var entries []keyed
	byURL := map[string]*searchEntry{}
	for _, rec := range idx.Records {
		slug, frag, _ := strings.Cut(strings.TrimPrefix(rec.URL, "/"), "#")
		if slug == "" && len(t.pages) > 0 {
			slug = t.pages[0].slug
		}
		file, ok := t.files[slug]
		if !ok {
			return fmt.Errorf("site: myst.search.json: a record of %q, which is no page of the site", rec.URL)
		}
		if frag != "" {
			file += "#" + frag
		}
		e := byURL[file]
		if e == nil {
			e = &searchEntry{Page: rec.Hierarchy["lvl1"], Section: sectionPath(rec.Hierarchy), URL: file}
			byURL[file] = e
			entries = append(entries, keyed{order[slug], rec.Position, e})
		}
		if rec.Type == "content" {
			e.Text = strings.TrimSpace(e.Text + "\n" + rec.Content)
		}
	}
	slices.SortStableFunc(entries, func(a, b keyed) int { return cmp.Or(a.page-b.page, a.pos-b.pos) })
	list := make([]*searchEntry, len(entries))
	for i, k := range entries {
		list[i] = k.entry
	}
	b, err := json.Marshal(list)
	if err != nil {
		return err
	}
	js := "// The site's search index (site/search.go, from MyST's myst.search.json), loaded by search.js.\n" +
		"window.siteSearchIndex = " + string(b) + ";\n"
	return os.WriteFile(filepath.Join(out, searchIndexFile), []byte(js), 0o644)
}

// sectionPath is a record's headings below the page's title, joined by " › ".
func sectionPath(h map[string]string) string {
	var parts []string
	for lvl := 2; lvl <= 6; lvl++ {
		if s := h[fmt.Sprintf("lvl%d", lvl)]; s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " › ")
}
