package bookreport

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Display rounding: a value printed with d decimals is within half a unit of the last place.
const (
	r2 = 0.005  // two decimals
	r3 = 0.0005 // three decimals
)

// num, flag, list, step and text are the placeholders of line templates.
const (
	num  = `([-+−]?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)`
	flag = `(True|False|true|false)`
	list = `\[([^\]]*)\]`
	step = `([0-9]+|-)` // a training step, or "-" for none (parsed as +Inf)
	text = `.+?`        // any text, not captured
)

// placeholders maps each placeholder of a line template to its expression.
var placeholders = map[string]string{"{N}": num, "{B}": flag, "{L}": list, "{S}": step, "{T}": text}

// tmpl compiles a line template: {N} a number, {B} a boolean, {L} a bracketed list, {S} a step or "-", {T} any
// text (not captured); runs of spaces match any run of blanks; everything else is literal.
func tmpl(t string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for len(t) > 0 {
		if len(t) >= 3 {
			if re, ok := placeholders[t[:3]]; ok {
				b.WriteString(re)
				t = t[3:]
				continue
			}
		}
		switch {
		case t[0] == ' ':
			b.WriteString(`\s+`)
			t = strings.TrimLeft(t, " ")
		default:
			i := strings.IndexAny(t, "{ ")
			if i <= 0 {
				i = len(t)
				if j := strings.IndexAny(t[1:], "{ "); j >= 0 {
					i = j + 1
				}
			}
			b.WriteString(regexp.QuoteMeta(t[:i]))
			t = t[i:]
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// parseValues turns captured groups into numbers: numbers as such (a Unicode minus accepted), True/False as
// 1/0, a bracketed list as its elements in order.
func parseValues(groups []string) []float64 {
	var vals []float64
	for _, g := range groups {
		g = strings.TrimSpace(strings.ReplaceAll(g, "−", "-"))
		switch strings.ToLower(g) {
		case "-": // a step that never came
			vals = append(vals, math.Inf(1))
			continue
		case "true":
			vals = append(vals, 1)
			continue
		case "false":
			vals = append(vals, 0)
			continue
		}
		if f, err := strconv.ParseFloat(g, 64); err == nil {
			vals = append(vals, f)
			continue
		}
		for _, part := range strings.FieldsFunc(g, func(r rune) bool { return r == ',' || r == ' ' }) {
			if f, err := strconv.ParseFloat(part, 64); err == nil {
				vals = append(vals, f)
			} else {
				vals = append(vals, math.NaN())
			}
		}
	}
	return vals
}
