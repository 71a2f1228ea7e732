package gomlxmodel

import "sync"

// testEngines are the engines of this package's tests, one per schedule, all on the backend EnvOptions describe
// (made once per test binary, after TestMain has named the executable cache's folder).
var testEngines = struct {
	sync.Mutex
	by map[schedule]*Engine
}{by: map[schedule]*Engine{}}

// testEng is the tests' engine with the schedule every program uses.
func testEng() *Engine { return engineWith(schedule{}) }

// engineWith is the tests' engine with schedule s: the padded oracles and a smaller attention chunk share the
// default engine's backend and have executors of their own.
func engineWith(s schedule) *Engine {
	testEngines.Lock()
	defer testEngines.Unlock()
	if e := testEngines.by[s]; e != nil {
		return e
	}
	var e *Engine
	if base := testEngines.by[schedule{}]; base != nil {
		e = newEngine(base.backend, base.plugin, s)
	} else {
		b, plugin, err := newBackend(EnvOptions())
		if err != nil {
			panic(err)
		}
		e = newEngine(b, plugin, schedule{})
		testEngines.by[schedule{}] = e
		if s != (schedule{}) {
			e = newEngine(b, plugin, s)
		}
	}
	testEngines.by[s] = e
	return e
}

// viewOn is m's weights computing on e: the tests' way to run one model under two schedules. The view shares
// m's tensors; an update of either replaces its own.
func (m *Model) viewOn(e *Engine) *Model {
	st := *m.st
	st.eng = e
	return &Model{st: &st}
}

// engined is a model or a critic, whose engine a test may move.
type engined interface{ setEngine(*Engine) *Engine }

func (m *Model) setEngine(e *Engine) (prev *Engine)  { prev, m.st.eng = m.st.eng, e; return prev }
func (c *Critic) setEngine(e *Engine) (prev *Engine) { prev, c.st.eng = c.st.eng, e; return prev }

// withPacking runs f with nets computing on the tests' engine whose updates pack their rows (on) or keep them
// padded, with attention chunks of 8 positions, so that the tests' short rows (32 positions) take the
// block-causal path; afterwards nets compute on their own engines again.
func withPacking(on bool, nets []engined, f func()) {
	e := engineWith(schedule{paddedUpdates: !on, attentionChunk: 8})
	prev := make([]*Engine, len(nets))
	for i, n := range nets {
		prev[i] = n.setEngine(e)
	}
	defer func() {
		for i, n := range nets {
			n.setEngine(prev[i])
		}
	}()
	f()
}

// freshEngine is an engine of its own on the tests' backend: no executor, no compilation counted yet.
func freshEngine() *Engine {
	base := testEng()
	return newEngine(base.backend, base.plugin, schedule{})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
