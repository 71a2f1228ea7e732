package xlacache

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// lockSuffix ends the name of a program's lock file, beside its entry (Lock); such files are not entries.
const lockSuffix = ".lock"

// SetTrace makes the store write one line to w for each program it loads, waits for or compiles:
//
//	PID load|wait|compile KEY12 SECONDS BYTES NAME
//
// (BYTES: the entry's size for a load, the program's for a compilation), so that the compilations of a whole
// run of several processes appending to one file can be counted. Each line is one Write. nil writes none. It
// returns s.
func (s *Store) SetTrace(w io.Writer) *Store {
	s.traceTo = w
	return s
}

var traceMu sync.Mutex

func (s *Store) trace(kind, key, name string, d time.Duration, size int) {
	if s.traceTo == nil {
		return
	}
	line := fmt.Sprintf("%d %s %s %.3f %d %s\n", os.Getpid(), kind, key[:min(12, len(key))], d.Seconds(), size, name)
	traceMu.Lock()
	defer traceMu.Unlock()
	io.WriteString(s.traceTo, line)
}

// moduleName reads the name of a StableHLO program from the start of its text ("module @NAME ..."), "-" where
// it has none.
func moduleName(head []byte) string {
	_, rest, ok := bytes.Cut(head, []byte("module @"))
	if !ok {
		return "-"
	}
	if i := bytes.IndexAny(rest, " {\n"); i >= 0 {
		rest = rest[:i]
	}
	if len(rest) == 0 {
		return "-"
	}
	return string(rest)
}
