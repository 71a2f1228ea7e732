package site

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

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
		r.figure(w, fmt.Sprintf(`<img src="%s" alt="%s"%s>`, esc(src), esc(alt), size), alt)
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
	s, err := mimeText(r.public, e)
	if err != nil {
		r.errorf("%v", err)
	}
	return s
}

// mimeText is a MIME entry's text, inline or in the file that MyST wrote into public for a long one.
func mimeText(public string, e mimeEntry) (string, error) {
	if e.Content != "" || e.Path == "" {
		return string(e.Content), nil
	}
	b, err := os.ReadFile(filepath.Join(public, path.Base(e.Path)))
	return string(b), err
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

// figure writes an image output as a figure with its caption: the chart's title from its text, and for a
// numbered figure ("Figure 12.1: …") the number, a link to the figure itself, whose element has the number's id.
func (r *renderer) figure(w *bytes.Buffer, img, alt string) {
	number, caption := figureCaption(alt)
	if r.ids == nil {
		r.ids = map[string]bool{}
	}
	id := ""
	if number != "" && !r.ids[figureID(number)] {
		id = figureID(number)
		r.ids[id] = true
	}
	if id == "" {
		fmt.Fprintf(w, `<figure class="output figure">%s`, img)
	} else {
		fmt.Fprintf(w, `<figure class="output figure" id="%s">%s`, id, img)
	}
	switch {
	case id != "":
		fmt.Fprintf(w, `<figcaption><a class="fignum" href="#%s">Figure %s</a>: %s</figcaption>`, id, esc(number), esc(caption))
	case number != "":
		fmt.Fprintf(w, `<figcaption>Figure %s: %s</figcaption>`, esc(number), esc(caption))
	case caption != "":
		fmt.Fprintf(w, `<figcaption>%s</figcaption>`, esc(caption))
	}
	w.WriteString("</figure>\n")
}
