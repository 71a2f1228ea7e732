package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentrl-go/agentrl/codekey"
)

// A store a reader can look into. Beside each result the store keeps what its key holds (a small JSON file,
// KEY.meta): the result's name, the digest of the code and the numerics that computed it, the packages that code
// is in and the code from outside them. A result's modification time is when it was last served, so entries can
// be listed and pruned by what computed them and by age (cmd/store).

// metaSuffix ends the file that describes a result.
const metaSuffix = ".meta"

// Entry describes one stored result.
type Entry struct {
	Key      string
	Name     string
	Code     string   // digest of the code that computed it (codekey.Keyed.Code)
	Numerics string   // what besides code decided its bits (codekey.Keyed.Numerics)
	Packages []string // the packages on disk whose code its key holds
	Outside  []string // the code from outside them that its key holds
	Created  time.Time
	Used     time.Time // when it was last stored or served
	Size     int64     // bytes on disk: the result, its record and progress
}

// saveEntry stores the payload of k's result and what its key holds.
func (s *Store) saveEntry(k codekey.Keyed, payload []byte) error {
	if err := s.save(k.Key, payload); err != nil {
		return err
	}
	e := Entry{Key: k.Key, Name: k.Name, Code: k.Code, Numerics: k.Numerics, Packages: k.Packages,
		Outside: k.Outside, Created: time.Now().UTC().Truncate(time.Second)}
	data, err := json.MarshalIndent(e, "", "  ")
	if err == nil {
		err = writeAtomic(filepath.Join(s.dir, k.Key+metaSuffix), data)
	}
	if err != nil {
		s.tell(Event{Kind: DescribeFailed, Key: k.Key, Err: err})
	}
	return nil
}

// writeAtomic writes data to path through a temporary file of the store's, renamed into place.
func writeAtomic(path string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".tmp-%d-%d-%s", os.Getpid(), saves.Add(1), filepath.Base(path)))
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// touch records that key's result was served now. Errors are ignored: the age is a hint for pruning.
func (s *Store) touch(key string) {
	now := time.Now()
	_ = os.Chtimes(s.path(key), now, now)
}

// Entries lists the results in the store, the most recently used first. A result stored before results were
// described has its name (from its key), size and last use only.
func (s *Store) Entries() ([]Entry, error) {
	files, err := filepath.Glob(filepath.Join(s.dir, "*"+entrySuffix))
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, f := range files {
		key := strings.TrimSuffix(filepath.Base(f), entrySuffix)
		if strings.HasPrefix(key, ".tmp-") || strings.HasSuffix(key, ".partial") || strings.HasSuffix(key, recordSuffix) {
			continue
		}
		st, err := os.Stat(f)
		if err != nil {
			continue // removed meanwhile
		}
		e := Entry{Key: key}
		if data, err := os.ReadFile(filepath.Join(s.dir, key+metaSuffix)); err == nil {
			_ = json.Unmarshal(data, &e) // a damaged description leaves the fields it could not read empty
		}
		if e.Name == "" {
			e.Name = key[:max(strings.LastIndex(key, "-"), 0)]
		}
		e.Key, e.Used = key, st.ModTime()
		for _, part := range s.files(key) {
			if st, err := os.Stat(part); err == nil {
				e.Size += st.Size()
			}
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Used.After(out[j].Used) })
	return out, nil
}

// files are the paths of everything the store keeps for key: its result, description, record, progress and lock.
func (s *Store) files(key string) []string {
	return []string{s.path(key), filepath.Join(s.dir, key+metaSuffix), s.path(key + recordSuffix),
		s.path(key + ".partial"), s.lockPath(key)}
}

// Remove deletes key's result and everything kept beside it. A result another process is computing is refused.
func (s *Store) Remove(key string) error {
	if strings.ContainsAny(key, `/\`) || key == "" {
		return fmt.Errorf("store: %q is not a key", key)
	}
	unlock, busy, err := s.tryLock(key)
	if err != nil {
		return err
	}
	if busy {
		return fmt.Errorf("store: %s is being computed by another process", key)
	}
	defer unlock()
	s.held.Delete(key)
	for _, f := range s.files(key) {
		if f == s.lockPath(key) {
			continue // the lock is released (and removed) by unlock
		}
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("store: %w", err)
		}
	}
	return nil
}
