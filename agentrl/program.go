package agentrl

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The BugFix programs are written in a tiny Python-like language, one statement per line, blocks by indentation,
// and every token separated by a space (so the word-level tokenizer sees the program exactly):
//
//	def tally ( vals ) :
//	  total = 0
//	  for v in vals :
//	    if v > 3 :
//	      total = total + v
//	  return total
//
// Statements: "def NAME ( NAME ) :" (first line only), "NAME = EXPR", "for NAME in EXPR :", "if EXPR :",
// "return EXPR". Expressions: integer literals, names, slices "NAME [ INT : ]", parentheses, + - * and the
// comparisons > >= < <= == (1 for true, 0 for false). A program is a function of one list of integers that returns an
// integer; RunProgram evaluates it. Every program of the gym has the same five repair sites (init, loop, condition, update,
// return), so every repair op applies to every program, and a wrong op adds a second bug.

// maxSteps bounds the statements one RunProgram may execute (no program of the gym comes close).
const maxSteps = 10000

type value struct {
	list  []int
	n     int
	isSeq bool
}

type stmt struct {
	kind string   // "assign", "for", "if", "return"
	name string   // assign target or loop variable
	expr []string // right-hand side, iterable, condition or returned expression
	body []stmt
}

type srcLine struct {
	indent int
	toks   []string
}

func splitLines(source string) []srcLine {
	var out []srcLine
	for _, raw := range strings.Split(source, "\n") {
		toks := strings.Fields(raw)
		if len(toks) == 0 {
			continue
		}
		out = append(out, srcLine{indent: len(raw) - len(strings.TrimLeft(raw, " \t")), toks: toks})
	}
	return out
}

// RunProgram evaluates the one-function program source on the list xs and returns its integer result.
func RunProgram(source string, xs []int) (int, error) {
	lines := splitLines(source)
	if len(lines) < 2 {
		return 0, errors.New("program: no function body")
	}
	h := lines[0].toks
	if len(h) != 6 || h[0] != "def" || h[2] != "(" || h[4] != ")" || h[5] != ":" || !isName(h[1]) || !isName(h[3]) {
		return 0, fmt.Errorf("program: bad header %q", strings.Join(h, " "))
	}
	body, next, err := parseBlock(lines, 1, lines[1].indent)
	if err != nil {
		return 0, err
	}
	if lines[1].indent <= lines[0].indent || next != len(lines) {
		return 0, errors.New("program: bad indentation")
	}
	in := &interp{vars: map[string]value{h[3]: {list: append([]int(nil), xs...), isSeq: true}}}
	v, returned, err := in.exec(body)
	if err != nil {
		return 0, err
	}
	if !returned || v.isSeq {
		return 0, errors.New("program: no integer returned")
	}
	return v.n, nil
}

func parseBlock(lines []srcLine, i, indent int) ([]stmt, int, error) {
	var out []stmt
	for i < len(lines) && lines[i].indent >= indent {
		l := lines[i]
		if l.indent != indent {
			return nil, i, fmt.Errorf("program: line %d: unexpected indent", i+1)
		}
		t := l.toks
		var s stmt
		switch {
		case t[0] == "return" && len(t) > 1:
			s = stmt{kind: "return", expr: t[1:]}
		case t[0] == "for" && len(t) >= 5 && isName(t[1]) && t[2] == "in" && t[len(t)-1] == ":":
			s = stmt{kind: "for", name: t[1], expr: t[3 : len(t)-1]}
		case t[0] == "if" && len(t) >= 3 && t[len(t)-1] == ":":
			s = stmt{kind: "if", expr: t[1 : len(t)-1]}
		case len(t) >= 3 && isName(t[0]) && t[1] == "=":
			s = stmt{kind: "assign", name: t[0], expr: t[2:]}
		default:
			return nil, i, fmt.Errorf("program: line %d: cannot parse %q", i+1, strings.Join(t, " "))
		}
		i++
		if s.kind == "for" || s.kind == "if" {
			if i >= len(lines) || lines[i].indent <= indent {
				return nil, i, fmt.Errorf("program: line %d: empty block", i)
			}
			body, next, err := parseBlock(lines, i, lines[i].indent)
			if err != nil {
				return nil, next, err
			}
			s.body, i = body, next
		}
		out = append(out, s)
	}
	return out, i, nil
}

var keywords = map[string]bool{"def": true, "for": true, "in": true, "if": true, "return": true}

func isName(s string) bool {
	if s == "" || keywords[s] {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

type interp struct {
	vars  map[string]value
	steps int
}

func (in *interp) exec(block []stmt) (value, bool, error) {
	for _, s := range block {
		if in.steps++; in.steps > maxSteps {
			return value{}, false, errors.New("program: step limit")
		}
		v, err := in.eval(s.expr)
		if err != nil {
			return value{}, false, err
		}
		switch s.kind {
		case "return":
			return v, true, nil
		case "assign":
			in.vars[s.name] = v
		case "if":
			if v.isSeq {
				return value{}, false, errors.New("program: list used as condition")
			}
			if v.n != 0 {
				if r, ok, err := in.exec(s.body); err != nil || ok {
					return r, ok, err
				}
			}
		case "for":
			if !v.isSeq {
				return value{}, false, errors.New("program: loop over an integer")
			}
			for _, x := range v.list {
				in.vars[s.name] = value{n: x}
				if r, ok, err := in.exec(s.body); err != nil || ok {
					return r, ok, err
				}
			}
		}
	}
	return value{}, false, nil
}

// eval evaluates an expression by precedence climbing: comparisons < additive < multiplicative < atoms.
func (in *interp) eval(toks []string) (value, error) {
	p := &parser{toks: toks, in: in}
	v, err := p.cmp()
	if err == nil && p.pos != len(toks) {
		err = fmt.Errorf("program: unexpected %q", toks[p.pos])
	}
	return v, err
}

type parser struct {
	toks []string
	pos  int
	in   *interp
}

func (p *parser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *parser) cmp() (value, error) {
	a, err := p.sum()
	if err != nil {
		return a, err
	}
	op := p.peek()
	switch op {
	case ">", ">=", "<", "<=", "==":
	default:
		return a, nil
	}
	p.pos++
	b, err := p.sum()
	if err != nil {
		return b, err
	}
	if a.isSeq || b.isSeq {
		return value{}, errors.New("program: comparison of a list")
	}
	var r bool
	switch op {
	case ">":
		r = a.n > b.n
	case ">=":
		r = a.n >= b.n
	case "<":
		r = a.n < b.n
	case "<=":
		r = a.n <= b.n
	case "==":
		r = a.n == b.n
	}
	if r {
		return value{n: 1}, nil
	}
	return value{n: 0}, nil
}

func (p *parser) sum() (value, error) {
	a, err := p.product()
	for err == nil && (p.peek() == "+" || p.peek() == "-") {
		op := p.toks[p.pos]
		p.pos++
		var b value
		if b, err = p.product(); err != nil {
			break
		}
		if a.isSeq || b.isSeq {
			return value{}, errors.New("program: arithmetic on a list")
		}
		if op == "+" {
			a.n += b.n
		} else {
			a.n -= b.n
		}
	}
	return a, err
}

func (p *parser) product() (value, error) {
	a, err := p.atom()
	for err == nil && p.peek() == "*" {
		p.pos++
		var b value
		if b, err = p.atom(); err != nil {
			break
		}
		if a.isSeq || b.isSeq {
			return value{}, errors.New("program: arithmetic on a list")
		}
		a.n *= b.n
	}
	return a, err
}

func (p *parser) atom() (value, error) {
	t := p.peek()
	p.pos++
	if t == "(" {
		v, err := p.cmp()
		if err == nil && p.peek() != ")" {
			err = errors.New("program: missing )")
		}
		p.pos++
		return v, err
	}
	if n, err := strconv.Atoi(t); err == nil {
		return value{n: n}, nil
	}
	if !isName(t) {
		return value{}, fmt.Errorf("program: unexpected %q", t)
	}
	v, ok := p.in.vars[t]
	if !ok {
		return value{}, fmt.Errorf("program: undefined %q", t)
	}
	if p.peek() == "[" { // slice NAME [ INT : ]
		if p.pos+3 >= len(p.toks) {
			return value{}, errors.New("program: bad slice")
		}
		start, err := strconv.Atoi(p.toks[p.pos+1])
		if err != nil || p.toks[p.pos+2] != ":" || p.toks[p.pos+3] != "]" || !v.isSeq || start < 0 {
			return value{}, errors.New("program: bad slice")
		}
		p.pos += 4
		if start > len(v.list) {
			start = len(v.list)
		}
		return value{list: v.list[start:], isSeq: true}, nil
	}
	return v, nil
}

// CompactSource is arl.compact_source: the "read" projection of a source, the text a read call returns. It drops
// indentation and blank lines and keeps one statement per line, so a 6-line program reads as about 31 tokens.
func CompactSource(source string) string {
	lines := splitLines(source)
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.Join(l.toks, " ")
	}
	return strings.Join(out, "\n")
}

// The repair ops. Each op toggles one site of the program between its correct and its buggy form, so applying the
// op that injected the bug repairs it, and applying any other op breaks a correct site.
const (
	OpComparison = "fix_comparison" // condition: strict > and < are correct; >= and <= are the bug
	OpOffByOne   = "fix_off_by_one" // loop: "for x in xs :" is correct; "for x in xs [ 1 : ] :" skips the first item
	OpInit       = "fix_init"       // accumulator: "acc = 0" is correct; "acc = 1" is the bug
	OpOperator   = "fix_operator"   // update: "acc = acc + e" is correct; "acc = acc - e" is the bug
	OpReturn     = "fix_return"     // result: "return acc" is correct; "return 0" is the bug
)

// Ops returns the repair ops in a fixed order (a new slice on each call); an edit call names one of them.
func Ops() []string { return slices.Clone(repairOps[:]) }

// repairOps is Ops.
var repairOps = [...]string{OpComparison, OpOffByOne, OpInit, OpOperator, OpReturn}

func isOp(s string) bool { return slices.Contains(repairOps[:], s) }

// site locates the five repair sites of a program: the line indices of the init, loop, condition, update and return
// statements (-1 when absent) and the accumulator's name.
type site struct {
	init, loop, cond, update, ret int
	acc                           string
}

func findSites(lines []srcLine) site {
	s := site{init: -1, loop: -1, cond: -1, update: -1, ret: -1}
	for i, l := range lines {
		t := l.toks
		switch {
		case t[0] == "for" && s.loop < 0:
			s.loop = i
		case t[0] == "if" && s.cond < 0:
			s.cond = i
		case t[0] == "return" && s.ret < 0:
			s.ret = i
		case len(t) == 3 && t[1] == "=" && s.init < 0:
			s.init, s.acc = i, t[0]
		case len(t) >= 5 && t[1] == "=" && t[0] == t[2] && (t[3] == "+" || t[3] == "-") && s.update < 0:
			s.update = i
		}
	}
	return s
}

// ApplyOp applies the repair op to source and returns the edited source, keeping indentation. It fails for an
// unknown op or when the program has no site for the op.
func ApplyOp(source, op string) (string, error) {
	lines := splitLines(source)
	s := findSites(lines)
	toggle := func(i int, f func(t []string) []string) (string, error) {
		if i < 0 {
			return "", fmt.Errorf("apply %s: no site", op)
		}
		lines[i].toks = f(append([]string(nil), lines[i].toks...))
		out := make([]string, len(lines))
		for j, l := range lines {
			out[j] = strings.Repeat(" ", l.indent) + strings.Join(l.toks, " ")
		}
		return strings.Join(out, "\n"), nil
	}
	swap := map[string]string{">": ">=", ">=": ">", "<": "<=", "<=": "<", "+": "-", "-": "+", "0": "1", "1": "0"}
	switch op {
	case OpComparison:
		return toggle(s.cond, func(t []string) []string {
			for i, w := range t {
				if w == ">" || w == ">=" || w == "<" || w == "<=" {
					t[i] = swap[w]
					break
				}
			}
			return t
		})
	case OpOffByOne:
		return toggle(s.loop, func(t []string) []string {
			if n := len(t); n >= 9 && strings.Join(t[n-5:n-1], " ") == "[ 1 : ]" {
				return append(t[:n-5], ":")
			}
			return append(t[:len(t)-1], "[", "1", ":", "]", ":")
		})
	case OpInit:
		return toggle(s.init, func(t []string) []string {
			if r, ok := swap[t[2]]; ok && (t[2] == "0" || t[2] == "1") {
				t[2] = r
			}
			return t
		})
	case OpOperator:
		return toggle(s.update, func(t []string) []string { t[3] = swap[t[3]]; return t })
	case OpReturn:
		return toggle(s.ret, func(t []string) []string {
			if len(t) == 2 && t[1] == "0" {
				return []string{"return", s.acc}
			}
			return []string{"return", "0"}
		})
	}
	return "", fmt.Errorf("apply: unknown op %q", op)
}

// InferOp is arl.infer_op, the oracle: it names the repair op for a buggy source (the full source or its compact
// read projection) from the bug's local cue, and fails when no cue, or more than one, is present.
func InferOp(source string) (string, error) {
	lines := splitLines(source)
	s := findSites(lines)
	var found []string
	if s.cond >= 0 && slices.ContainsFunc(lines[s.cond].toks, func(w string) bool { return w == ">=" || w == "<=" }) {
		found = append(found, OpComparison)
	}
	if s.loop >= 0 && strings.Contains(strings.Join(lines[s.loop].toks, " "), "[ 1 : ]") {
		found = append(found, OpOffByOne)
	}
	if s.init >= 0 && lines[s.init].toks[2] == "1" {
		found = append(found, OpInit)
	}
	if s.update >= 0 && lines[s.update].toks[3] == "-" {
		found = append(found, OpOperator)
	}
	if s.ret >= 0 && strings.Join(lines[s.ret].toks, " ") == "return 0" {
		found = append(found, OpReturn)
	}
	if len(found) != 1 {
		return "", fmt.Errorf("infer op: %d bug cues found %v", len(found), found)
	}
	return found[0], nil
}
