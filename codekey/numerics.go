package codekey

import "strings"

// Numerical is a value whose results depend on more than code and values: on the numerics it computes with (a
// backend, the processor its code is compiled for, flags read when it was made), which it describes in one line.
// A key holds the description of every Numerical value among its parts or reached through them, and reads
// nothing else of such a value but what it writes of itself (io.WriterTo: a model's weights).
type Numerical interface{ NumericsKey() string }

// numericsDirective marks a package whose results depend on the numerics of the values they are computed with:
// a key whose code reaches such a package and holds no Numerical value is refused. The directive is a line
// comment of its own above the package clause of one of the package's files.
const numericsDirective = "//codekey:numerics"

// declaresNumerics reports whether a file's comments hold the directive.
func declaresNumerics(comments []string) bool {
	for _, c := range comments {
		if strings.TrimSpace(c) == numericsDirective {
			return true
		}
	}
	return false
}
