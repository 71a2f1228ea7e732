package gomlxmodel

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/internal/pjrt"
	"github.com/gomlx/gomlx/backends"
)

// TestPluginHashMemo: the plugin's hash is computed once per file version and then read from the memo; a file
// changed in place (another modification time) is hashed again.
func TestPluginHashMemo(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	lib := filepath.Join(t.TempDir(), pjrt.PluginName)
	os.WriteFile(lib, []byte("plugin build 1"), 0o644)
	want := sha256.Sum256([]byte("plugin build 1"))
	got, err := pluginHashMemo(lib)
	if err != nil || got != hex.EncodeToString(want[:]) {
		t.Fatalf("pluginHashMemo = %q, %v; want %x", got, err, want)
	}
	memos, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "agentrl", "pjrt-sha256", "*"))
	if len(memos) != 1 {
		t.Fatalf("memos = %q", memos)
	}
	fake := strings.Repeat("f", 64)
	os.WriteFile(memos[0], []byte(fake), 0o644)
	if got, _ := pluginHashMemo(lib); got != fake {
		t.Errorf("second call = %q, want the memo's %q", got, fake)
	}
	os.WriteFile(lib, []byte("plugin build 2"), 0o644)
	os.Chtimes(lib, time.Now(), time.Now().Add(time.Hour))
	want = sha256.Sum256([]byte("plugin build 2"))
	if got, _ := pluginHashMemo(lib); got != hex.EncodeToString(want[:]) {
		t.Errorf("after the file changed: %q, want %x", got, want)
	}
}

// TestNumericsNamesPlugin: on XLA, Numerics names a plugin other than the pinned one by its hash, and the pinned
// one by nothing (the committed run's Numerics).
func TestNumericsNamesPlugin(t *testing.T) {
	n := testEng().NumericsKey()
	if testEng().pureGo {
		if strings.Contains(n, "/plugin=") {
			t.Errorf("pure-Go Numerics %q names a plugin", n)
		}
		return
	}
	id := pluginBuild(testEng().plugin)
	t.Logf("Numerics = %q (loaded plugin %q, build %q)", n, testEng().plugin, id)
	if (id == "") == strings.Contains(n, "/plugin=") {
		t.Errorf("Numerics %q, plugin build %q", n, id)
	}
}

// TestXLACompiledIn: the leaf package's answer, read from build constraints without GoMLX, is GoMLX's own.
func TestXLACompiledIn(t *testing.T) {
	if pjrt.XLACompiledIn != xlaRegistered() {
		t.Errorf("pjrt.XLACompiledIn = %v, GoMLX's backends %v", pjrt.XLACompiledIn, backends.List())
	}
}
