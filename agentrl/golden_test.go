package agentrl

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"
)

// Golden hashes of what the chapter computes from its code alone: its tasks, the demonstrations its base agents
// learn from, and (on the pure-Go backend, whose bits do not depend on the processor) a short train_credit run.
// A change to the library that moves one of them moves a number the chapter prints.

// jsonHash is the SHA-256 of v's JSON, in hex.
func jsonHash(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// TestMakeTasksPinned pins every field of the chapter's tasks (MakeTasks of each split), as the book's make_tasks
// generator made them.
func TestMakeTasksPinned(t *testing.T) {
	for _, c := range []struct{ split, hash string }{
		{SplitAll, "9bd336c99841545c0d22e159db3de5a565e6db5d09658e777f13a8668bd680ae"},
		{SplitTrain, "7c2e57cf98b4ad5500875fc7db29797276777d6ce2e45b446cf7d63bcb191fd2"},
		{SplitHeldout, "34fa5f447bb4de67ee6d5ce096b65549821a943426521c8ca000ce06e47844ca"},
	} {
		if h := jsonHash(t, mustTasks(t, c.split)); h != c.hash {
			t.Errorf("MakeTasks(%q) hash %s, want %s (the chapter's tasks changed)", c.split, h, c.hash)
		}
	}
}

// TestDemonstrationsPinned pins the demonstrations of the chapter's base agents: the calibrated recipe
// (DefaultBaseConfig) and the two 12.3 trains beside it (reads repeated now and then; a weaker read-to-edit
// mapping). Every token, owner, turn, mask, reward and terminal info counts.
func TestDemonstrationsPinned(t *testing.T) {
	tok, train := testSetup(t)
	rereading, weaker := DefaultBaseConfig(), DefaultBaseConfig()
	rereading.RereadProb, weaker.MappingRightProb = 0.2, 0.80
	for _, c := range []struct {
		name string
		cfg  BaseConfig
		hash string
	}{
		{"default", DefaultBaseConfig(), "da2e400b68760683cf4fe11cee4273664ee580722568bad0f51fd752ce6a8ad4"},
		{"rereading", rereading, "411d72eb4e073a874d4d94ebb79fa3afecb62d2c8b928eec1bfdb3023d0454ce"},
		{"weaker mapping", weaker, "0142850ff948846bfd2e88c2fdc57f9680e9ad500f487a33e9bd46b2c9ac057e"},
	} {
		demos, err := BaseRun{Engine: testEngine(), Config: c.cfg, Tasks: train, Tok: tok}.Demonstrations()
		if err != nil {
			t.Fatal(err)
		}
		if h := jsonHash(t, demos); h != c.hash {
			t.Errorf("%s: demonstrations hash %s, want %s (the base agent's demonstrations changed)", c.name, h, c.hash)
		}
	}
}

// TestTrainCreditPinned pins three steps of train_credit (TrainCredit, both schemes) from a tiny policy and its
// critic on the pure-Go backend: the trained policy's bytes (weights and Adam state), the critic's and the
// history.
func TestTrainCreditPinned(t *testing.T) {
	if !pureGo() {
		t.Skip("pinned on the pure-Go backend (GOMLX_BACKEND=go), whose bits do not depend on the processor")
	}
	tok, train, base, critic, cfg := creditWorkload(t)
	for _, c := range []struct{ scheme, hash string }{{"token", "cbe4e554582a359eae3ebc6ab2775d4676c2dfddb1b6580ac3a45b27ff54e2ec"}, {"turn", "0131f59bd45d137e0632bdc19ad005babd538e1021395a72d92b879aad07793f"}} {
		run, err := RunLoop(TrainCredit{Tasks: train, Tok: tok, Cfg: cfg, Steps: 3, Scheme: c.scheme, Lambda: 0.95, Critic: critic}, base)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.Write(modelBytes(t, run.Policy))
		if _, err := run.Critic.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		if err := json.NewEncoder(&b).Encode(run.History); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b.Bytes())
		if h := hex.EncodeToString(sum[:]); h != c.hash {
			t.Errorf("%s: train_credit run hash %s, want %s (the run changed)", c.scheme, h, c.hash)
		}
	}
}
