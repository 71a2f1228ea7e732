package gomlxmodel

import goembed "embed"

// Source holds the package's Go files (tests included; a user skips them), embedded when the program is built:
// agentrl hashes the library's code into the key of every cached result.
//
//go:embed *.go
var Source goembed.FS
