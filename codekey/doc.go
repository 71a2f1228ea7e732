// Package codekey names results by what computes them: the library's code (Version), the numerics, and the value
// of everything a computation is given (Of, Key). A stored result is found again only under the key of the same
// computation, and a computation whose inputs cannot all be read off its value is refused before it runs.
package codekey
