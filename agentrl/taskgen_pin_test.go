package agentrl

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"
)

func tasksHash(t testing.TB, tasks []Task) string {
	t.Helper()
	b, err := json.Marshal(tasks)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

func TestPinPrint(t *testing.T) { t.Log(tasksHash(t, mustTasks(t, SplitAll))) }
