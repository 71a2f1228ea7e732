package ch12

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/codekey"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/runs"
	"github.com/agentrl-go/agentrl/store"
)

// testChapter is the chapter with a small random policy in place of the base agent, in a store of its own.
func testChapter(t *testing.T) *Chapter {
	t.Helper()
	t.Setenv(store.Env, t.TempDir())
	ch, err := Setup()
	if err != nil {
		t.Fatal(err)
	}
	ch.Store.Notices = testWriter{t}
	base, err := gomlxmodel.New(ch.Engine, gomlxmodel.DefaultConfig(ch.Tok.VocabSize()), 3)
	if err != nil {
		t.Fatal(err)
	}
	ch.base = func() (*gomlxmodel.Model, error) { return base, nil }
	return ch
}

// testWriter logs what the store notes.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// freshCritic and otherCritic are two warm-ups.
func freshCritic(base *gomlxmodel.Model, _ []agentrl.Task, _ *agentrl.Tokenizer, _ agentrl.RLConfig) (*gomlxmodel.Critic, error) {
	return gomlxmodel.NewCritic(base, 1)
}

func otherCritic(base *gomlxmodel.Model, _ []agentrl.Task, _ *agentrl.Tokenizer, _ agentrl.RLConfig) (*gomlxmodel.Critic, error) {
	return gomlxmodel.NewCritic(base, 2)
}

// TestCriticIsStoredByCode checks that Critic computes a warm-up once per configuration and warm-up code, and
// loads it after.
func TestCriticIsStoredByCode(t *testing.T) {
	ch := testChapter(t)
	cfg := agentrl.DefaultRLConfig()
	var notices strings.Builder
	ch.Store.Notices = &notices
	for _, tc := range []struct {
		name  string
		warm  WarmFunc
		cfg   func(agentrl.RLConfig) agentrl.RLConfig
		calls int
	}{
		{"first", freshCritic, func(c agentrl.RLConfig) agentrl.RLConfig { return c }, 1},
		{"again: loaded", freshCritic, func(c agentrl.RLConfig) agentrl.RLConfig { return c }, 1},
		{"another warm-up", otherCritic, func(c agentrl.RLConfig) agentrl.RLConfig { return c }, 2},
		{"another configuration", freshCritic, func(c agentrl.RLConfig) agentrl.RLConfig { c.Reward.StepPenalty = 0.05; return c }, 3},
	} {
		codekey.NewProgram() // each case stands for a program of its own
		if _, err := ch.Critic(tc.cfg(cfg), tc.warm); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if n := strings.Count(notices.String(), "cache: computed"); n != tc.calls {
			t.Errorf("%s: %d warm-ups so far, want %d\n%s", tc.name, n, tc.calls, notices.String())
		}
	}
}

// TestRunsCheckBeforeBase checks that a run the chapter cannot train is refused, saying why, before the base agent
// is made or loaded.
func TestRunsCheckBeforeBase(t *testing.T) {
	ch := testChapter(t)
	ch.base = func() (*gomlxmodel.Model, error) {
		t.Fatal("the base agent was asked for")
		return nil, nil
	}
	cfg := agentrl.DefaultRLConfig()
	one := cfg
	one.GroupSize = 1
	lambda := 0.9
	capturing := agentrl.AdvantageFunc(func(s agentrl.StepBatch) ([][]float32, error) {
		return agentrl.CreditAdvantages{Scheme: "token", Lambda: lambda}.Advantages(s)
	})
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"no warm-up", func() error { _, err := ch.Critic(cfg, nil); return err }, "warm is nil"},
		{"groups of one", func() error { _, err := ch.Run(one); return err }, "GroupSize = 1"},
		{"a captured value", func() error { _, err := ch.Run(cfg, agentrl.WithAdvantages(capturing)); return err }, "captures lambda"},
		{"a method value", func() error {
			_, err := ch.Run(cfg, agentrl.InEnv(agentrl.EnvFactory(agentrl.EarlyStop{Cfg: cfg, MaxInvalid: 2}.NewEnv)))
			return err
		}, "method value"},
		{"a nil loop", func() error { _, err := ch.RunLoop(nil); return err }, "nil"},
	} {
		err := tc.run()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

// TestRunKeysHoldEveryValue is the mutation test of the chapter's runs: changing any value that determines a run
// (each configuration field, the environment and its arguments, the estimator and its parameters, metrics, the
// schedule, the critic, the base agent, the tasks) changes its key, and the same values give the same key.
func TestRunKeysHoldEveryValue(t *testing.T) {
	ch := testChapter(t)
	base, _ := ch.Base()
	cfg := agentrl.DefaultRLConfig()
	cost := cfg
	cost.Reward.StepPenalty = 0.05
	critic, err := gomlxmodel.NewCritic(base, 1)
	if err != nil {
		t.Fatal(err)
	}
	other, err := gomlxmodel.New(ch.Engine, gomlxmodel.DefaultConfig(ch.Tok.VocabSize()), 4)
	if err != nil {
		t.Fatal(err)
	}
	key := func(b *gomlxmodel.Model, env runEnv, cfg agentrl.RLConfig, opts ...agentrl.RunOption) string {
		t.Helper()
		g, err := agentrl.GRPO{Tasks: ch.Train, Tok: ch.Tok, Cfg: cfg, Steps: Steps, Env: env.New, LogEpisodes: true}.With(opts...)
		if err != nil {
			t.Fatal(err)
		}
		if env.Tasks != nil {
			g.Tasks = env.Tasks
		}
		k, err := runs.Key(b, g, ch.Train, ch.HeldOutTasks, ch.Tok)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	credit := func(scheme string, lambda float64) agentrl.RunOption {
		return agentrl.WithAdvantages(agentrl.CreditAdvantages{Scheme: scheme, Lambda: lambda})
	}
	keys := map[string]string{}
	add := func(name, k string) {
		t.Helper()
		if prev, ok := keys[k]; ok {
			t.Errorf("%s and %s share the key %s", name, prev, k)
		}
		keys[k] = name
	}
	add("default", key(base, runEnv{}, cfg))
	if key(base, runEnv{}, cfg) != key(base, runEnv{}, agentrl.DefaultRLConfig()) {
		t.Error("the same run has two keys")
	}
	for name, c := range mutations(cfg) {
		add("cfg."+name, key(base, runEnv{}, c))
	}
	add("early stop 1", key(base, runEnv{New: agentrl.EarlyStop{Cfg: cfg, MaxInvalid: 1}}, cfg))
	add("early stop 2", key(base, runEnv{New: agentrl.EarlyStop{Cfg: cfg, MaxInvalid: 2}}, cfg))
	add("early stop 1, cost", key(base, runEnv{New: agentrl.EarlyStop{Cfg: cost, MaxInvalid: 1}}, cfg))
	add("tasks", key(base, runEnv{Tasks: ch.Train[:10]}, cfg))
	add("token 0.95", key(base, runEnv{}, cost, agentrl.WithCritic(critic), credit("token", 0.95)))
	add("turn 0.9", key(base, runEnv{}, cost, agentrl.WithCritic(critic), credit("turn", 0.9)))
	add("token 0.9", key(base, runEnv{}, cost, agentrl.WithCritic(critic), credit("token", 0.9)))
	add("turn 0.95", key(base, runEnv{}, cost, agentrl.WithCritic(critic), credit("turn", 0.95)))
	add("cost, no critic", key(base, runEnv{}, cost))
	add("cost, critic", key(base, runEnv{}, cost, agentrl.WithCritic(critic)))
	add("group advantages", key(base, runEnv{}, cfg, agentrl.WithAdvantages(agentrl.AdvantageFunc(agentrl.GroupAdvantages))))
	add("a metric", key(base, runEnv{}, cfg, agentrl.WithMetric("pass", agentrl.MetricFunc(batchPass))))
	add("a metric named otherwise", key(base, runEnv{}, cfg, agentrl.WithMetric("pass rate", agentrl.MetricFunc(batchPass))))
	add("a schedule", key(base, runEnv{}, cost, agentrl.WithSchedule(agentrl.RampedPenalty(cost, Steps))))
	add("fresh optimizer", key(base, runEnv{}, cfg, agentrl.FreshOptimizer()))
	add("another base", key(other, runEnv{}, cfg))
}

// batchPass is a metric for TestRunKeysHoldEveryValue.
func batchPass(s agentrl.StepBatch) float64 { return agentrl.BehaviorStats(s.Trajs).PassRate }

// mutations returns cfg with each of its number and boolean fields, nested ones included, changed in turn.
func mutations(cfg agentrl.RLConfig) map[string]agentrl.RLConfig {
	out := map[string]agentrl.RLConfig{}
	var walk func(v reflect.Value, path string)
	root := reflect.ValueOf(&cfg).Elem()
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i), path+"."+v.Type().Field(i).Name)
				}
			}
			return
		case reflect.Int, reflect.Int64, reflect.Int32:
			old := v.Int()
			v.SetInt(old + 1)
			out[path[1:]] = root.Interface().(agentrl.RLConfig)
			v.SetInt(old)
		case reflect.Uint64, reflect.Uint, reflect.Uint32:
			old := v.Uint()
			v.SetUint(old + 1)
			out[path[1:]] = root.Interface().(agentrl.RLConfig)
			v.SetUint(old)
		case reflect.Float64, reflect.Float32:
			old := v.Float()
			v.SetFloat(old + 0.5)
			out[path[1:]] = root.Interface().(agentrl.RLConfig)
			v.SetFloat(old)
		case reflect.Bool:
			v.SetBool(!v.Bool())
			out[path[1:]] = root.Interface().(agentrl.RLConfig)
			v.SetBool(!v.Bool())
		case reflect.String:
			old := v.String()
			v.SetString(old + "x")
			out[path[1:]] = root.Interface().(agentrl.RLConfig)
			v.SetString(old)
		}
	}
	walk(root, "")
	return out
}

// runEnv is the environment and tasks of a run whose key TestRunKeysHoldEveryValue takes.
type runEnv struct {
	New   agentrl.EnvMaker
	Tasks []agentrl.Task
}
