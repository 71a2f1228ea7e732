package site

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// mystConfig is the part of MyST's _build/site/config.json that the site uses.
type mystConfig struct {
	Myst     string        `json:"myst"`
	Projects []mystProject `json:"projects"`
}

// mystProject is one project of MyST's config.json: its title and table of contents.
type mystProject struct {
	Title string `json:"title"`
	Index string `json:"index"` // the slug of the first page
	Pages []struct {
		Slug  string `json:"slug"` // "" for a group title of the table of contents
		Title string `json:"title"`
		Level int    `json:"level"`
	} `json:"pages"`
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

// readJSON decodes the JSON of file into v.
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
