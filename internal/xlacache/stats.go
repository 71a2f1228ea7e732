package xlacache

import (
	"sync"
	"time"
)

var (
	statsMu sync.Mutex
	stats   Stats
)

// Stats counts the compile requests the hook has answered in this process.
type Stats struct {
	Hits    int           // programs loaded from the store
	Misses  int           // programs compiled by the plugin (absent, unreadable or refused entries)
	Corrupt int           // entries found but unusable (bad checksum, or the plugin refused them); each is recompiled
	Stored  int           // compiled programs written to the store
	Waited  int           // misses that waited for another process compiling the same program
	Load    time.Duration // time spent reading and loading entries (hits and corrupt entries)
	Compile time.Duration // time spent compiling misses
	Save    time.Duration // time spent serializing and writing misses
	Wait    time.Duration // time spent waiting for other processes' compilations
}

// CurrentStats returns the counts so far.
func CurrentStats() Stats {
	statsMu.Lock()
	defer statsMu.Unlock()
	return stats
}

func count(f func(*Stats)) {
	statsMu.Lock()
	defer statsMu.Unlock()
	f(&stats)
}
