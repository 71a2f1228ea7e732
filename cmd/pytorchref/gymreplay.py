"""The BugFix gym of agentrl replayed at the token level, and the episode bookkeeping of one GRPO step, shared by
the PyTorch (grpo_bench.py) and JAX (jax_grpo_bench.py) ports; standard library only.

The gym is a JSON dump of the Go one (go run ./cmd/pytorchref/dumpgym > gym.json): vocabulary, prompts, read and
test observations, hidden verdicts and error observations; calls are parsed like agentrl.ParseCall. The constants
are agentrl's DefaultRLConfig and gomlxmodel's DefaultConfig positions.
"""
import json

MAXLEN = 256
MAX_TURNS, MAX_CALL_TOKENS, MAX_EDITS = 6, 8, 1
TASKS_PER_STEP, GROUP, TEMPERATURE = 8, 8, 1.0
LR, CLIP_EPS, MAX_GRAD_NORM = 7e-4, 0.2, 1.0


class Gym:
    """The dumped BugFix gym: token ids of the vocabulary, observations and per-task outcomes."""

    def __init__(self, path):
        g = json.load(open(path))
        self.itos, self.sp, self.obs = g["itos"], g["special"], g["obs"]
        self.tools, self.ops, self.pool, self.tasks = g["tools"], g["ops"], g["name_pool"], g["tasks"]
        self.op_names = {i: g["itos"][i] for i in g["ops"]}
        assert MAX_EDITS == 1, "the dump holds the sources reachable with one edit"


class Env:
    """agentrl.EditBudgetEnv on token ids: at most MAX_TURNS calls and MAX_EDITS applied edits; submit ends the
    episode with reward 1 when the current source passes the hidden tests."""

    def __init__(self, gym, task, rename):
        self.g, self.task, self.rename = gym, task, rename
        self.state, self.turns, self.edits, self.done = task["start"], 0, 0, False

    def renamed(self, ids):
        return [self.rename.get(i, i) for i in ids]

    def step(self, call):  # -> (observation ids, reward, done)
        g, sp = self.g, self.g.sp
        self.turns += 1
        w = [i for i in call if i != sp["nl"]]  # strings.Fields(tok.Decode(call))
        inner = w[1:-1]
        if len(w) < 3 or w[0] != sp["call"] or w[-1] != sp["call_end"] or sp["call"] in inner or sp["call_end"] in inner:
            obs = g.obs["malformed"]
        elif inner[0] not in (g.tools["read"], g.tools["test"], g.tools["submit"], g.tools["edit"]):
            obs = g.obs["unknown_tool"]
        else:
            nargs = 1 if inner[0] == g.tools["edit"] else 0
            if len(inner) - 1 < nargs:
                obs = g.obs["missing_arg"]
            elif len(inner) - 1 > nargs:
                obs = g.obs["extra_arg"]
            elif nargs and inner[1] not in g.op_names:
                obs = g.obs["unknown_op"]
            elif inner[0] == g.tools["submit"]:
                self.done = True
                return [], float(self.state["hidden_pass"]), True
            elif inner[0] == g.tools["read"]:
                obs = self.renamed(self.state["read"])
            elif inner[0] == g.tools["test"]:
                obs = self.state["test"]
            elif self.edits >= MAX_EDITS:  # with MAX_EDITS = 1, self.state is an edited state
                obs = self.renamed(self.state["no_edits"])
            elif g.op_names[inner[1]] in self.task["edited"]:
                self.state = self.task["edited"][g.op_names[inner[1]]]
                obs = self.renamed(self.state["edit"])
                self.edits += 1
            else:
                obs = g.obs["no_site"]
        if self.turns >= MAX_TURNS:
            self.done = True
            return obs, 0.0, True
        return obs, 0.0, False


class Episode:
    """agentrl.Episode: <bos> prompt, then per call the call (policy) and <obs> observation </obs>."""

    def __init__(self, gym, task, rename):
        self.g, self.env = gym, Env(gym, task, rename)
        self.ids = [gym.sp["bos"]] + [rename.get(i, i) for i in task["issue"]]
        self.policy = [False] * len(self.ids)
        self.logp = [0.0] * len(self.ids)
        self.calls, self.done, self.reward = 0, False, 0.0

    def act(self, call, logp):
        sp = self.g.sp
        self.calls += 1
        self.ids += call
        self.policy += [True] * len(call)
        self.logp += logp
        obs, reward, done = self.env.step(call)
        if done or self.calls >= MAX_TURNS or len(self.ids) + len(obs) + 2 + MAX_CALL_TOKENS > MAXLEN:
            self.done, self.reward = True, reward
            return
        n = len(obs) + 2
        self.ids += [sp["obs"]] + obs + [sp["obs_end"]]
        self.policy += [False] * n
        self.logp += [0.0] * n


def sample_batch(gym, rnd):
    """agentrl.SampleStep's batch: TASKS_PER_STEP distinct tasks, each GROUP times, every episode renamed."""
    batch = []
    for t in rnd.sample(range(len(gym.tasks)), TASKS_PER_STEP):
        task = gym.tasks[t]
        for _ in range(GROUP):
            batch.append((task, dict(zip(task["idents"], rnd.sample(gym.pool, len(task["idents"]))))))
    return batch


