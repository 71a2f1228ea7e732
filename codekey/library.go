package codekey

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"io/fs"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// The library is the code that computes every stored result: the packages agentrl and gomlxmodel, outside their
// tests. Its code is in every key as one hash (Version); the engine around it (the store, this package, the stored
// runs) can only load, save and report, and is in no key.

// libraries names each library package and its embedded Go files.
var libraries = map[string]fs.FS{"agentrl": agentrl.Source(), "gomlxmodel": gomlxmodel.Source()}

// Version is a hash of the library's code: the tokens of every Go file of agentrl and gomlxmodel (embedded when
// the program is built), tests excluded, with local names read as their order of declaration. It is part of every
// key, so any edit of the library's code makes the results computed by the old code unusable, while an edit of its
// comments, its layout or a local name keeps them.
func Version() string { return version() }

var version = sync.OnceValue(func() string {
	names := make([]string, 0, len(libraries))
	for name := range libraries {
		names = append(names, name)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, pkg := range names {
		for _, file := range goFiles(libraries[pkg]) {
			s := mustParseEmbedded(pkg, file)
			fmt.Fprintf(h, "%s/%s\x00", pkg, file)
			for _, d := range s.file.Decls {
				s.writeDecl(h, d, "")
				h.Write([]byte{0xfe})
			}
			h.Write([]byte{0xff})
		}
	}
	return "agentrl-" + hex.EncodeToString(h.Sum(nil))[:16]
})

// mustParseEmbedded parses the embedded file of a library package, once per process; the package compiled, so it
// parses.
func mustParseEmbedded(pkg, file string) *source {
	if s, ok := parsed.Load("embedded:" + pkg + "/" + file); ok {
		return s.(*source)
	}
	src, err := fs.ReadFile(libraries[pkg], file)
	if err != nil {
		panic(fmt.Sprintf("codekey: embedded %s/%s: %v", pkg, file, err))
	}
	s, err := parseSource(file, src)
	if err != nil {
		panic(fmt.Sprintf("codekey: embedded %s/%s: %v", pkg, file, err))
	}
	parsed.Store("embedded:"+pkg+"/"+file, s)
	return s
}

// libraryDirs maps the directory of each library package, as the runtime names source files, to its name.
var libraryDirs = sync.OnceValue(func() map[string]string {
	dirs := map[string]string{}
	for pkg, f := range map[string]any{"agentrl": agentrl.NewRNG, "gomlxmodel": gomlxmodel.ReadModel} {
		pc := reflect.ValueOf(f).Pointer()
		file, _ := runtime.FuncForPC(pc).FileLine(pc)
		dirs[filepath.Dir(file)] = pkg
	}
	return dirs
})

// libraryPackage is the library package whose non-test code file is, as the runtime names a function's source
// file, or "". (A function's name does not tell: a closure of a library function inlined elsewhere is named after
// the function it was inlined into.)
func libraryPackage(file string) string {
	if strings.HasSuffix(file, "_test.go") {
		return ""
	}
	return libraryDirs()[filepath.Dir(file)]
}

// sourceOf parses the file that holds code the runtime places in file: a library file from the embedded sources,
// any other from disk (a notebook's cell program, a program built from the repository without -trimpath).
func sourceOf(file string) (*source, error) {
	if pkg := libraryPackage(file); pkg != "" {
		return mustParseEmbedded(pkg, filepath.Base(file)), nil
	}
	if !strings.HasSuffix(file, ".go") {
		return nil, fmt.Errorf("%s is not a Go source file", file)
	}
	s, err := parseFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w (the source of code outside the library is needed to key what it computes: a program built with -trimpath has none)", err)
	}
	return s, nil
}

// agentrlDecls maps each top-level name of agentrl's code (tests excluded) to the hashes of its declarations.
var agentrlDecls = sync.OnceValue(func() map[string]map[string]bool {
	decls := map[string]map[string]bool{}
	for _, file := range goFiles(libraries["agentrl"]) {
		s := mustParseEmbedded("agentrl", file)
		for name, nodes := range s.decls {
			for _, n := range nodes {
				if decls[name] == nil {
					decls[name] = map[string]bool{}
				}
				decls[name][s.declHash(n, "")] = true
			}
		}
	}
	return decls
})

// showsLibrary reports whether every declaration of decls is, token for token, a declaration of agentrl with the
// same name, read with "agentrl." qualifiers removed: a notebook's copy of the library's #@save code.
func (s *source) showsLibrary(decls []ast.Node) bool {
	lib := agentrlDecls()
	for _, d := range decls {
		name := s.nameOf(d)
		if name == "" || !lib[name][s.declHash(d, "agentrl")] {
			return false
		}
	}
	return true
}
