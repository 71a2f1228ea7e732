package gomlxmodel

import (
	goembed "embed"
	"io/fs"
)

// source holds the package's Go files (tests included; a user skips them), embedded when the program is built.
//
//go:embed *.go
var source goembed.FS

// Source returns the package's Go files (tests included; a user skips them), embedded when the program is built:
// agentrl hashes the library's code into the key of every cached result.
func Source() fs.FS { return source }
