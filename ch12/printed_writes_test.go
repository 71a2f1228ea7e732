package ch12

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/codekey"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/store"
)

// The package variables and functions that the reports below read, written by TestPrintedLibraryWrites through
// the library: through a view a library function returns (agentrl.Rows), by a pointer method of a library type
// (gomlxmodel.Model.CopyParams), by a library function that trains its argument in place (agentrl.TrainRL), and
// in a value a package function returns (the notebooks' rlBase()).
var (
	probeRows    = []float32{1, 2, 3, 4}
	probeTok     = agentrl.BuildTokenizer(probeTasks(agentrl.SplitAll))
	probeCopied  = probeModel(3)
	probeTrained = probeModel(3)
	probeShared  = sync.OnceValue(func() *gomlxmodel.Model { return probeModel(3) })
)

func probeTasks(split string) []agentrl.Task {
	tasks, err := agentrl.MakeTasks(split)
	if err != nil {
		panic(err)
	}
	return tasks
}

func probeModel(seed int64) *gomlxmodel.Model {
	m, err := gomlxmodel.New(testEngine(), gomlxmodel.DefaultConfig(probeTok.VocabSize()), seed)
	if err != nil {
		panic(err)
	}
	return m
}

func digest(w io.Writer, m *gomlxmodel.Model) error {
	d, err := codekey.Of(m)
	fmt.Fprintln(w, "weights", d)
	return err
}

func rowsReport(w io.Writer) error    { _, err := fmt.Fprintln(w, "rows", probeRows); return err }
func copiedReport(w io.Writer) error  { return digest(w, probeCopied) }
func trainedReport(w io.Writer) error { return digest(w, probeTrained) }
func sharedReport(w io.Writer) error  { return digest(w, probeShared()) }
func allParams(name string) bool      { return true }
func trainShort() agentrl.RLConfig {
	c := agentrl.DefaultRLConfig()
	c.PromptsPerStep, c.GroupSize, c.MaxTurns = 2, 2, 2
	return c
}

// TestPrintedLibraryWrites checks that a stored report whose package variable the program changes through the
// library is not served with the text of the unchanged value: asked again after the change in the same program
// (here on a store opened again on the same directory), it must print what a fresh store prints, the report run
// now, or refuse the report. (In another program the change is code of that program, which the key holds.)
func TestPrintedLibraryWrites(t *testing.T) {
	t.Setenv(store.Env, t.TempDir())
	ch, err := Setup()
	if err != nil {
		t.Fatal(err)
	}
	other := probeModel(4)
	for _, tc := range []struct {
		name   string
		report func(io.Writer) error
		change func() error
	}{
		{"a write through agentrl.Rows' view", rowsReport, func() error {
			agentrl.Rows(probeRows, 2)[0][0] = 9
			return nil
		}},
		{"Model.CopyParams on the variable", copiedReport, func() error {
			_, err := probeCopied.CopyParams(other, allParams)
			return err
		}},
		{"agentrl.TrainRL of the variable", trainedReport, func() error {
			_, err := agentrl.TrainRL(probeTrained, probeTasks(agentrl.SplitTrain), probeTok, trainShort(), 1, nil)
			return err
		}},
		{"Model.CopyParams on a function's result", sharedReport, func() error {
			_, err := probeShared().CopyParams(other, allParams)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var notices strings.Builder
			ch.Store.Notices = &notices
			var before strings.Builder
			if err := ch.printed(&before, "test/library writes", tc.report); err != nil {
				t.Fatal(err)
			}
			if err := tc.change(); err != nil {
				t.Fatal(err)
			}
			var fresh strings.Builder
			if err := tc.report(&fresh); err != nil {
				t.Fatal(err)
			}
			if fresh.String() == before.String() {
				t.Fatalf("the change changed nothing: %q", fresh.String())
			}
			next, err := store.Open(ch.Store.Dir()) // the next program's store
			if err != nil {
				t.Fatal(err)
			}
			next.Notices = &notices
			again := *ch
			again.Store = next
			var served strings.Builder
			if err := again.printed(&served, "test/library writes", tc.report); err != nil {
				return // refused: the cell says what to change
			}
			if served.String() != fresh.String() {
				t.Errorf("served %q (the text stored before the change), want %q, what a fresh store prints; notices:\n%s",
					served.String(), fresh.String(), notices.String())
			}
		})
	}
}
