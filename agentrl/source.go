package agentrl

import (
	"embed"
	"io/fs"
)

// source holds the package's Go files (tests included; a user skips them), embedded when the program is built.
//
//go:embed *.go
var source embed.FS

// Source returns the package's Go files (tests included; a user skips them), embedded when the program is built:
// the library's code is part of the key of every stored result.
func Source() fs.FS { return source }
