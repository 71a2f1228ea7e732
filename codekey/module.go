package codekey

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	goparser "go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The code of a key. A result is computed by the code of the package that keys it (the caller of Key) and of the
// packages of its parts' types and functions, and by everything those packages import. Of that code, the packages
// whose source is on disk in a module outside the module cache and GOROOT (this repository's packages, a module a
// reader works on) are read from disk and hashed, the whole package outside its tests; the packages of the module
// cache are pinned by the go.mod and go.sum of the modules that import them; the standard library by the Go
// version. The packages are found from the import graph on disk, so no list names them: a new package, a new file
// or a new import joins every key whose code reaches it.

// module is a Go module whose source is on disk: its root directory (with go.mod), its path, and the modules its
// go.mod replaces by directories (a module path → its directory).
type module struct {
	root, path string
	replaced   map[string]string
}

// importDir is the directory on disk of the package importPath that code of m imports: one of m's, or of a module
// m's go.mod replaces by a directory; "" for any other.
func (m *module) importDir(importPath string) string {
	if d := m.dirOf(importPath); d != "" {
		return d
	}
	for path, dir := range m.replaced {
		if importPath == path || strings.HasPrefix(importPath, path+"/") {
			if r := moduleOf(dir); r != nil {
				return r.dirOf(r.path + strings.TrimPrefix(importPath, path))
			}
		}
	}
	return ""
}

// dirOf is the directory of the package importPath of m, or "" when m does not hold it.
func (m module) dirOf(importPath string) string {
	switch {
	case importPath == m.path:
		return m.root
	case strings.HasPrefix(importPath, m.path+"/"):
		return filepath.Join(m.root, filepath.FromSlash(strings.TrimPrefix(importPath, m.path+"/")))
	}
	return ""
}

// importPath is the import path of the package in dir, a directory of m.
func (m module) importPath(dir string) string {
	rel, err := filepath.Rel(m.root, dir)
	if err != nil || rel == "." {
		return m.path
	}
	return m.path + "/" + filepath.ToSlash(rel)
}

var (
	modulesMu sync.Mutex
	modules   = map[string]*module{} // a directory → the module that holds it (nil: none on disk)
)

// moduleOf is the module on disk that holds dir, or nil when dir is in GOROOT, in the module cache, or in no
// module.
func moduleOf(dir string) *module {
	modulesMu.Lock()
	defer modulesMu.Unlock()
	if m, ok := modules[dir]; ok {
		return m
	}
	m := findModule(dir)
	modules[dir] = m
	return m
}

func findModule(dir string) *module {
	if !filepath.IsAbs(dir) || inGoroot(dir) {
		return nil
	}
	for d := dir; ; d = filepath.Dir(d) {
		if strings.Contains(filepath.Base(d), "@") {
			return nil // the module cache names a module's directory path@version
		}
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			path := modulePath(data)
			if path == "" {
				return nil
			}
			return &module{root: d, path: path, replaced: replacedDirs(data, d)}
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// modulePath is the module path a go.mod file declares, or "".
func modulePath(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			path := strings.TrimSpace(rest)
			if unq, err := strconv.Unquote(path); err == nil {
				path = unq
			}
			return path
		}
	}
	return ""
}

// replacedDirs are the modules that the go.mod file gomod, in the directory root, replaces by directories.
func replacedDirs(gomod []byte, root string) map[string]string {
	dirs := map[string]string{}
	block := false
	for _, line := range strings.Split(string(gomod), "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case line == "replace (":
			block = true
			continue
		case block && line == ")":
			block = false
			continue
		case !block && strings.HasPrefix(line, "replace "):
			line = strings.TrimPrefix(line, "replace ")
		case !block:
			continue
		}
		from, to, ok := strings.Cut(line, "=>")
		if !ok {
			continue
		}
		old, target := strings.Fields(from), strings.Fields(to)
		if len(old) == 0 || len(target) != 1 { // a module version (path version) is not a directory
			continue
		}
		dir := target[0]
		if !strings.HasPrefix(dir, "./") && !strings.HasPrefix(dir, "../") && !filepath.IsAbs(dir) {
			continue
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		dirs[old[0]] = filepath.Clean(dir)
	}
	return dirs
}

// goroot is the directory of the standard library's sources, as the runtime names their files.
var goroot = sync.OnceValue(func() string {
	pc := reflect.ValueOf(strings.ToUpper).Pointer()
	file, _ := runtime.FuncForPC(pc).FileLine(pc)
	return filepath.Dir(filepath.Dir(file)) // GOROOT/src/strings/strings.go → GOROOT/src
})

func inGoroot(dir string) bool {
	src := goroot()
	return dir == src || strings.HasPrefix(dir, src+string(filepath.Separator))
}

// pkgCode is what a key holds of one package on disk.
type pkgCode struct {
	hash     string   // of its files' tokens, tests excluded, and of the files it embeds
	numerics bool     // one of its files carries numericsDirective
	reads    []string // what its code reads of the process's surroundings (readsDirective's calls), sorted
	declared bool     // one of its files carries readsDirective: what it reads is said not to decide its results
	imports  []string // the import paths of its files
	files    []string // the files it was read from
	err      error
}

var (
	packagesMu sync.Mutex
	packages   = map[string]*pkgCode{} // a package's directory → its code, read once per process
)

// packageCode reads and hashes the package in dir, once per process, and fails where the package changed on disk
// since this program started: the program's code is then not the disk's. (A package read before such a change keeps
// the code it was read with: the program's.)
func packageCode(dir string) *pkgCode {
	packagesMu.Lock()
	defer packagesMu.Unlock()
	if p, ok := packages[dir]; ok {
		return p
	}
	p := readPackage(dir)
	if p.err == nil {
		if err := unchanged(dir, p); err != nil {
			p = &pkgCode{err: err}
		}
	}
	packages[dir] = p
	return p
}

// readPackage hashes the Go files of the package in dir outside its tests (every build constraint's: a key does
// not depend on the platform that computes it, the numerics say that) by their tokens, so comments and layout are
// not code, and every file they embed by its bytes.
func readPackage(dir string) *pkgCode {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return &pkgCode{err: err}
	}
	h := sha256.New()
	p := &pkgCode{}
	seen := map[string]bool{}
	var embedded []string
	for _, file := range files { // sorted by Glob
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		if err != nil {
			return &pkgCode{err: err}
		}
		p.note(file)
		f, err := goparser.ParseFile(token.NewFileSet(), file, src, goparser.ParseComments|goparser.SkipObjectResolution)
		if err != nil {
			return &pkgCode{err: err}
		}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				p.numerics = p.numerics || declaresNumerics([]string{c.Text})
				p.declared = p.declared || strings.HasPrefix(c.Text, readsDirective+" ")
			}
		}
		for _, r := range surroundingsRead(f) {
			if !slices.Contains(p.reads, r) {
				p.reads = append(p.reads, r)
			}
		}
		for _, im := range f.Imports {
			if path, err := strconv.Unquote(im.Path.Value); err == nil && !seen[path] {
				seen[path] = true
				p.imports = append(p.imports, path)
			}
		}
		fmt.Fprintf(h, "%s\x00", filepath.Base(file))
		writeTokens(h, src, "", nil)
		h.Write([]byte{0xff})
		embedded = append(embedded, embedPatterns(src)...)
	}
	if err := p.hashEmbedded(h, dir, embedded); err != nil {
		return &pkgCode{err: err}
	}
	sort.Strings(p.imports)
	sort.Strings(p.reads)
	p.hash = hex.EncodeToString(h.Sum(nil))
	return p
}

// note records that the package was read from file.
func (p *pkgCode) note(file string) { p.files = append(p.files, file) }

// embedPatterns are the patterns of the //go:embed directives of the Go source src.
func embedPatterns(src []byte) []string {
	var pats []string
	for _, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "//go:embed "); ok {
			for _, f := range strings.Fields(rest) {
				if unq, err := strconv.Unquote(f); err == nil {
					f = unq
				}
				pats = append(pats, strings.TrimPrefix(f, "all:"))
			}
		}
	}
	return pats
}

// hashEmbedded writes the files that the patterns of a package in dir embed (a directory: every file under it).
func (p *pkgCode) hashEmbedded(h interface{ Write([]byte) (int, error) }, dir string, patterns []string) error {
	var files []string
	for _, pat := range patterns {
		matches, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(pat)))
		if err != nil {
			return fmt.Errorf("go:embed %s: %w", pat, err)
		}
		for _, m := range matches {
			err := filepath.WalkDir(m, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					files = append(files, path)
				}
				return err
			})
			if err != nil {
				return err
			}
		}
	}
	sort.Strings(files)
	for _, f := range slices.Compact(files) {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		p.note(f)
		sum := sha256.Sum256(data)
		rel, _ := filepath.Rel(dir, f)
		fmt.Fprintf(h, "embed %s %x\x00", filepath.ToSlash(rel), sum)
	}
	return nil
}

// codeOf is the code of the packages in roots (directories of packages on disk) and of every package on disk they
// import, transitively: a digest, the import paths of those packages in order, and their directories in that order.
// It fails where a package cannot be read, and where a file changed after this program was built (the program
// runs other code than the disk holds).
func codeOf(roots []string) (digest string, pkgs []string, reached []string, err error) {
	dirs := map[string]*module{}
	queue := slices.Clone(roots)
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		if _, ok := dirs[dir]; ok {
			continue
		}
		m := moduleOf(dir)
		if m == nil {
			continue
		}
		dirs[dir] = m
		p := packageCode(dir)
		if p.err != nil {
			return "", nil, nil, fmt.Errorf("the code of %s %w", m.importPath(dir), p.err)
		}
		for _, im := range p.imports {
			if d := m.importDir(im); d != "" {
				queue = append(queue, d)
			}
		}
	}
	byPath := map[string]string{}
	var mods []*module
	for dir, m := range dirs {
		path := m.importPath(dir)
		byPath[path] = dir
		pkgs = append(pkgs, path)
		if !slices.Contains(mods, m) {
			mods = append(mods, m)
		}
	}
	sort.Strings(pkgs)
	sort.Slice(mods, func(i, j int) bool { return mods[i].path < mods[j].path })
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", runtime.Version(), buildSettings())
	for _, m := range mods {
		for _, f := range []string{"go.mod", "go.sum"} {
			data, err := os.ReadFile(filepath.Join(m.root, f))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", nil, nil, err
			}
			fmt.Fprintf(h, "%s/%s\x00", m.path, f)
			h.Write(data)
			h.Write([]byte{0xff})
		}
	}
	for _, path := range pkgs {
		fmt.Fprintf(h, "%s\x00%s\x00", path, packageCode(byPath[path]).hash)
		reached = append(reached, byPath[path])
	}
	return hex.EncodeToString(h.Sum(nil))[:16], pkgs, reached, nil
}

// started is when this program started. A program computes with the code it was built from, which is the code on
// disk when it started (GoNB and go run build a program just before they start it, and do not build one again
// whose code is unchanged): a file modified after that is not the program's code.
var started = time.Now()

// unchanged returns an error, saying which file, when the package in dir that p read has a file modified or added
// since this program started.
func unchanged(dir string, p *pkgCode) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	var now []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			now = append(now, f)
		}
	}
	for _, f := range now {
		if !slices.Contains(p.files, f) {
			return fmt.Errorf("has a new file, %s, since this program started: run it again", filepath.Base(f))
		}
	}
	for _, f := range p.files {
		st, err := os.Stat(f)
		if err != nil {
			return fmt.Errorf("lost %s since this program started: run it again", filepath.Base(f))
		}
		if st.ModTime().After(started) {
			return fmt.Errorf("changed (%s) since this program started: run it again (a program computes with the "+
				"code it was built from)", filepath.Base(f))
		}
	}
	return nil
}

// buildSettings are the settings the running program was built with that decide its generated code (the target,
// the instruction-set level, cgo, build tags, compiler flags, the race detector), and the dependencies a go.work
// or -modfile replaced: neither shows in a module's go.mod.
var buildSettings = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "no build info"
	}
	var parts []string
	for _, s := range bi.Settings {
		switch {
		case strings.HasPrefix(s.Key, "GO"), s.Key == "CGO_ENABLED", s.Key == "-tags", s.Key == "-gcflags",
			s.Key == "-race", s.Key == "-msan", s.Key == "-asan":
			parts = append(parts, s.Key+"="+s.Value)
		}
	}
	for _, d := range bi.Deps {
		if d.Replace != nil {
			parts = append(parts, fmt.Sprintf("%s@%s=>%s@%s", d.Path, d.Version, d.Replace.Path, d.Replace.Version))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
})

// Code is the digest of the code that a key whose code reaches the packages importPaths (Keyed.Packages) holds, as
// the disk has it now: a stored result whose Keyed.Code differs was computed by other code. It fails where a
// package is not on disk.
func Code(importPaths []string) (string, error) {
	var dirs []string
	for _, p := range importPaths {
		d := resolve(p, nil)
		if d == "" {
			return "", fmt.Errorf("codekey: the package %s is not on disk", p)
		}
		dirs = append(dirs, d)
	}
	digest, _, _, err := codeOf(dirs)
	return digest, err
}
