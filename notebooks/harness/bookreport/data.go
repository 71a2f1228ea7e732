package bookreport

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

var (
	//go:embed booklines.tsv
	bookLinesTSV string
	//go:embed claims.tsv
	claimsTSV string
	//go:embed auxlines.tsv
	auxLinesTSV string
	//go:embed sixseeds.tsv
	sixSeedsTSV string
)

// SixSeedCount is how often a mechanism rule held under other seeds (sixseeds.tsv).
type SixSeedCount struct {
	ID        string
	Held, Of  int
	Variation string // what varies across the seeds
}

// SixSeeds returns the counts of sixseeds.tsv, in its order.
func SixSeeds() []SixSeedCount {
	var out []SixSeedCount
	for _, f := range readTSV("sixseeds.tsv", sixSeedsTSV, "ID", "held", "of", "across the seeds") {
		var c SixSeedCount
		if _, err := fmt.Sscan(f[1], &c.Held); err != nil {
			panic("bookreport: sixseeds.tsv: " + f[0] + ": held: " + err.Error())
		}
		if _, err := fmt.Sscan(f[2], &c.Of); err != nil || c.Held > c.Of {
			panic(fmt.Sprintf("bookreport: sixseeds.tsv: %s: %s of %s seeds", f[0], f[1], f[2]))
		}
		c.ID, c.Variation = f[0], f[3]
		out = append(out, c)
	}
	return out
}

// readTSV parses a table of the package's data: lines of fields separated by one tab, the first such line the
// header, which must equal header; blank lines and lines starting with # are skipped, and `\n` in a field is a
// line break. Every row has the header's number of fields. It panics on a malformed table: the data is embedded, so
// an error is a bug of the build.
func readTSV(name, data string, header ...string) [][]string {
	var rows [][]string
	seenHeader := false
	for i, line := range strings.Split(data, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if !seenHeader {
			if !slices.Equal(fields, header) {
				panic(fmt.Sprintf("bookreport: %s:%d: header %q, want %q", name, i+1, fields, header))
			}
			seenHeader = true
			continue
		}
		if len(fields) != len(header) {
			panic(fmt.Sprintf("bookreport: %s:%d: %d fields, want %d (%s)", name, i+1, len(fields), len(header),
				strings.Join(header, ", ")))
		}
		for j, f := range fields {
			fields[j] = strings.ReplaceAll(f, `\n`, "\n")
		}
		rows = append(rows, fields)
	}
	return rows
}

// BookLines returns the 44 printed lines of the chapter with their acceptance rules, in order.
func BookLines() []BookLine {
	rules := printedRules()
	var lines []BookLine
	for _, f := range readTSV("booklines.tsv", bookLinesTSV, "ID", "section", "book", "template") {
		id := f[0]
		rule, ok := rules[id]
		if !ok {
			panic("bookreport: booklines.tsv: no rule for " + id + " in printedRules")
		}
		delete(rules, id)
		lines = append(lines, BookLine{ID: id, Section: f[1], Book: f[2], re: tmpl(f[3]), rule: rule})
	}
	if len(rules) > 0 {
		panic(fmt.Sprintf("bookreport: rules for lines that booklines.tsv does not have: %v", keys(rules)))
	}
	return lines
}

// Claims returns what the targets read off the chapter's figures (their section B) and the numbers its prose
// states (section C), with their rules. Each is evaluated on lines our notebooks print: the auxiliary lines of the
// figures' cells and the book lines. Where the targets write "≈" and "around step s" we read: a timing within five
// steps (the targets' slack), a level within the band the printed lines use for the same quantity.
func Claims() []BookLine {
	rules := claimRules()
	var claims []BookLine
	for _, f := range readTSV("claims.tsv", claimsTSV, "ID", "section", "source", "claim", "unchecked") {
		id := f[0]
		rule, ok := rules[id]
		if !ok || rule == nil {
			panic("bookreport: claims.tsv: no rule for " + id + " in claimRules")
		}
		delete(rules, id)
		claims = append(claims, BookLine{ID: id, Section: f[1], Source: f[2], Book: f[3], rule: rule, Unchecked: f[4]})
	}
	if len(rules) > 0 {
		panic(fmt.Sprintf("bookreport: rules for claims that claims.tsv does not have: %v", keys(rules)))
	}
	return claims
}

// AuxLines returns the auxiliary lines the rules read.
func AuxLines() []AuxLine {
	var lines []AuxLine
	for _, f := range readTSV("auxlines.tsv", auxLinesTSV, "ID", "section", "multi", "template", "example") {
		if f[2] != "true" && f[2] != "false" {
			panic(fmt.Sprintf("bookreport: auxlines.tsv: %s: multi is %q, want true or false", f[0], f[2]))
		}
		lines = append(lines, AuxLine{ID: f[0], Section: f[1], Multi: f[2] == "true", Example: f[4], re: tmpl(f[3])})
	}
	return lines
}

// auxLines is AuxLines, read once.
var auxLines = sync.OnceValue(AuxLines)

// auxSection returns the section of auxiliary line id.
func auxSection(id string) string {
	for _, al := range auxLines() {
		if al.ID == id {
			return al.Section
		}
	}
	return ""
}

// keys returns m's keys, sorted.
func keys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
