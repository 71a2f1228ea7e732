package harness

import "strings"

// SectionOutput is what one section's notebooks printed. It has the fields of bookreport.SectionOutput, in order,
// so that it converts to the report's input.
type SectionOutput struct {
	Lines    []string // stdout lines of all code cells, in order
	Exists   bool     // a notebook for the section exists
	Draft    bool     // it carries DraftMarker
	Numerics string   // what computed its outputs (Provenance.Numerics), "" if its metadata does not say
}

// StdoutLines returns the lines a notebook's code cells printed on stdout (stream outputs only: displays and
// stderr are not read), with carriage returns resolved as a terminal would.
func StdoutLines(nb *Notebook) []string {
	var out []string
	for _, c := range nb.CodeCells() {
		var b strings.Builder
		for _, o := range c.Outputs {
			if o.Type == "stream" && o.Name == "stdout" {
				b.WriteString(string(o.Text))
			}
		}
		for _, line := range strings.Split(b.String(), "\n") {
			if i := strings.LastIndexByte(line, '\r'); i >= 0 {
				line = line[i+1:]
			}
			out = append(out, strings.TrimRight(line, " \t"))
		}
	}
	return out
}

// Sections groups the notebooks' printed lines by chapter section. The draft flag and existence come from the
// notebooks themselves.
func Sections(nbs []*Notebook) map[string]SectionOutput {
	out := map[string]SectionOutput{}
	for _, nb := range nbs {
		sec := Section(nb.Path)
		so := out[sec]
		so.Exists = true
		so.Draft = so.Draft || nb.Draft()
		so.Lines = append(so.Lines, StdoutLines(nb)...)
		if prov := nb.Metadata.Agentrl; prov != nil {
			so.Numerics = prov.Numerics
		}
		out[sec] = so
	}
	return out
}
