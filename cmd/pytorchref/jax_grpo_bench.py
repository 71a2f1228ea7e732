"""JAX port of one GRPO training step of agentrl (TrainRL with DefaultRLConfig), timed like grpo_bench.py.

The same step as grpo_bench.py: sample 64 episodes (8 training tasks x 8 episodes, renamed identifiers, 6 turns,
temperature 1) with a lockstep KV-cache sampler (agentrl.RolloutBatch), group-normalised advantages, then one
token_mean PPO-clip update with Adam (lr 7e-4, grad-norm clip 1, torch.optim.Adam's defaults) on the padded
batch. The gym is gymreplay.py's replay of a dumpgym dump. The model is gomlxmodel's TinyAgent (d 64, 4 heads,
3 pre-LN blocks, tanh-GELU MLP 192, final LayerNorm, 256 positions) as a pytree of arrays in Go's layout (dense
weights [in, out]; each layer tensor stacked over the layers, which the graphs scan).

Compiled graphs, all jax.jit:
  decode  one lockstep model step for all 64 rows: feeds each row's queued tokens (prefill chunk or the token
          sampled last), padded to a bucket of DECODE_BUCKETS, writes their keys and values into the KV cache
          ([L, B, MAXLEN, H, dh], donated, so that XLA may update it in place), attends to the cache's first positions
          (a bucket of SPAN_BUCKETS covering every row), and samples each row's next token from
          the logits at its last fed token (jax.random.categorical) with its log-probability.
  update  loss, gradients, grad-norm clip and Adam on a batch padded to a multiple of UPDATE_BUCKET positions;
          the parameters and the optimizer state are donated.
  forward logits of one sequence (the --logits check only).
Each distinct shape (decode: token bucket and span bucket; update: padded length) is one trace and one
compilation; the host only runs the gym and the queues.

    jax_grpo_bench.py gym.json [steps] [--policy FILE] [--logits FILE] [--update-check DIR]

One warm-up step, then `steps` (5) timed steps; prints one line per step on stderr and a final "RESULT key=value
..." line with grpo_bench.py's keys (per-step means of the timed steps: sample_s, update_s, sample_cpu_s,
update_cpu_s, tokens, decode_steps, sample_executed, sample_needed, update_executed, update_needed,
tokens_per_episode; first_sample_s, first_update_s of the warm-up step) and: first_traces, first_compile_s (new
jit traces of decode and update in the warm-up step and the seconds JAX reported tracing, lowering and compiling
in it: jax.monitoring's /jax/core/compile/ events), traces, compile_s (the same per timed step), the same per part
(sample_traces, sample_compile_s, update_traces, update_compile_s, and first_ before each for the warm-up step),
and shapes (distinct shapes of decode and update compiled in all).

With --logits (dumpgym -logits) it first prints "LOGITS max_abs_diff=... max_abs_logit=... positions=..." and
exits with status 1 beyond 1e-4; with 0 steps it does only that. With --update-check DIR it then samples one batch,
runs one update, writes DIR/episodes.json (each episode's ids, policy mask, sampling log-probabilities and
reward), DIR/before.npz and DIR/after.npz (the weights, Go's names and layout) and DIR/update.json (the loss), which
grpo_update_check.py replays through grpo_bench.py's update, and exits without timing steps (their first step
would find the graphs compiled).
"""
import argparse
import json
import math
import os
import random
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from tinyagent_stream import read_weights
from gymreplay import CLIP_EPS, GROUP, LR, MAX_CALL_TOKENS, MAX_GRAD_NORM, MAXLEN, TEMPERATURE, Episode, Gym, sample_batch

D, H, L, M = 64, 4, 3, 192
DH = D // H
LN_EPS = 1e-5
ADAM_B1, ADAM_B2, ADAM_EPS = 0.9, 0.999, 1e-8
LOGITS_TOLERANCE = 1e-4
DECODE_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)  # tokens fed per row in one decode step
SPAN_BUCKETS = (64, 128, 256)  # cache positions one decode step attends to
UPDATE_BUCKET = 32
LAYER_TENSORS = ("ln1_g", "ln1_b", "wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo", "ln2_g", "ln2_b", "w1", "b1", "w2", "b2")

_compile_s = 0.0


def _on_duration(name, secs, **_):
    global _compile_s
    if name.startswith("/jax/core/compile/"):
        _compile_s += secs


jax.monitoring.register_event_duration_secs_listener(_on_duration)


def read_tinyagent(path):
    """The weights of a TinyAgent stream (tinyagent_stream.read_weights): the vocabulary size and {Go name: float32
    array}."""
    cfg, tensors = read_weights(path, 2 + L * len(LAYER_TENSORS) + 4)
    if cfg[1:] != [MAXLEN, D, H, L, M]:
        raise ValueError(f"{path}: configuration {cfg}, this port's is [vocab, {MAXLEN}, {D}, {H}, {L}, {M}]")
    out = {name: np.frombuffer(raw, dtype="<f4").reshape(dims).copy() for name, dims, raw in tensors}
    return cfg[0], out


def init_params(V, seed):
    """gomlxmodel's initialisation in Go's names: N(0, 0.02) weights and embeddings, wo and w2 scaled by
    1/sqrt(2L), zero biases, unit LayerNorm gains."""
    rng = np.random.default_rng(seed)
    n = lambda *s, std=0.02: (rng.standard_normal(s) * std).astype(np.float32)
    p = {"tok": n(V, D), "pos": n(MAXLEN, D), "lnf_g": np.ones(D, np.float32), "lnf_b": np.zeros(D, np.float32),
         "head_w": n(D, V), "head_b": np.zeros(V, np.float32)}
    for i in range(L):
        for w, shape in (("q", (D, D)), ("k", (D, D)), ("v", (D, D)), ("o", (D, D)), ("1", (D, M)), ("2", (M, D))):
            p[f"layer{i}/w{w}"] = n(*shape, std=0.02 / math.sqrt(2 * L) if w in "o2" else 0.02)
            p[f"layer{i}/b{w}"] = np.zeros(shape[1], np.float32)
        for ln in ("ln1", "ln2"):
            p[f"layer{i}/{ln}_g"], p[f"layer{i}/{ln}_b"] = np.ones(D, np.float32), np.zeros(D, np.float32)
    return p


def to_tree(flat):
    """{Go name: array} -> the pytree the graphs take: {"tok", "pos", "lnf_g", "lnf_b", "head_w", "head_b",
    "layers": {tensor: the L layers' arrays stacked on a leading axis}} (the graphs scan over the layers)."""
    tree = {k: jnp.asarray(flat[k]) for k in ("tok", "pos", "lnf_g", "lnf_b", "head_w", "head_b")}
    tree["layers"] = {t: jnp.asarray(np.stack([flat[f"layer{i}/{t}"] for i in range(L)])) for t in LAYER_TENSORS}
    return tree


def to_flat(tree):
    """The inverse of to_tree, as numpy arrays."""
    flat = {k: np.asarray(v) for k, v in tree.items() if k != "layers"}
    for t, v in tree["layers"].items():
        flat.update({f"layer{i}/{t}": np.asarray(v[i]) for i in range(L)})
    return flat


def layer_norm(x, g, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + LN_EPS) * g + b


def mlp(p, x):
    return jax.nn.gelu(layer_norm(x, p["ln2_g"], p["ln2_b"]) @ p["w1"] + p["b1"], approximate=True) @ p["w2"] + p["b2"]


def qkv(p, x):  # [..., n, D] -> three [..., n, H, dh]
    h = layer_norm(x, p["ln1_g"], p["ln1_b"])
    split = lambda y: y.reshape(*y.shape[:-1], H, DH)
    return split(h @ p["wq"] + p["bq"]), split(h @ p["wk"] + p["bk"]), split(h @ p["wv"] + p["bv"])


def attend(q, k, v, mask):  # q [B, n, H, dh], k and v [B, S, H, dh], mask [B, n, S] -> [B, n, D]
    att = jnp.einsum("bnhd,bshd->bhns", q, k) / math.sqrt(DH)
    att = jnp.where(mask[:, None], att, -jnp.inf)
    y = jnp.einsum("bhns,bshd->bnhd", jax.nn.softmax(att, -1), v)
    return y.reshape(*y.shape[:2], D)


def logits_of(params, ids):
    """Causal forward of a padded batch: ids [B, T] -> logits [B, T, V]."""
    T = ids.shape[1]
    x = params["tok"][ids] + params["pos"][:T]
    mask = jnp.broadcast_to(jnp.tril(jnp.ones((T, T), bool)), (ids.shape[0], T, T))

    def layer(x, p):
        q, k, v = qkv(p, x)
        x = x + attend(q, k, v, mask) @ p["wo"] + p["bo"]
        return x + mlp(p, x), None

    x, _ = jax.lax.scan(layer, x, params["layers"])
    return layer_norm(x, params["lnf_g"], params["lnf_b"]) @ params["head_w"] + params["head_b"]


forward = jax.jit(logits_of)


def _decode(params, caches, tokens, start, count, key, span):
    """One lockstep model step. tokens [B, n]: row b's count[b] queued tokens, at positions start[b] + i; the
    rest is padding, neither cached nor attended. caches: (keys, values), each [L, B, MAXLEN, H, dh].
    span (static): the cache positions attended to, at least start + count of every row. Returns the caches with the fed tokens' keys and values written, each row's token sampled at temperature
    TEMPERATURE from the logits at its last fed token, that token's log-probability, and the next key."""
    B, n = tokens.shape
    pos = start[:, None] + jnp.arange(n)[None]  # [B, n]
    valid = jnp.arange(n)[None] < count[:, None]
    write = jnp.where(valid, pos, MAXLEN)  # out of bounds: dropped
    rows = jnp.arange(B)[:, None]
    mask = jnp.arange(span)[None, None] <= pos[:, :, None]  # [B, n, span]
    x = params["tok"][tokens] + params["pos"][jnp.minimum(pos, MAXLEN - 1)]

    def layer(carry, p):
        x, kc, vc, i = carry
        q, k, v = qkv(p, x)
        kc = kc.at[i, rows, write].set(k, mode="drop")
        vc = vc.at[i, rows, write].set(v, mode="drop")
        ks = jax.lax.dynamic_index_in_dim(kc, i, 0, keepdims=False)[:, :span]
        vs = jax.lax.dynamic_index_in_dim(vc, i, 0, keepdims=False)[:, :span]
        x = x + attend(q, ks, vs, mask) @ p["wo"] + p["bo"]
        return (x + mlp(p, x), kc, vc, i + 1), None

    (x, kc, vc, _), _ = jax.lax.scan(layer, (x, *caches, 0), params["layers"])
    last = x[jnp.arange(B), jnp.maximum(count - 1, 0)]
    logp = jax.nn.log_softmax((layer_norm(last, params["lnf_g"], params["lnf_b"]) @ params["head_w"] + params["head_b"]) / TEMPERATURE)
    key, sub = jax.random.split(key)
    tok = jax.random.categorical(sub, logp)
    return (kc, vc), tok, jnp.take_along_axis(logp, tok[:, None], 1)[:, 0], key


decode = jax.jit(_decode, static_argnums=(6,), donate_argnums=(1,))


def _loss(params, ids, mask, old_logp, adv):
    """token_mean PPO-clip loss of a padded batch: ids [B, T], mask, old_logp and adv [B, T-1]."""
    logp = jax.nn.log_softmax(logits_of(params, ids)[:, :-1], -1)
    logp = jnp.take_along_axis(logp, ids[:, 1:, None], -1)[..., 0]
    ratio = jnp.exp(logp - old_logp)
    per_tok = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - CLIP_EPS, 1 + CLIP_EPS) * adv)
    return (per_tok * mask).sum() / jnp.maximum(mask.sum(), 1.0)


def _update(params, opt, ids, mask, old_logp, adv):
    """One Adam step (torch.optim.Adam's defaults and bias correction) on the loss's gradients, clipped to global
    norm MAX_GRAD_NORM as torch.nn.utils.clip_grad_norm_ does. opt: (step, first moments, second moments)."""
    loss, grads = jax.value_and_grad(_loss)(params, ids, mask, old_logp, adv)
    leaves = jax.tree_util.tree_leaves(grads)
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in leaves))
    scale = jnp.minimum(1.0, MAX_GRAD_NORM / (norm + 1e-6))
    step, m, v = opt
    step = step + 1
    m = jax.tree_util.tree_map(lambda m, g: ADAM_B1 * m + (1 - ADAM_B1) * g * scale, m, grads)
    v = jax.tree_util.tree_map(lambda v, g: ADAM_B2 * v + (1 - ADAM_B2) * (g * scale) ** 2, v, grads)
    bc1, bc2 = 1 - ADAM_B1 ** step, 1 - ADAM_B2 ** step
    params = jax.tree_util.tree_map(lambda p, m, v: p - (LR / bc1) * m / (jnp.sqrt(v) / jnp.sqrt(bc2) + ADAM_EPS), params, m, v)
    return params, (step, m, v), loss


update_step = jax.jit(_update, donate_argnums=(0, 1))


def traces():
    """Shapes the step's graphs (decode, update) have been traced and compiled for so far."""
    return decode._cache_size() + update_step._cache_size()


def bucket(n, buckets):
    return next(b for b in buckets if b >= n)


def rollout(params, gym, batch, key):
    """agentrl.RolloutBatch as grpo_bench.py's rollout: all episodes advance together; each model step feeds every
    row's queue (padded to a bucket) and samples one token per unfinished episode; a call ends at </call> or
    MAX_CALL_TOKENS tokens and its observation is queued as a prefill. Returns the episodes, the model steps, the
    token positions the steps executed (rows x bucket) and needed (tokens fed), and the next key."""
    episodes = [Episode(gym, task, rename) for task, rename in batch]
    B = len(episodes)
    caches = (jnp.zeros((L, B, MAXLEN, H, DH)), jnp.zeros((L, B, MAXLEN, H, DH)))
    lens = np.zeros(B, np.int32)
    queues = [list(e.ids) for e in episodes]
    fed = [len(e.ids) for e in episodes]
    calls, call_logp = [[] for _ in range(B)], [[] for _ in range(B)]
    steps = executed = needed = 0
    call_end = gym.sp["call_end"]
    while any(not e.done for e in episodes):
        count = np.array([len(q) for q in queues], np.int32)
        n = bucket(int(count.max()), DECODE_BUCKETS)
        span = bucket(int((lens + count).max()), SPAN_BUCKETS)
        tokens = np.zeros((B, n), np.int32)
        for b, q in enumerate(queues):
            tokens[b, : len(q)] = q
        executed += B * n
        needed += int(count.sum())
        caches, tok, lp, key = decode(params, caches, tokens, lens, count, key, span)
        lens = lens + count
        for q in queues:
            q.clear()
        steps += 1
        tok, lp = np.asarray(tok).tolist(), np.asarray(lp).tolist()
        for b, e in enumerate(episodes):
            if e.done:
                continue
            calls[b].append(tok[b])
            call_logp[b].append(lp[b])
            if tok[b] == call_end or len(calls[b]) == MAX_CALL_TOKENS:
                e.act(calls[b], call_logp[b])
                calls[b], call_logp[b] = [], []
                if not e.done:
                    queues[b] += e.ids[fed[b]:]
                    fed[b] = len(e.ids)
                continue
            queues[b].append(tok[b])
            fed[b] += 1
    return episodes, steps, executed, needed, key


def advantages(rewards):
    """agentrl.ComputeAdvantages: (r - group mean) / (unbiased group std + 1e-6)."""
    r = np.asarray(rewards, np.float64).reshape(-1, GROUP)
    return ((r - r.mean(1, keepdims=True)) / (r.std(1, ddof=1, keepdims=True) + 1e-6)).reshape(-1).astype(np.float32)


def collate(episodes, pad):
    """The padded update batch: ids [B, T] with T the longest episode rounded up to UPDATE_BUCKET, and the policy
    mask, sampling log-probabilities and broadcast advantages of positions 1..T-1."""
    B = len(episodes)
    T = -(-max(len(e.ids) for e in episodes) // UPDATE_BUCKET) * UPDATE_BUCKET
    ids = np.full((B, T), pad, np.int32)
    mask, old_logp = np.zeros((B, T - 1), np.float32), np.zeros((B, T - 1), np.float32)
    for b, e in enumerate(episodes):
        n = len(e.ids)
        ids[b, :n] = e.ids
        mask[b, : n - 1] = e.policy[1:]
        old_logp[b, : n - 1] = e.logp[1:]
    adv = advantages([e.reward for e in episodes])[:, None] * mask
    return ids, mask, old_logp, adv


def update(params, opt, episodes, pad):
    """Collate and one update; returns the new parameters and optimizer state, the loss, and the token
    positions executed (rows x padded length) and needed (per episode, up to its last policy token)."""
    ids, mask, old_logp, adv = collate(episodes, pad)
    params, opt, loss = update_step(params, opt, ids, mask, old_logp, adv)
    needed = sum(max(i for i, p in enumerate(e.policy) if p) for e in episodes)
    return params, opt, float(loss), ids.size, needed


def check_logits(params, path):
    """Largest |JAX - Go| logit on a dumpgym -logits file's sequences, the largest |logit|, positions compared."""
    diff, top, positions = 0.0, 0.0, 0
    for case in json.load(open(path))["cases"]:
        ids = np.asarray(case["ids"], np.int32)[None]
        got = np.asarray(forward(params, ids))[0]
        want = np.asarray(case["logits"], np.float32).reshape(got.shape)
        diff, top = max(diff, float(np.abs(got - want).max())), max(top, float(np.abs(want).max()))
        positions += ids.shape[1]
    return diff, top, positions


def update_check(params, opt, gym, rnd, key, out):
    """Samples one batch, runs one update on copies of params and opt (the update donates them) and writes what
    grpo_update_check.py replays (see the module doc)."""
    os.makedirs(out, exist_ok=True)
    params, opt = jax.tree_util.tree_map(jnp.copy, (params, opt))
    np.savez(os.path.join(out, "before.npz"), **to_flat(params))
    episodes, _, _, _, key = rollout(params, gym, sample_batch(gym, rnd), key)
    params, opt, loss, _, _ = update(params, opt, episodes, gym.sp["pad"])
    np.savez(os.path.join(out, "after.npz"), **to_flat(params))
    json.dump([{"ids": e.ids, "policy": e.policy, "logp": e.logp, "reward": e.reward} for e in episodes],
              open(os.path.join(out, "episodes.json"), "w"))
    json.dump({"loss": loss, "pad": gym.sp["pad"]}, open(os.path.join(out, "update.json"), "w"))
    print(f"UPDATE_CHECK loss={loss:.6g} dir={out}")


def main():
    ap = argparse.ArgumentParser(description="One GRPO step of agentrl in JAX (see the module's doc).")
    ap.add_argument("gym", help="the gym dumped by go run ./cmd/pytorchref/dumpgym")
    ap.add_argument("steps", type=int, nargs="?", default=5, help="timed steps after the warm-up step (0: only the checks)")
    ap.add_argument("--policy", help="start from this TinyAgent stream (dumpgym -policy) instead of a fresh model")
    ap.add_argument("--logits", help="first check the model's logits against Go's (dumpgym -logits)")
    ap.add_argument("--update-check", metavar="DIR", help="write one sampled batch and the weights around its update to DIR")
    args = ap.parse_args()
    gym, steps = Gym(args.gym), args.steps
    if args.policy:
        V, flat = read_tinyagent(args.policy)
        if V != len(gym.itos):
            raise SystemExit(f"{args.policy}: a model of {V} words, the gym has {len(gym.itos)}")
    else:
        flat = init_params(len(gym.itos), 1)
    params = to_tree(flat)
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}, {sum(x.size for x in flat.values())} parameters",
          file=sys.stderr)
    if args.logits:
        diff, top, positions = check_logits(params, args.logits)
        print(f"LOGITS max_abs_diff={diff:.3g} max_abs_logit={top:.3g} positions={positions}")
        if not diff <= LOGITS_TOLERANCE:
            print(f"jax_grpo_bench.py: logits differ from Go's by {diff:.3g} > {LOGITS_TOLERANCE:g}", file=sys.stderr)
            sys.exit(1)
    zeros = lambda: jax.tree_util.tree_map(jnp.zeros_like, params)
    opt = (jnp.zeros((), jnp.float32), zeros(), zeros())
    rnd, key = random.Random(0), jax.random.key(0)
    if args.update_check:
        update_check(params, opt, gym, random.Random(1), jax.random.key(1), args.update_check)
        return
    if steps == 0:
        return
    keys = ("sample_s", "update_s", "sample_cpu_s", "update_cpu_s", "tokens", "decode_steps", "sample_executed",
            "sample_needed", "update_executed", "update_needed", "traces", "compile_s", "sample_traces",
            "sample_compile_s", "update_traces", "update_compile_s")
    totals = dict.fromkeys(keys + ("episodes",), 0.0)
    for step in range(steps + 1):  # step 0 is the warm-up
        n0, k0 = traces(), _compile_s
        t0, c0 = time.perf_counter(), time.process_time()
        episodes, dsteps, s_exec, s_need, key = rollout(params, gym, sample_batch(gym, rnd), key)
        t1, c1 = time.perf_counter(), time.process_time()
        n1, k1 = traces(), _compile_s
        params, opt, loss, u_exec, u_need = update(params, opt, episodes, gym.sp["pad"])
        t2, c2 = time.perf_counter(), time.process_time()
        new, comp = traces() - n0, _compile_s - k0
        parts = {"sample_traces": n1 - n0, "sample_compile_s": k1 - k0, "update_traces": new - (n1 - n0),
                 "update_compile_s": comp - (k1 - k0)}
        tokens = sum(len(e.ids) for e in episodes)
        print(f"step {step}{' (warm-up)' if step == 0 else ''}: sample {t1 - t0:.3f}s (cpu {c1 - c0:.3f}s) "
              f"update {t2 - t1:.3f}s (cpu {c2 - c1:.3f}s) tokens {tokens} decode steps {dsteps} "
              f"pass {sum(e.reward for e in episodes) / len(episodes):.3f} loss {loss:+.4f} "
              f"new traces {new} ({comp:.3f}s)", file=sys.stderr)
        if step == 0:
            first = {"first_sample_s": t1 - t0, "first_update_s": t2 - t1, "first_traces": new, "first_compile_s": comp}
            first.update({"first_" + k: v for k, v in parts.items()})
            continue
        for k, v in (("sample_s", t1 - t0), ("update_s", t2 - t1), ("sample_cpu_s", c1 - c0),
                     ("update_cpu_s", c2 - c1), ("tokens", tokens), ("episodes", len(episodes)),
                     ("decode_steps", dsteps), ("sample_executed", s_exec), ("sample_needed", s_need),
                     ("update_executed", u_exec), ("update_needed", u_need), ("traces", new), ("compile_s", comp),
                     *parts.items()):
            totals[k] += v
    out = {k: totals[k] / steps for k in keys}
    out["tokens_per_episode"] = totals["tokens"] / totals["episodes"]
    out.update(first)
    out["shapes"] = traces()
    print("RESULT " + " ".join(f"{k}={v:.4f}" for k, v in out.items()))


if __name__ == "__main__":
    main()
