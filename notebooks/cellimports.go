//go:build tools

// The notebooks' cells import packages that no package of this module imports: GoNB resolves a cell's imports
// through the workspace its first cell makes (`go work use`) and, under `%noautoget`, never fetches a module
// itself, so the module must require them, and go.sum must hold their sums. This file, which no build compiles,
// keeps them there when `go mod tidy` runs (tidy reads every build tag). TestCellImportsAreRequired fails when a
// cell imports a package from outside the module that is not listed here.

package notebooks

import (
	_ "github.com/janpfeifer/gonb/gonbui"
)
