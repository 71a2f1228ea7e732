//codekey:reads its own files, $AGENTRL_CACHE and the clock: where and when results are kept, not what they are

package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentrl-go/agentrl/codekey"
	"github.com/janpfeifer/gonb/cache"
)

// Env is the environment variable that sets the default store's directory.
const Env = "AGENTRL_CACHE"

// Store is the on-disk result cache that lets a notebook cell load what an earlier cell (a separate program
// under GoNB) computed: the RL base agent, training runs. It builds on GoNB's cache.Storage (one file per key in
// one directory) and adds what a reproducible chapter needs: content-addressed keys (codekey.Key), a checksum
// verified on every load (a corrupt or partial entry is recomputed, never trusted), and atomic writes.
//
// A process reads each entry from disk at most once: Cached keeps the payload of every entry it loaded or stored,
// and a later Cached of the same key decodes it from memory and tells no event.
//
// The exported fields say how the computations run through the store report and save their progress. Set them
// before the store is used (they are read without synchronization); their zero values are the defaults.
type Store struct {
	// Observe receives the store's events (see Event): what it loaded, computed, verified or did not store, and
	// the progress of the computations it runs (Resumable) and of its NewProgress. It may be called from more than
	// one goroutine at once (an interrupt's event comes from a goroutine of its own), and the computation waits
	// while it runs. Nil means the default: each event's line (Event.String) is written to Notices.
	Observe func(Event)
	// Notices receives the default observer's lines (a command's standard error, a test's buffer), one Write a
	// line, one line at a time. Nil means os.Stderr. It is not used when Observe is set.
	Notices io.Writer
	// ProgressEvery is the least wall time between two progress lines of a computation; zero means
	// DefaultProgressEvery.
	ProgressEvery time.Duration
	// CheckpointEvery is the wall time between two saves of a running computation's progress (see Resumable):
	// a process killed outright, with no interrupt first, loses at most this much work. Zero means
	// DefaultCheckpointEvery.
	CheckpointEvery time.Duration

	dir     string
	storage *cache.Storage
	held    sync.Map   // key → the payload of an entry this process loaded or stored
	lines   sync.Mutex // held while the default observer writes a line to Notices
}

// notices is where the default observer writes: Notices, or os.Stderr.
func (s *Store) notices() io.Writer {
	if s.Notices == nil {
		return os.Stderr
	}
	return s.Notices
}

// Open opens (creating it if needed) the cache directory dir.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	storage, err := cache.New(dir)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	removeStaleTemps(dir, time.Now().Add(-staleTempAge))
	return &Store{dir: dir, storage: storage}, nil
}

// staleTempAge is how old a temporary file of the store must be to be taken for the remains of a write that a
// killed process never finished (a save takes well under a second).
const staleTempAge = time.Hour

// removeStaleTemps deletes the temporary files in dir last modified before cutoff. Errors are ignored: a file
// left behind costs only space.
func removeStaleTemps(dir string, cutoff time.Time) {
	temps, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	for _, p := range temps {
		if st, err := os.Stat(p); err == nil && st.ModTime().Before(cutoff) {
			_ = os.Remove(p)
		}
	}
}

// Default opens the store at $AGENTRL_CACHE, or at agentrl/ under the user's cache directory
// (~/.cache/agentrl on Linux), or under the temporary directory when there is none.
func Default() (*Store, error) {
	dir := os.Getenv(Env)
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		dir = filepath.Join(base, "agentrl")
	}
	return Open(dir)
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// Codec writes and reads values of one type, exactly (a loaded value must equal the saved one bit for bit).
type Codec[T any] struct {
	Encode func(io.Writer, T) error
	Decode func(io.Reader) (T, error)
}

// Cached returns the value stored under key, or computes, stores and returns it. It tells Loaded or Computed
// (after Unusable when the entry failed its checks). A computed value is returned as it reads back from its encoding, so both paths give identical values.
// A value that could not be stored (a full disk, a read-only cache directory) is still returned: Computed tells the
// failure (Event.Err), and the next run computes it again.
//
// k must name everything compute reads: make it with codekey.KeyOf from those values (the callers in this module
// build compute and its key from one value), never by hand. Where k holds code from outside the packages on disk (a
// cell's), which reads when it runs what the program made of its variables, the value is stored under
// k.InProgram, the key with the program's code and the how-manieth call this is. Where that code, or the program's,
// reads what no key can hold (k.Open, k.ProgramOpen: an environment variable, a file), there is nothing to verify
// a stored value against: Cached computes it, telling Computing and Computed with what the code reads (Event.Reads),
// and neither loads nor stores it.
//
// One process computes a key at a time: a process that finds another computing the same key (two notebooks, a
// notebook and cmd/seeds) tells Waiting and loads the result
// once the other has stored it; if the other ends without storing it (killed, failed), it computes it itself.
func Cached[T any](s *Store, k codekey.Keyed, codec Codec[T], compute func() (T, error)) (T, error) {
	switch {
	case len(k.Open) > 0:
		return uncached(s, k, codec, compute, k.Open)
	case len(k.Outside) > 0 && k.InProgram == "":
		return uncached(s, k, codec, compute, k.ProgramOpen)
	case len(k.Outside) > 0:
		k.Key = k.InProgram // what the outside code reads is what the program's code made it
	}
	return cached(s, k, codec, compute)
}

// uncached computes what Cached would store under k without loading or storing it, and returns it as it reads
// back from its encoding, as Cached does.
func uncached[T any](s *Store, k codekey.Keyed, codec Codec[T], compute func() (T, error), reads []string) (T, error) {
	var zero T
	if err := check(s, k.Key, codec.Encode != nil && codec.Decode != nil, compute != nil); err != nil {
		return zero, err
	}
	s.tell(Event{Kind: Computing, Key: k.Key, Reads: reads})
	start := time.Now()
	v, err := compute()
	if err != nil {
		return zero, err
	}
	s.tell(Event{Kind: Computed, Key: k.Key, Took: time.Since(start), Reads: reads})
	var payload bytes.Buffer
	if err := codec.Encode(&payload, v); err != nil {
		return zero, fmt.Errorf("cache: encode %s: %w", k.Key, err)
	}
	return codec.Decode(bytes.NewReader(payload.Bytes()))
}

// check refuses a call of the store that cannot work, naming what is missing.
func check(s *Store, key string, codec, compute bool) error {
	switch {
	case s == nil:
		return errors.New("store: the store is nil: open one with Default or Open")
	case key == "":
		return errors.New("store: the key is empty: make one with codekey.KeyOf")
	case !codec:
		return fmt.Errorf("store: %s: the codec needs both Encode and Decode", key)
	case !compute:
		return fmt.Errorf("store: %s: compute is nil", key)
	}
	return nil
}

// cached is Cached of a key whose code reads nothing open.
func cached[T any](s *Store, k codekey.Keyed, codec Codec[T], compute func() (T, error)) (T, error) {
	key := k.Key
	var zero T
	if err := check(s, key, codec.Encode != nil && codec.Decode != nil, compute != nil); err != nil {
		return zero, err
	}
	if v, ok := loadLogged(s, key, codec); ok {
		return v, nil
	}
	unlock, waited, err := s.lock(key)
	if err != nil {
		return zero, err
	}
	defer unlock()
	if waited {
		if v, ok := loadLogged(s, key, codec); ok {
			return v, nil
		}
	}
	start := time.Now()
	v, err := compute()
	if err != nil {
		return zero, err
	}
	var payload bytes.Buffer
	if err := codec.Encode(&payload, v); err != nil {
		return zero, fmt.Errorf("cache: encode %s: %w", key, err)
	}
	s.held.Store(key, payload.Bytes())
	err = s.saveEntry(k, payload.Bytes())
	s.tell(Event{Kind: Computed, Key: key, Took: time.Since(start), Err: err})
	return codec.Decode(bytes.NewReader(payload.Bytes()))
}

// loadLogged loads key's entry and tells what it found: Loaded, or Unusable and why. It reports whether
// the value is usable.
func loadLogged[T any](s *Store, key string, codec Codec[T]) (T, bool) {
	if payload, ok := s.held.Load(key); ok {
		v, err := codec.Decode(bytes.NewReader(payload.([]byte)))
		if err == nil {
			s.touch(key)
			return v, true
		}
		s.held.Delete(key)
	}
	payload, err := loadPayload(s, key)
	var v T
	if err == nil {
		v, err = codec.Decode(bytes.NewReader(payload))
	}
	switch {
	case err == nil:
		s.held.Store(key, payload)
		s.touch(key)
		s.tell(Event{Kind: Loaded, Key: key})
		return v, true
	case !errors.Is(err, os.ErrNotExist):
		s.tell(Event{Kind: Unusable, Key: key, Err: err})
	}
	return v, false
}

// Reset removes the entry of key, if any.
func (s *Store) Reset(key string) error {
	s.held.Delete(key)
	return s.storage.ResetKey(key)
}

const envelopeMagic = "agentrl-cache-v1\n"

// envelope is a cache entry on disk: magic, payload length, SHA-256 of the payload, payload. It implements
// GoNB's cache.Serializable.
type envelope struct{ payload []byte }

func (e *envelope) CacheSerialize(w io.Writer) error {
	sum := sha256.Sum256(e.payload)
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(e.payload)))
	for _, part := range [][]byte{[]byte(envelopeMagic), n[:], sum[:], e.payload} {
		if _, err := w.Write(part); err != nil {
			return err
		}
	}
	return nil
}

func (e *envelope) CacheDeserialize(r io.Reader) (any, error) {
	header := make([]byte, len(envelopeMagic)+8+sha256.Size)
	if _, err := io.ReadFull(r, header); err != nil {
		return nil, fmt.Errorf("short header: %w", err)
	}
	if string(header[:len(envelopeMagic)]) != envelopeMagic {
		return nil, errors.New("not a cache entry")
	}
	n := binary.LittleEndian.Uint64(header[len(envelopeMagic):])
	payload, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if uint64(len(payload)) != n {
		return nil, fmt.Errorf("truncated: %d of %d bytes", len(payload), n)
	}
	if sum := sha256.Sum256(payload); !bytes.Equal(sum[:], header[len(envelopeMagic)+8:]) {
		return nil, errors.New("checksum mismatch")
	}
	return &envelope{payload: payload}, nil
}

func load[T any](s *Store, key string, codec Codec[T]) (T, error) {
	payload, err := loadPayload(s, key)
	if err != nil {
		var zero T
		return zero, err
	}
	return codec.Decode(bytes.NewReader(payload))
}

// loadPayload reads key's entry from disk and returns its payload once its length and checksum are verified.
func loadPayload(s *Store, key string) ([]byte, error) {
	r, err := s.storage.Reader(key)
	if err != nil {
		return nil, err
	}
	f, ok := r.(*os.File)
	if !ok || f == nil {
		// GoNB's Reader hides errors other than a missing file behind a nil *os.File: find the real one.
		f, err := os.Open(s.path(key))
		if err != nil {
			return nil, err
		}
		f.Close()
		return nil, fmt.Errorf("cannot open %s", s.path(key))
	}
	defer f.Close()
	e, err := (&envelope{}).CacheDeserialize(f)
	if err != nil {
		return nil, err
	}
	return e.(*envelope).payload, nil
}

// entrySuffix ends the name of every file of GoNB's cache.Storage.
const entrySuffix = ".bin"

// path is the file of key's entry.
func (s *Store) path(key string) string { return filepath.Join(s.dir, key+entrySuffix) }

// lockPath is the file whose lock a process holds while it computes key's entry.
func (s *Store) lockPath(key string) string { return filepath.Join(s.dir, key+".lock") }

// saves numbers the temporary files of this process's writes.
var saves atomic.Uint64

// save writes the entry under a temporary key of its own, then renames it into place, so a reader never sees a
// partial entry and an interrupted write leaves the old state.
func (s *Store) save(key string, payload []byte) error {
	tmp := fmt.Sprintf(".tmp-%d-%d-%s", os.Getpid(), saves.Add(1), key)
	err := s.storage.Save(tmp, &envelope{payload: payload})
	if err == nil {
		err = os.Rename(s.path(tmp), s.path(key))
	}
	if err != nil {
		_ = s.storage.ResetKey(tmp)
		return fmt.Errorf("cache: save %s: %w", key, err)
	}
	return nil
}
