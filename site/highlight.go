package site

import (
	"go/scanner"
	"go/token"
	"html"
	"slices"
	"strings"
)

// highlightGo returns a GoNB cell's source as HTML with Go's keywords, comments, literals and predeclared
// names in spans (classes k, c, s, n and b) and GoNB's special lines (`%…`, `!…`: not Go) in spans of class
// m. It never drops or reorders a byte: removing the spans and unescaping gives src.
func highlightGo(src string) string {
	type span struct {
		off, end int
		class    string
	}
	var spans []span

	// GoNB's special lines are blanked out of what the Go scanner reads.
	scan := []byte(src)
	for off := 0; off < len(src); {
		end := strings.IndexByte(src[off:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += off
		}
		if line := strings.TrimLeft(src[off:end], " \t"); strings.HasPrefix(line, "%") || strings.HasPrefix(line, "!") {
			start := end - len(line)
			spans = append(spans, span{start, end, "m"})
			for i := start; i < end; i++ {
				scan[i] = ' '
			}
		}
		off = end + 1
	}

	fset := token.NewFileSet()
	file := fset.AddFile("cell.go", -1, len(scan))
	var s scanner.Scanner
	s.Init(file, scan, func(token.Position, string) {}, scanner.ScanComments)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		off := file.Offset(pos)
		text := lit
		if text == "" {
			text = tok.String()
		}
		if tok == token.SEMICOLON && lit == "\n" || off+len(text) > len(src) || src[off:off+len(text)] != text {
			continue // an inserted semicolon, or a token whose literal is not the source's bytes
		}
		class := ""
		switch {
		case tok == token.COMMENT:
			class = "c"
		case tok == token.STRING || tok == token.CHAR:
			class = "s"
		case tok == token.INT || tok == token.FLOAT || tok == token.IMAG:
			class = "n"
		case tok.IsKeyword():
			class = "k"
		case tok == token.IDENT && predeclared[lit]:
			class = "b"
		}
		if class != "" {
			spans = append(spans, span{off, off + len(text), class})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return a.off - b.off })

	var b strings.Builder
	last := 0
	for _, sp := range spans {
		if sp.off < last {
			continue
		}
		b.WriteString(html.EscapeString(src[last:sp.off]))
		b.WriteString(`<span class="` + sp.class + `">`)
		b.WriteString(html.EscapeString(src[sp.off:sp.end]))
		b.WriteString("</span>")
		last = sp.end
	}
	b.WriteString(html.EscapeString(src[last:]))
	return b.String()
}

// predeclared holds Go's predeclared types, constants and functions.
var predeclared = map[string]bool{}

func init() {
	for _, name := range strings.Fields(`any bool byte comparable complex64 complex128 error float32 float64 int int8
		int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr true false iota nil append cap clear
		close complex copy delete imag len make max min new panic print println real recover`) {
		predeclared[name] = true
	}
}
