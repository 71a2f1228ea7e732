package agentrl

import (
	"strings"
	"testing"
)

func TestRunProgram(t *testing.T) {
	src := "def f ( xs ) :\n  n = 0\n  for x in xs [ 1 : ] :\n    if x * 2 >= ( 3 + 1 ) :\n      n = n + x - 1\n  return n"
	for _, c := range []struct {
		xs   []int
		want int
	}{{nil, 0}, {[]int{9}, 0}, {[]int{9, 1, 2, 5}, 1 + 4}, {[]int{0, 2}, 1}} {
		got, err := RunProgram(src, c.xs)
		if err != nil || got != c.want {
			t.Errorf("Run(%v) = %d, %v; want %d", c.xs, got, err, c.want)
		}
	}
	for _, bad := range []string{
		"", "def f ( xs ) :", "def f ( xs )\n  return 1", "def f ( xs ) :\n  return xs",
		"def f ( xs ) :\n  return y", "def f ( xs ) :\n  for x in 3 :\n    return x", "def f ( xs ) :\n  if 1 :\n  return 1",
		"def f ( xs ) :\n  return ( 1", "def f ( xs ) :\n  return xs [ 1", "def f ( xs ) :\n  n = 0\n    return n",
		"def f ( xs ) :\n  return 1 +", "def f ( xs ) :\n  return xs [ a : ]", "def f ( xs ) :\n  n = 1\n", "def f ( xs ) :\n  return <unk>",
	} {
		if got, err := RunProgram(bad, []int{1, 2}); err == nil {
			t.Errorf("Run(%q) = %d, want an error", bad, got)
		}
	}
}

func TestCompactSource(t *testing.T) {
	for _, task := range mustTasks(t, SplitAll) {
		c := CompactSource(task.Source)
		if strings.Contains(c, "  ") || strings.Count(c, "\n") != 5 {
			t.Errorf("%s: compact source %q", task.Name, c)
		}
	}
}

func TestApplyOpErrors(t *testing.T) {
	if _, err := ApplyOp("def f ( xs ) :\n  return 1", "fix_nothing"); err == nil {
		t.Error("unknown op: no error")
	}
	if _, err := ApplyOp("def f ( xs ) :\n  return 1", OpComparison); err == nil {
		t.Error("no comparison site: no error")
	}
	if _, err := InferOp("def f ( xs ) :\n  return 1"); err == nil {
		t.Error("InferOp without a cue: no error")
	}
}
