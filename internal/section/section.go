// Package section orders the chapter's section numbers, for the notebook harness and the book-vs-run report alike.
package section

import (
	"strconv"
	"strings"
)

// Compare orders section numbers part by part, numerically where both parts are numbers: "12.2" before "12.10".
// It returns a negative number when a comes first, a positive one when b does, and 0 when they are equal.
func Compare(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range min(len(pa), len(pb)) {
		x, errx := strconv.Atoi(pa[i])
		y, erry := strconv.Atoi(pb[i])
		switch {
		case errx != nil || erry != nil:
			if c := strings.Compare(pa[i], pb[i]); c != 0 {
				return c
			}
		case x != y:
			return x - y
		}
	}
	return len(pa) - len(pb)
}
