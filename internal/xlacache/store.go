//codekey:reads its folder of compiled executables and the clock: a loaded executable is the one compiled, bit for bit

// Package xlacache keeps XLA executables compiled by a PJRT plugin in a folder, so that a later process that
// compiles the same program with the same plugin, processor and settings loads the executable instead of
// compiling it again.
//
// An entry is keyed by the SHA-256 of the store's identity (which the caller makes name everything, outside
// the program, that decides the code the plugin generates: the plugin build, the processor, XLA_FLAGS) and of
// the program exactly as the plugin is asked to compile it: its format, its bytes and its serialized compile
// options. An executable is therefore only ever served to a request that would have compiled it from the same
// inputs under the same identity. Entries are written atomically (a temporary file renamed into place) and
// carry a checksum of their contents; an entry that fails the checksum, or that the plugin refuses to load, is
// removed and its program compiled again.
//
// A store may be bounded (SetLimit): before an entry is written, the least recently used entries are removed
// until the folder, with the new entry, fits the bound. An entry is used when it is written or loaded (Load
// sets its modification time), so the order is the order of last use across all processes sharing the folder.
package xlacache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// formatVersion names the layout of keys and entries; changing either changes it.
const formatVersion = "agentrl-xlacache-1"

// magic starts every entry file.
var magic = []byte(formatVersion + "\n")

// Store is a folder of serialized executables.
type Store struct {
	dir      string
	identity string
	limit    int64     // the most bytes the folder's entries may take; <= 0: no bound
	traceTo  io.Writer // where loads and compilations are traced (SetTrace); nil: nowhere
}

// NewStore returns the store in dir (created on first write) for executables compiled under identity.
func NewStore(dir, identity string) *Store {
	return &Store{dir: dir, identity: identity}
}

// Dir returns the store's folder.
func (s *Store) Dir() string { return s.dir }

// SetLimit bounds the bytes that the files in the store's folder take (entries as written, headers included,
// and unfinished writes); limit <= 0 removes the bound. It returns s.
func (s *Store) SetLimit(limit int64) *Store {
	s.limit = limit
	return s
}

// ErrTooLarge is returned by Save for an entry that alone exceeds the store's bound; it is not written.
var ErrTooLarge = errors.New("xlacache: entry larger than the store's bound")

// Key returns the key of a program: the hex SHA-256 of the store's identity, the program's format and code,
// and its serialized compile options, each length-prefixed.
func (s *Store) Key(format, code, options []byte) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(formatVersion), []byte(s.identity), format, code, options} {
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (s *Store) path(key string) string {
	return filepath.Join(s.dir, key[:2], key)
}

// Load returns the executable stored under key. found reports whether an entry exists; err, with found, that it
// is unreadable or fails its checksum.
func (s *Store) Load(key string) (data []byte, found bool, err error) {
	raw, err := os.ReadFile(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	if !bytes.HasPrefix(raw, magic) || len(raw) < len(magic)+sha256.Size {
		return nil, true, fmt.Errorf("xlacache: entry %s: bad header", key)
	}
	sum, data := raw[len(magic):len(magic)+sha256.Size], raw[len(magic)+sha256.Size:]
	if got := sha256.Sum256(data); !bytes.Equal(got[:], sum) {
		return nil, true, fmt.Errorf("xlacache: entry %s: checksum mismatch", key)
	}
	now := time.Now()
	_ = os.Chtimes(s.path(key), now, now) // the entry is now the most recently used
	return data, true, nil
}

// Save writes data under key atomically: readers see the whole entry or none. In a bounded store it first
// removes the least recently used files until the new entry fits, and refuses (ErrTooLarge) an entry larger
// than the bound.
func (s *Store) Save(key string, data []byte) error {
	if s.limit > 0 {
		size := int64(len(magic) + sha256.Size + len(data))
		if size > s.limit {
			return ErrTooLarge
		}
		s.makeRoom(s.limit-size, s.path(key))
	}
	dir := filepath.Dir(s.path(key))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".partial-*")
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	_, err = tmp.Write(magic)
	if err == nil {
		_, err = tmp.Write(sum[:])
	}
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.path(key))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// Remove deletes the entry under key, if any.
func (s *Store) Remove(key string) {
	_ = os.Remove(s.path(key))
}

// makeRoom removes the least recently used files of the store (by modification time; the file at replaced,
// which the caller is about to overwrite, counts as gone) until the rest take at most budget bytes. Files that
// vanish meanwhile (removed by another process) are skipped.
func (s *Store) makeRoom(budget int64, replaced string) {
	type file struct {
		path string
		size int64
		used time.Time
	}
	var files []file
	var total int64
	shards, _ := os.ReadDir(s.dir)
	for _, shard := range shards {
		if !shard.IsDir() {
			continue
		}
		entries, _ := os.ReadDir(filepath.Join(s.dir, shard.Name()))
		for _, e := range entries {
			info, err := e.Info()
			if err != nil || !info.Mode().IsRegular() || strings.HasSuffix(e.Name(), lockSuffix) {
				continue
			}
			p := filepath.Join(s.dir, shard.Name(), e.Name())
			if p == replaced {
				continue
			}
			files = append(files, file{p, info.Size(), info.ModTime()})
			total += info.Size()
		}
	}
	if total <= budget {
		return
	}
	slices.SortFunc(files, func(a, b file) int { return a.used.Compare(b.used) })
	for _, f := range files {
		if total <= budget {
			break
		}
		if err := os.Remove(f.path); err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= f.size
		}
	}
}
