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
package xlacache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// formatVersion names the layout of keys and entries; changing either changes it.
const formatVersion = "agentrl-xlacache-1"

// magic starts every entry file.
var magic = []byte(formatVersion + "\n")

// Store is a folder of serialized executables.
type Store struct {
	dir      string
	identity string
}

// NewStore returns the store in dir (created on first write) for executables compiled under identity.
func NewStore(dir, identity string) *Store {
	return &Store{dir: dir, identity: identity}
}

// Dir returns the store's folder.
func (s *Store) Dir() string { return s.dir }

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
	return data, true, nil
}

// Save writes data under key atomically: readers see the whole entry or none.
func (s *Store) Save(key string, data []byte) error {
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
