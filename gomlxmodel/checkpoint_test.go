package gomlxmodel

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/checkpoints"
)

// The tests' second way to store a model, next to WriteTo/ReadModel (serialize.go): Save/Load write
// GoMLX checkpoints (a directory with .json and .bin files): the weights under scope "/params", Adam
// moments under "/adam_m" and "/adam_v", and "/meta/config" = [Vocab, MaxLen, DModel, Heads, Layers,
// MLP, step] (int64). Only tests use them; the library stores models as streams.

func splitName(name string) (scope, base string) {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return "", name
}

func checkpointScopes() []string { return []string{"params", "adam_m", "adam_v"} }

// Save writes the model (weights, Adam state, config) as a GoMLX checkpoint in dir, creating dir if
// needed, and removes the checkpoints that were there before. The checkpoint is written into a fresh
// context and a temporary directory inside dir (so nothing of an older checkpoint, of this
// configuration or another, is read or carried over), then moved into dir under a name that sorts
// after the older ones, which are removed last: at every moment the newest checkpoint in dir is a
// complete one. GoMLX panics become errors.
func (m *Model) Save(dir string) error {
	m.mu.Lock()
	st, err := m.st.clone()
	m.mu.Unlock()
	if err != nil {
		return err
	}
	return saveCheckpoint(dir, st)
}

// checkpointPrefix and checkpointCount match GoMLX's checkpoint file names
// ("checkpoint-n0000003-20060102-150405-initial.json" and ".bin").
const checkpointPrefix = "checkpoint-"

var checkpointCount = regexp.MustCompile(`^checkpoint-n(\d+)-`)

// saveCheckpoint writes st as the only checkpoint of dir (see Model.Save).
func saveCheckpoint(dir string, st *netState) (err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("gomlxmodel: save: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".save-")
	if err != nil {
		return fmt.Errorf("gomlxmodel: save: %w", err)
	}
	defer func() {
		if rmErr := os.RemoveAll(tmp); rmErr != nil && err == nil {
			err = fmt.Errorf("gomlxmodel: save: %w", rmErr)
		}
	}()
	if err := writeCheckpoint(tmp, st); err != nil {
		return fmt.Errorf("gomlxmodel: save to %s: %w", dir, err)
	}
	old, next, err := listCheckpointFiles(dir)
	if err != nil {
		return fmt.Errorf("gomlxmodel: save to %s: %w", dir, err)
	}
	written, _, err := listCheckpointFiles(tmp)
	if err != nil {
		return fmt.Errorf("gomlxmodel: save to %s: %w", dir, err)
	}
	// Move the data file(s) first and the .json last: GoMLX lists a checkpoint by its .json.
	slices.SortStableFunc(written, func(a, b string) int {
		return strings.Compare(filepath.Ext(b), filepath.Ext(a)) // ".json" after ".bin"
	})
	for _, name := range written {
		loc := checkpointCount.FindStringIndex(name)
		if loc == nil {
			return fmt.Errorf("gomlxmodel: save to %s: unexpected checkpoint file %q", dir, name)
		}
		renamed := fmt.Sprintf("%sn%07d-%s", checkpointPrefix, next, name[loc[1]:])
		if err := os.Rename(filepath.Join(tmp, name), filepath.Join(dir, renamed)); err != nil {
			return fmt.Errorf("gomlxmodel: save: %w", err)
		}
	}
	for _, name := range old {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("gomlxmodel: save: removing older checkpoint: %w", err)
		}
	}
	return nil
}

// listCheckpointFiles returns the names of the GoMLX checkpoint files (.json and .bin) in dir and the
// checkpoint number that follows theirs.
func listCheckpointFiles(dir string) (names []string, next int, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasPrefix(name, checkpointPrefix) ||
			(!strings.HasSuffix(name, checkpoints.JsonNameSuffix) && !strings.HasSuffix(name, checkpoints.BinDataSuffix)) {
			continue
		}
		names = append(names, name)
		if m := checkpointCount.FindStringSubmatch(name); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				next = max(next, n+1)
			}
		}
	}
	return names, next, nil
}

// writeCheckpoint saves st with GoMLX into dir, which holds no checkpoint: the handler then loads
// nothing, and the context holds exactly st's variables.
func writeCheckpoint(dir string, st *netState) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("GoMLX panic: %v", r)
		}
	}()
	ctx := context.New()
	defer ctx.Finalize()
	h, err := checkpoints.Build(ctx).Dir(dir).Keep(1).Done()
	if err != nil {
		return err
	}
	set := func(scope, name string, t *tensors.Tensor) {
		ctx.InAbsPath("/"+scope).Checked(false).VariableWithValue(name, t)
	}
	cfg := st.cfg
	set("meta", "config", tensors.FromValue([]int64{int64(cfg.Vocab), int64(cfg.MaxLen), int64(cfg.DModel),
		int64(cfg.Heads), int64(cfg.Layers), int64(cfg.MLP), st.step}))
	for g, group := range [][]*tensors.Tensor{st.params, st.m, st.v} {
		for i, t := range group {
			scope, name := splitName(st.specs[i].Name)
			set(strings.TrimSuffix(checkpointScopes()[g]+"/"+scope, "/"), name, t)
		}
	}
	return h.Save()
}

// Load reads the newest GoMLX checkpoint written by Model.Save in dir. GoMLX panics become errors.
func Load(dir string) (_ *Model, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gomlxmodel: load %s: GoMLX panic: %v", dir, r)
		}
	}()
	ctx := context.New()
	defer ctx.Finalize()
	if _, err := checkpoints.Load(ctx).Dir(dir).Immediate().Done(); err != nil {
		return nil, fmt.Errorf("gomlxmodel: load %s: %w", dir, err)
	}
	get := func(scope, name string) (*tensors.Tensor, error) {
		v := ctx.GetVariableByScopeAndName("/"+scope, name)
		if v == nil {
			return nil, fmt.Errorf("gomlxmodel: load %s: variable %s/%s missing", dir, scope, name)
		}
		return v.Value()
	}
	metaT, err := get("meta", "config")
	if err != nil {
		return nil, err
	}
	meta, err := tensors.CopyFlatData[int64](metaT)
	if err != nil || len(meta) != 7 {
		return nil, errors.Join(fmt.Errorf("gomlxmodel: load %s: bad meta/config", dir), err)
	}
	cfg := Config{Vocab: int(meta[0]), MaxLen: int(meta[1]), DModel: int(meta[2]), Heads: int(meta[3]),
		Layers: int(meta[4]), MLP: int(meta[5])}
	if err := checkStoredConfig(cfg, kindPolicy); err != nil {
		return nil, err
	}
	st := &netState{cfg: cfg, specs: policySpecs(cfg), step: meta[6]}
	for g, dst := range []*[]*tensors.Tensor{&st.params, &st.m, &st.v} {
		for _, s := range st.specs {
			scope, name := splitName(s.Name)
			t, err := get(strings.TrimSuffix(checkpointScopes()[g]+"/"+scope, "/"), name)
			if err != nil {
				return nil, err
			}
			data, err := floatsCopy(t)
			if err != nil {
				return nil, err
			}
			if len(data) != s.size() {
				return nil, fmt.Errorf("gomlxmodel: load %s: %s has %d values, want %d", dir, s.Name, len(data), s.size())
			}
			*dst = append(*dst, f32Tensor(data, s.Dims...))
		}
	}
	return &Model{st: st}, nil
}
