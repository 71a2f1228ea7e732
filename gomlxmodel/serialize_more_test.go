package gomlxmodel

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/checkpoints"
)

// TestSaveOverOtherCheckpoint saves a model into a directory that holds the checkpoint of another
// configuration. Load must then give the new model bit for bit, and the directory must hold one
// checkpoint with exactly the new model's variables: none carried over from the old one. (Saving
// through a handler opened on dir, as Save once did, panics on the vocabulary change and keeps the
// old layer1/* variables on the layer change.)
func TestSaveOverOtherCheckpoint(t *testing.T) {
	base := tinyConfig() // 2 layers, vocab 20
	otherVocab, fewerLayers, moreLayers := base, base, base
	otherVocab.Vocab = 21
	fewerLayers.Layers = 1
	moreLayers.Layers = 3
	for _, tc := range []struct {
		name     string
		old, new Config
	}{
		{"same config", base, base},
		{"other vocab", base, otherVocab},
		{"fewer layers", base, fewerLayers},
		{"more layers", fewerLayers, moreLayers},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := mustNew(t, tc.old, 1).Save(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
				t.Fatal(err)
			}
			m := mustNew(t, tc.new, 2)
			if err := m.Save(dir); err != nil {
				t.Fatalf("Save over a checkpoint of %+v: %v", tc.old, err)
			}
			l, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if l.Config() != tc.new || !bytes.Equal(modelBytes(t, l), modelBytes(t, m)) {
				t.Fatalf("Load gives config %+v, not the model just saved (%+v)", l.Config(), tc.new)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if len(names) != 3 || names[2] != "notes.txt" ||
				!strings.HasSuffix(names[0], checkpoints.BinDataSuffix) || !strings.HasSuffix(names[1], checkpoints.JsonNameSuffix) {
				t.Fatalf("directory holds %q, want one checkpoint (.bin, .json) and notes.txt", names)
			}
			ctx := context.New()
			defer ctx.Finalize()
			if _, err := checkpoints.Load(ctx).Dir(dir).Immediate().Done(); err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{"/meta/config": true, "/global_step": true} // GoMLX adds global_step
			for _, s := range policySpecs(tc.new) {
				for _, scope := range checkpointScopes() {
					want["/"+scope+"/"+s.Name] = true
				}
			}
			got := 0
			for v := range ctx.IterVariables() {
				got++
				if !want[v.ScopeAndName()] {
					t.Errorf("stale variable %s in the checkpoint", v.ScopeAndName())
				}
			}
			if got != len(want) {
				t.Errorf("checkpoint holds %d variables, want %d", got, len(want))
			}
		})
	}
}

// TestReadMalformedHeader feeds ReadModel and ReadCritic stream headers with absurd or invalid
// configurations followed by a little data: each must give an error, without a panic or a huge
// allocation. (Before the bounds, a vocabulary of 2^61 panicked in makeslice, and 2^40 layers looped
// building the parameter list.)
func TestReadMalformedHeader(t *testing.T) {
	ok := tinyConfig()
	header := func(kind string, cfg [6]uint64, step uint64) []byte {
		var b bytes.Buffer
		u := func(x uint64) { b.Write(binary.LittleEndian.AppendUint64(nil, x)) }
		b.WriteString(streamMagic)
		u(uint64(len(kind)))
		b.WriteString(kind)
		for _, x := range cfg {
			u(x)
		}
		u(step)
		u(3) // the first tensor: "tok" [Vocab, DModel], and a few values
		b.WriteString("tok")
		u(2)
		u(cfg[0])
		u(cfg[2])
		b.Write(make([]byte, 64))
		return b.Bytes()
	}
	okDims := [6]uint64{uint64(ok.Vocab), uint64(ok.MaxLen), uint64(ok.DModel), uint64(ok.Heads), uint64(ok.Layers), uint64(ok.MLP)}
	with := func(i int, x uint64) [6]uint64 {
		d := okDims
		d[i] = x
		return d
	}
	for _, tc := range []struct {
		name string
		cfg  [6]uint64
		step uint64
		want string // part of the error
	}{
		{"huge vocab", with(0, 1<<61), 0, "Vocab"},
		{"vocab just above the bound", with(0, maxStoredDim+1), 0, "Vocab"},
		{"huge layers", with(4, 1<<40), 0, "Layers"},
		{"huge MLP", with(5, 1<<34), 0, "MLP"},
		{"too many parameters", [6]uint64{1 << 20, 2, 1 << 20, 1, 1, 1}, 0, "parameters"},
		{"too many layers for the total", with(4, 1<<20), 0, "parameters"},
		{"negative vocab", with(0, 1<<63), 0, "Vocab"},
		{"zero layers", with(4, 0), 0, "Layers"},
		{"zero heads", with(3, 0), 0, "Heads"},
		{"negative step", okDims, 1 << 63, "step"},
		{"valid header, short data", okDims, 0, "reading tensor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, kind := range []string{kindPolicy, kindCritic} {
				stream := header(kind, tc.cfg, tc.step)
				var err error
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("%s: panic: %v", kind, r)
						}
					}()
					if kind == kindPolicy {
						_, err = ReadModel(testEng(), bytes.NewReader(stream))
					} else {
						_, err = ReadCritic(testEng(), bytes.NewReader(stream))
					}
				}()
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: error %v, want one about %q", kind, err, tc.want)
				}
			}
		})
	}
}
