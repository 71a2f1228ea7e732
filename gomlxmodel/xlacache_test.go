package gomlxmodel

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/internal/xlacache"
)

// TestMain gives the package's tests an executable cache folder of their own, removed afterwards, so that no
// test writes to the user's cache folder. A child process of TestXLACacheAcrossProcesses keeps the folder its
// parent names.
func TestMain(m *testing.M) {
	if os.Getenv(xlaCacheChildEnv) != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "agentrl-xla-executables-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(XLACacheDirEnv, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// xlaCacheChildEnv makes TestXLACacheChild run: it is the second (third, ...) process of TestXLACacheAcrossProcesses.
const xlaCacheChildEnv = "AGENTRL_TEST_XLACACHE_CHILD"

// xlaCacheOrderEnv set to "reverse" makes TestXLACacheChild meet its two shapes of logits in the other order.
const xlaCacheOrderEnv = "AGENTRL_TEST_XLACACHE_ORDER"

// xlaCacheReport is what a child process prints: a hash of its outputs' bytes and its cache counts.
type xlaCacheReport struct {
	Outputs  string
	Compiles int
	Cache    xlacache.Stats
}

// TestXLACacheChild computes with a small model (one PPO update, logits, decoding steps) and prints an
// xlaCacheReport; it runs only as a child of TestXLACacheAcrossProcesses.
func TestXLACacheChild(t *testing.T) {
	if os.Getenv(xlaCacheChildEnv) == "" {
		t.Skip("runs as a child process of TestXLACacheAcrossProcesses")
	}
	cfg := Config{Vocab: 20, MaxLen: 32, DModel: 16, Heads: 2, Layers: 2, MLP: 32}
	m, err := New(testEng(), cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	h := sha256.New()
	put := func(xs []float32) {
		for _, x := range xs {
			binary.Write(h, binary.LittleEndian, math.Float32bits(x))
		}
	}
	lc := LossConfig{Kind: "ppo", ClipEps: 0.2, Aggregation: "token_mean", LR: 1e-3, MaxGradNorm: 1}
	if _, err := m.Update(makeBatch(rng, cfg, 4, 9), lc); err != nil {
		t.Fatal(err)
	}
	ids := randomIDs(rng, 8*30, cfg.Vocab)
	// Two shapes of logits, met in the order the parent asks for: each is its executor's first or second graph.
	order := [][2]int{{3, 7}, {8, 30}}
	if os.Getenv(xlaCacheOrderEnv) == "reverse" {
		order = [][2]int{{8, 30}, {3, 7}}
	}
	logits := map[[2]int][]float32{}
	for _, s := range order {
		if logits[s], err = m.Logits(ids[:s[0]*s[1]], s[0], s[1]); err != nil {
			t.Fatal(err)
		}
	}
	put(logits[[2]int{3, 7}])
	put(logits[[2]int{8, 30}])
	d, err := m.NewDecoder(2)
	if err != nil {
		t.Fatal(err)
	}
	d.Feed(0, ids[:3])
	d.Feed(1, ids[7:12])
	for range 3 {
		next, err := d.Step()
		if err != nil {
			t.Fatal(err)
		}
		put(next)
		d.Feed(0, ids[3:4])
		d.Feed(1, ids[12:13])
	}
	if _, err := m.WriteTo(h); err != nil {
		t.Fatal(err)
	}
	graphs, _ := testEng().CompileStats()
	out, _ := json.Marshal(xlaCacheReport{hex.EncodeToString(h.Sum(nil)), graphs, XLACacheStats()})
	t.Logf("report %s", out)
	os.Stdout.WriteString("\nXLACACHE-REPORT " + string(out) + "\n")
}

// runXLACacheChild runs TestXLACacheChild in a new process with the executable cache in dir and the given
// extra environment.
func runXLACacheChild(t *testing.T, dir string, env ...string) xlaCacheReport {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestXLACacheChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), append([]string{xlaCacheChildEnv + "=1", XLACacheDirEnv + "=" + dir}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		if rest, ok := strings.CutPrefix(line, "XLACACHE-REPORT "); ok {
			var r xlaCacheReport
			if err := json.Unmarshal([]byte(rest), &r); err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	t.Fatalf("child printed no report:\n%s", out)
	return xlaCacheReport{}
}

// TestXLACacheAcrossProcesses: on the XLA backend, a first process compiles its graphs and stores them, a
// second loads every one of them and compiles nothing, and so does a third that meets two of them in the other
// order, with outputs bit-identical to the first's and to a
// process without the cache; corrupt entries are found, removed and compiled again, still bit-identical.
func TestXLACacheAcrossProcesses(t *testing.T) {
	if os.Getenv(xlaCacheChildEnv) != "" {
		t.Skip("parent test")
	}
	if testEng().pureGo || testEng().plugin == "" {
		t.Skip("the executable cache serves the XLA backend with a plugin loaded by path")
	}
	if testing.Short() {
		t.Skip("starts four processes")
	}
	dir := t.TempDir()
	off := runXLACacheChild(t, dir, XLACacheEnv+"=off")
	if off.Cache != (xlacache.Stats{}) {
		t.Fatalf("cache off: stats %+v, want none", off.Cache)
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, "*", "*[0-9a-f]")); len(entries) != 0 {
		t.Fatalf("cache off wrote %d entries", len(entries))
	}

	cold := runXLACacheChild(t, dir)
	if cold.Cache.Hits != 0 || cold.Cache.Misses == 0 || cold.Cache.Stored != cold.Cache.Misses {
		t.Fatalf("cold process: %+v, want only misses, all stored", cold.Cache)
	}
	warm := runXLACacheChild(t, dir)
	if warm.Cache.Misses != 0 || warm.Cache.Hits != cold.Cache.Misses {
		t.Fatalf("warm process: %+v, want %d hits and no compilation", warm.Cache, cold.Cache.Misses)
	}
	// The same graphs met in another order carry other names (GoMLX numbers an executor's shapes): still loaded.
	reversed := runXLACacheChild(t, dir, xlaCacheOrderEnv+"=reverse")
	if reversed.Cache.Misses != 0 || reversed.Cache.Hits != cold.Cache.Misses {
		t.Fatalf("process meeting the shapes in another order: %+v, want %d hits and no compilation",
			reversed.Cache, cold.Cache.Misses)
	}

	entries, _ := filepath.Glob(filepath.Join(dir, "*", "*[0-9a-f]"))
	if len(entries) != cold.Cache.Stored {
		t.Fatalf("%d entries, want %d", len(entries), cold.Cache.Stored)
	}
	for i, e := range entries {
		data, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			data[len(data)-1] ^= 1 // fails the checksum
		} else {
			data = data[:len(data)/2] // a truncated entry
		}
		if err := os.WriteFile(e, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	repaired := runXLACacheChild(t, dir)
	if repaired.Cache.Corrupt != len(entries) || repaired.Cache.Misses != len(entries) || repaired.Cache.Hits != 0 {
		t.Fatalf("after corrupting every entry: %+v, want %d corrupt and recompiled", repaired.Cache, len(entries))
	}

	for name, r := range map[string]xlaCacheReport{"cold": cold, "warm": warm, "reversed": reversed, "repaired": repaired} {
		if r.Outputs != off.Outputs {
			t.Errorf("%s process outputs %s, without the cache %s", name, r.Outputs, off.Outputs)
		}
		if r.Compiles != off.Compiles {
			t.Errorf("%s process ran %d graphs for the first time, without the cache %d", name, r.Compiles, off.Compiles)
		}
	}
}

// TestXLACacheSettings: EnvOptions name no cache folder of their own accord (so tests, which use them, run
// without the cache rather than writing to the user's cache folder unless told to), DefaultOptions name one under
// the user cache folder, the cache is off where XLACacheEnv says so, and the bound is read as documented.
func TestXLACacheSettings(t *testing.T) {
	t.Setenv(XLACacheDirEnv, "")
	t.Setenv("AGENTRL_CACHE", "")
	if dir := EnvOptions().XLACache; dir != "" {
		t.Errorf("EnvOptions with no folder named: cache in %q, want none", dir)
	}
	if user, err := os.UserCacheDir(); err == nil {
		if dir, want := DefaultOptions().XLACache, filepath.Join(user, "agentrl", "xla-executables"); dir != want {
			t.Errorf("DefaultOptions with no folder named: cache in %q, want %q", dir, want)
		}
	}
	t.Setenv(XLACacheEnv, "off")
	if dir := DefaultOptions().XLACache; dir != "" {
		t.Errorf("DefaultOptions with %s=off: cache in %q, want none", XLACacheEnv, dir)
	}
	t.Setenv(XLACacheEnv, "")
	t.Setenv("AGENTRL_CACHE", "/results")
	if dir := XLACacheDir(); dir != filepath.Join("/results", "xla-executables") {
		t.Errorf("XLACacheDir under AGENTRL_CACHE: %q", dir)
	}
	for v, want := range map[string]int64{"": XLACacheDefaultMaxMB << 20, "junk": XLACacheDefaultMaxMB << 20,
		"64": 64 << 20, " 8 ": 8 << 20, "0": 0, "-1": 0} {
		t.Setenv(XLACacheMaxEnv, v)
		if got := xlaCacheLimit(); got != want {
			t.Errorf("%s=%q: bound %d bytes, want %d", XLACacheMaxEnv, v, got, want)
		}
	}
}
