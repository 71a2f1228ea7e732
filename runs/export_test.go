package runs

import (
	"sync"

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

// TestEngine is testEngine for the package's external tests.
var TestEngine = testEngine
