package ch12

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// testEngine is the engine of this package's tests: the one the environment asks for, made once per test binary.
var testEngine = sync.OnceValue(func() *gomlxmodel.Engine {
	e, err := gomlxmodel.NewEngine(gomlxmodel.EnvOptions())
	if err != nil {
		panic(err)
	}
	return e
})

// TestMain gives the executable cache of the chapters the tests set up a folder of their own, removed afterwards,
// unless the environment names one: Setup makes its engine as a reader's program does (DefaultOptions), which
// would otherwise use the user's cache folder.
func TestMain(m *testing.M) {
	if os.Getenv(gomlxmodel.XLACacheDirEnv) != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "ch12-xla-executables-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(gomlxmodel.XLACacheDirEnv, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
