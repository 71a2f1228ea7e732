"""PyTorch port of one GRPO training step of agentrl (TrainRL), timed like agentrl's BenchmarkGRPOStep.

One step = sample 64 episodes (8 training tasks x 8 episodes, renamed identifiers, 6 turns, temperature 1) with a
lockstep KV-cache sampler (agentrl.RolloutBatch), group-normalised advantages (ComputeAdvantages), then one
token_mean PPO-clip update with Adam (lr 7e-4, grad-norm clip 1) on the padded batch (RLUpdate): DefaultRLConfig.

The model is bench.py's TinyAgent blocks (d 64, 4 heads, 3 pre-LN layers, tanh-GELU MLP 192, 256 positions) with
the Go tokenizer's vocabulary: with --policy, the weights of a TinyAgent stream written by gomlxmodel's
Model.WriteTo (dumpgym -policy writes the chapter's RL base agent); without, gomlxmodel's GPT-2 initialisation.
The gym is replayed at the token level (gymreplay.py) from a JSON dump of the Go one (go run
./cmd/pytorchref/dumpgym > gym.json): same vocabulary, prompts, read and test observations, hidden verdicts and
error observations; calls are parsed like agentrl.ParseCall.

    python3 grpo_bench.py gym.json [steps] [--policy base.tinyagent] [--logits logits.json]

One warm-up step, then `steps` (5) timed steps. Prints one line per timed step and a final "RESULT key=value ..."
line with per-step means: sample_s, update_s (wall), sample_cpu_s, update_cpu_s (process CPU, all threads), tokens
(all episodes), tokens_per_episode, decode_steps (model steps of the rollout), and the token positions each phase
executed against those it needed, like gomlxmodel's DecodePositions and UpdatePositions: sample_executed (rows x
token slots of every decode call), sample_needed (tokens fed), update_executed (rows x length of the padded
batch), update_needed (each episode's positions up to the last one the loss reads), and first_sample_s and
first_update_s, the wall seconds of the warm-up step's two phases.

With --logits (dumpgym -logits: sequences and the Go model's logits on them) it first prints
"LOGITS max_abs_diff=... max_abs_logit=... positions=..." for the loaded model, and exits with status 1 when the
largest difference exceeds 1e-4; with 0 steps it does only that.
"""
import argparse
import json
import math
import random
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from bench import DH, H, L, MAXLEN, Block, D  # also sets torch.set_num_threads (TORCH_THREADS, default 2)

from tinyagent_stream import read_weights
from gymreplay import CLIP_EPS, GROUP, LR, MAX_CALL_TOKENS, MAX_GRAD_NORM, TEMPERATURE, Episode, Gym, sample_batch
LOGITS_TOLERANCE = 1e-4


class Agent(nn.Module):
    """TinyAgent with vocabulary V and a decode step that runs a chunk of queued tokens per row."""

    def __init__(self, V):
        super().__init__()
        self.tok, self.pos = nn.Embedding(V, D), nn.Embedding(MAXLEN, D)
        self.blocks = nn.ModuleList(Block() for _ in range(L))
        self.ln, self.head = nn.LayerNorm(D), nn.Linear(D, V)
        # gomlxmodel's init: N(0, 0.02) weights and embeddings, wo/w2 scaled by 1/sqrt(2L), zero biases.
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif p.dim() == 1:
                nn.init.ones_(p)
            else:
                std = 0.02 / math.sqrt(2 * L) if name.endswith(("o.weight", "fc2.weight")) else 0.02
                nn.init.normal_(p, std=std)

    def forward(self, ids):  # [B, T] -> logits [B, T, V]
        t = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(t))
        mask = torch.full((t, t), float("-inf")).triu(1)
        for blk in self.blocks:
            x = blk(x, mask)
        return self.head(self.ln(x))

    @torch.no_grad()
    def decode(self, queues, lens, caches):
        """Runs every row's queued tokens (prefill or the last sampled token) through the KV caches
        (per layer [B, H, MAXLEN, dh] keys and values) and returns each row's next-token logits [B, V]."""
        B, n = len(queues), max(len(q) for q in queues)
        tokens = torch.zeros(B, n, dtype=torch.long)
        for b, q in enumerate(queues):
            tokens[b, : len(q)] = torch.tensor(q, dtype=torch.long)
        start = torch.tensor(lens)
        count = torch.tensor([len(q) for q in queues])
        pos = start[:, None] + torch.arange(n)[None]  # [B, n]
        valid = torch.arange(n)[None] < count[:, None]
        bi, ii = valid.nonzero(as_tuple=True)
        pi = pos[bi, ii]
        need = int((start + count).max())
        mask = torch.where(torch.arange(need)[None, None] <= pos[:, :, None], 0.0, float("-inf"))[:, None]
        x = self.tok(tokens) + self.pos(pos.clamp(max=MAXLEN - 1))
        for blk, (kc, vc) in zip(self.blocks, caches):
            h = blk.ln1(x)
            q, k, v = blk.heads(blk.q(h)), blk.heads(blk.k(h)), blk.heads(blk.v(h))  # [B, H, n, dh]
            kc[bi, :, pi] = k[bi, :, ii]
            vc[bi, :, pi] = v[bi, :, ii]
            att = (q @ kc[:, :, :need].transpose(-1, -2)) / math.sqrt(DH) + mask
            y = (att.softmax(-1) @ vc[:, :, :need]).transpose(1, 2).reshape(x.shape)
            x = x + blk.o(y)
            x = x + blk.fc2(F.gelu(blk.fc1(blk.ln2(x)), approximate="tanh"))
        last = x[torch.arange(B), (count - 1).clamp(min=0)]
        for b, q in enumerate(queues):
            lens[b] += len(q)
            q.clear()
        return self.head(self.ln(last))


def load_tinyagent(model, path):
    """Sets model's weights from a TinyAgent stream (tinyagent_stream.read_weights). Go's dense weights are
    [in, out], nn.Linear's [out, in]."""
    n_params = 2 + L * 16 + 4
    cfg, tensors = read_weights(path, n_params)
    want = [model.tok.num_embeddings, MAXLEN, D, H, L, model.blocks[0].fc1.out_features]
    if cfg != want:
        raise ValueError(f"{path}: configuration {cfg}, the PyTorch model's is {want}")
    linear = {"wq": "q", "wk": "k", "wv": "v", "wo": "o", "w1": "fc1", "w2": "fc2"}
    norm = {"ln1": "ln1", "ln2": "ln2"}
    seen = set()
    with torch.no_grad():
        for name, dims, raw in tensors:
            n = math.prod(dims)
            x = torch.tensor(struct.unpack(f"<{n}f", raw), dtype=torch.float32).view(*dims)
            if name in ("tok", "pos"):
                dst = getattr(model, name).weight
            elif name in ("lnf_g", "lnf_b"):
                dst = model.ln.weight if name == "lnf_g" else model.ln.bias
            elif name in ("head_w", "head_b"):
                dst, x = (model.head.weight, x.T) if name == "head_w" else (model.head.bias, x)
            else:
                layer, p = name.split("/")
                blk = model.blocks[int(layer.removeprefix("layer"))]
                if p[:3] in norm:
                    mod = getattr(blk, norm[p[:3]])
                    dst = mod.weight if p.endswith("_g") else mod.bias
                else:
                    mod = getattr(blk, linear["w" + p[1:]])
                    dst, x = (mod.weight, x.T) if p[0] == "w" else (mod.bias, x)
            if dst.shape != x.shape:
                raise ValueError(f"{path}: tensor {name} {list(x.shape)}, PyTorch's is {list(dst.shape)}")
            dst.copy_(x)
            seen.add(name)
    if len(seen) != n_params:
        raise ValueError(f"{path}: {len(seen)} distinct tensors, want {n_params}")


@torch.no_grad()
def check_logits(model, path):
    """Compares model's logits with the Go model's on the sequences of a dumpgym -logits file; returns the
    largest absolute difference, the largest absolute logit and the number of positions compared."""
    check = json.load(open(path))
    diff, top, positions = 0.0, 0.0, 0
    for case in check["cases"]:
        ids = torch.tensor(case["ids"], dtype=torch.long)[None]
        got = model(ids)[0]
        want = torch.tensor(case["logits"], dtype=torch.float32).view(got.shape)
        diff = max(diff, (got - want).abs().max().item())
        top = max(top, want.abs().max().item())
        positions += ids.shape[1]
    return diff, top, positions


def rollout(model, gym, batch, gen):
    """agentrl.RolloutBatch: all episodes advance together; each model step samples one token per unfinished
    episode; a call ends at </call> or MAX_CALL_TOKENS tokens and its observation is queued as a prefill.
    Returns the episodes, the number of model steps, and the token positions the steps executed (rows x the
    longest queue: every row runs, finished ones included) and needed (tokens fed)."""
    episodes = [Episode(gym, task, rename) for task, rename in batch]
    B = len(episodes)
    caches = [(torch.zeros(B, H, MAXLEN, DH), torch.zeros(B, H, MAXLEN, DH)) for _ in range(L)]
    lens, queues = [0] * B, [list(e.ids) for e in episodes]
    fed = [len(e.ids) for e in episodes]
    calls, call_logp = [[] for _ in range(B)], [[] for _ in range(B)]
    steps = executed = needed = 0
    while any(not e.done for e in episodes):
        executed += B * max(len(q) for q in queues)
        needed += sum(len(q) for q in queues)
        logits = model.decode(queues, lens, caches)
        steps += 1
        active = [b for b, e in enumerate(episodes) if not e.done]
        logp = (logits[active] / TEMPERATURE).log_softmax(-1)
        ids = torch.multinomial(logp.exp(), 1, generator=gen)
        lps = logp.gather(-1, ids)[:, 0].tolist()
        for b, tok, lp in zip(active, ids[:, 0].tolist(), lps):
            e = episodes[b]
            calls[b].append(tok)
            call_logp[b].append(lp)
            if tok == gym.sp["call_end"] or len(calls[b]) == MAX_CALL_TOKENS:
                e.act(calls[b], call_logp[b])
                calls[b], call_logp[b] = [], []
                if not e.done:
                    queues[b] += e.ids[fed[b]:]
                    fed[b] = len(e.ids)
                continue
            queues[b].append(tok)
            fed[b] += 1
    return episodes, steps, executed, needed


def advantages(rewards):
    """agentrl.ComputeAdvantages: (r - group mean) / (unbiased group std + 1e-6)."""
    r = torch.tensor(rewards, dtype=torch.float64).view(-1, GROUP)
    return ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-6)).view(-1).float()


def update(model, opt, episodes, pad):
    """agentrl.Collate + RLUpdate with the defaults: one token_mean PPO-clip Adam step on the whole batch.
    Returns the loss and the token positions the step executed (rows x length) and needed (per episode, up to
    its last policy token: the last position the loss reads is the one before it)."""
    B, T = len(episodes), max(len(e.ids) for e in episodes)
    ids = torch.full((B, T), pad, dtype=torch.long)
    mask, old_logp = torch.zeros(B, T - 1), torch.zeros(B, T - 1)
    for b, e in enumerate(episodes):
        n = len(e.ids)
        ids[b, :n] = torch.tensor(e.ids)
        mask[b, : n - 1] = torch.tensor(e.policy[1:], dtype=torch.float32)
        old_logp[b, : n - 1] = torch.tensor(e.logp[1:])
    adv = advantages([e.reward for e in episodes])[:, None] * mask
    logp = model(ids)[:, :-1].log_softmax(-1).gather(-1, ids[:, 1:, None])[..., 0]
    ratio = (logp - old_logp).exp()
    per_tok = -torch.min(ratio * adv, ratio.clamp(1 - CLIP_EPS, 1 + CLIP_EPS) * adv)
    loss = (per_tok * mask).sum() / mask.sum().clamp(min=1)
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_GRAD_NORM)
    opt.step()
    needed = sum(max(i for i, p in enumerate(e.policy) if p) for e in episodes)
    return loss.item(), B * T, needed


def main():
    ap = argparse.ArgumentParser(description="One GRPO step of agentrl in PyTorch (see the module's doc).")
    ap.add_argument("gym", help="the gym dumped by go run ./cmd/pytorchref/dumpgym")
    ap.add_argument("steps", type=int, nargs="?", default=5, help="timed steps after the warm-up step (0: only the logits check)")
    ap.add_argument("--policy", help="start from this TinyAgent stream (dumpgym -policy) instead of a fresh model")
    ap.add_argument("--logits", help="first check the model's logits against Go's (dumpgym -logits)")
    args = ap.parse_args()
    gym, steps = Gym(args.gym), args.steps
    torch.manual_seed(1)
    model = Agent(len(gym.itos))
    if args.policy:
        load_tinyagent(model, args.policy)
    if args.logits:
        diff, top, positions = check_logits(model, args.logits)
        print(f"LOGITS max_abs_diff={diff:.3g} max_abs_logit={top:.3g} positions={positions}")
        if not diff <= LOGITS_TOLERANCE:
            print(f"grpo_bench.py: logits differ from Go's by {diff:.3g} > {LOGITS_TOLERANCE:g}", file=sys.stderr)
            sys.exit(1)
    if steps == 0:
        return
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    rnd, gen = random.Random(0), torch.Generator().manual_seed(0)
    keys = ("sample_s", "update_s", "sample_cpu_s", "update_cpu_s", "tokens", "decode_steps", "sample_executed",
            "sample_needed", "update_executed", "update_needed")
    totals = dict.fromkeys(keys + ("episodes",), 0.0)
    for step in range(steps + 1):  # step 0 is the warm-up
        t0, c0 = time.perf_counter(), time.process_time()
        episodes, dsteps, s_exec, s_need = rollout(model, gym, sample_batch(gym, rnd), gen)
        t1, c1 = time.perf_counter(), time.process_time()
        loss, u_exec, u_need = update(model, opt, episodes, gym.sp["pad"])
        t2, c2 = time.perf_counter(), time.process_time()
        tokens = sum(len(e.ids) for e in episodes)
        print(f"step {step}{' (warm-up)' if step == 0 else ''}: sample {t1 - t0:.3f}s (cpu {c1 - c0:.3f}s) "
              f"update {t2 - t1:.3f}s (cpu {c2 - c1:.3f}s) tokens {tokens} decode steps {dsteps} "
              f"pass {sum(e.reward for e in episodes) / len(episodes):.3f} loss {loss:+.4f}", file=sys.stderr)
        if step == 0:
            first = {"first_sample_s": t1 - t0, "first_update_s": t2 - t1}
            continue
        for k, v in (("sample_s", t1 - t0), ("update_s", t2 - t1), ("sample_cpu_s", c1 - c0),
                     ("update_cpu_s", c2 - c1), ("tokens", tokens), ("episodes", len(episodes)),
                     ("decode_steps", dsteps), ("sample_executed", s_exec), ("sample_needed", s_need),
                     ("update_executed", u_exec), ("update_needed", u_need)):
            totals[k] += v
    out = {k: totals[k] / steps for k in keys}
    out["tokens_per_episode"] = totals["tokens"] / totals["episodes"]
    out.update(first)
    print("RESULT " + " ".join(f"{k}={v:.4f}" for k, v in out.items()))


if __name__ == "__main__":
    main()
