// Package golden checks digests of computed bytes against digests recorded in a file, per numerics: a
// result's bits are those of one backend, processor and set of compiler flags (gomlxmodel.Numerics), so a
// digest is compared only in a process whose numerics recorded it.
//
// The file is JSON: numerics → name → hexadecimal digest. Run a test with -golden.update to record the
// digests of its numerics (replacing those recorded under the same names).
package golden

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"testing"
)

var update = flag.Bool("golden.update", false, "record the golden digests of this process's numerics instead of checking them")

var mu sync.Mutex // serializes reads and writes of the files

// Check compares digest with the one recorded under numerics and name in file. It fails t when they
// differ; when none is recorded, it logs the digest and leaves t passing. With -golden.update it
// records digest there instead.
func Check(t testing.TB, file, numerics, name, digest string) {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	recorded, err := read(file)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if recorded[numerics] == nil {
			recorded[numerics] = map[string]string{}
		}
		recorded[numerics][name] = digest
		if err := write(file, recorded); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: recorded %s under %q", name, digest, numerics)
		return
	}
	want, ok := recorded[numerics][name]
	switch {
	case !ok:
		t.Logf("%s: no digest recorded under %q (this process: %s)", name, numerics, digest)
	case want != digest:
		t.Errorf("%s: digest %s, recorded %s under %q", name, digest, want, numerics)
	}
}

func read(file string) (map[string]map[string]string, error) {
	recorded := map[string]map[string]string{}
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return recorded, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &recorded); err != nil {
		return nil, fmt.Errorf("golden: %s: %w", file, err)
	}
	return recorded, nil
}

func write(file string, recorded map[string]map[string]string) error {
	data, err := json.MarshalIndent(recorded, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}
