package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A notebook whose status blocks computed two runs and an evaluation, with a notice that is not a timing and a
// cell's own output that mentions the cache.
const statusNotebook = `{"cells": [
 {"cell_type": "code", "source": "x", "execution_count": 1, "outputs": [
  {"output_type": "display_data", "data": {"text/plain": ["cache: loaded rl_base-1\n", "cache: computed train_rl-a in 12s\n", "cache: computed held_out-b-c in 1s"]}},
  {"output_type": "stream", "name": "stdout", "text": "the cache: computed nothing\n"}]},
 {"cell_type": "code", "source": "y", "execution_count": 2, "outputs": [
  {"output_type": "display_data", "data": {"text/plain": "cache: computed train_rl-d in 1m30s\ncache: computed 12.2_critic-e in 4s but could not store it: disk full\ncache: computed odd-f in soon"}}]}
], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}`

func TestColdProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "12.9-status.ipynb")
	if err := os.WriteFile(path, []byte(statusNotebook), 0o644); err != nil {
		t.Fatal(err)
	}
	kinds, err := coldProfile([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	want := []resultKind{{"train_rl", 2, 102 * time.Second}, {"12.2_critic", 1, 4 * time.Second}, {"held_out", 1, time.Second}}
	if len(kinds) != len(want) {
		t.Fatalf("coldProfile = %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Errorf("kind %d = %v, want %v", i, kinds[i], want[i])
		}
	}
}
