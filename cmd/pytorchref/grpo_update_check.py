"""Replays one JAX GRPO update (jax_grpo_bench.py --update-check DIR) through grpo_bench.py's PyTorch update.

    python3 grpo_update_check.py DIR base.tinyagent

Loads the policy into grpo_bench.py's Agent, checks it against DIR/before.npz (the weights the JAX update started
from), runs grpo_bench.update (Collate, advantages, token_mean PPO-clip loss, grad-norm clip, one Adam step) on
DIR/episodes.json's episodes, and prints "UPDATE loss_jax=... loss_torch=... max_abs_weight_diff=...
max_abs_step=... max_rel_step_diff=... worst=NAME key_bias_step=...": the largest |PyTorch - JAX| weight after the
update, the largest weight change the update made, the largest |ΔPyTorch - ΔJAX| / max|ΔJAX| over tensors (Δ: the
tensor's change in the update) and the tensor it is in, and the largest change of a key bias. Key biases are left
out of the relative difference: attention scores do not depend on them (softmax is shift-invariant), so their
gradients are rounding noise, which Adam's normalised step turns into arbitrary small steps. Exits with status 1 when the start weights differ (beyond 0) or the losses differ by more
than 1e-4.
"""
import json
import sys
import types

import numpy as np
import torch

from grpo_bench import LR, Agent, load_tinyagent, update


def go_names(model):
    """{Go tensor name: (PyTorch parameter, whether Go's layout is its transpose)}."""
    out = {"tok": (model.tok.weight, False), "pos": (model.pos.weight, False), "lnf_g": (model.ln.weight, False),
           "lnf_b": (model.ln.bias, False), "head_w": (model.head.weight, True), "head_b": (model.head.bias, False)}
    linear = {"q": "q", "k": "k", "v": "v", "o": "o", "1": "fc1", "2": "fc2"}
    for i, blk in enumerate(model.blocks):
        for g, t in linear.items():
            out[f"layer{i}/w{g}"] = (getattr(blk, t).weight, True)
            out[f"layer{i}/b{g}"] = (getattr(blk, t).bias, False)
        for ln in ("ln1", "ln2"):
            out[f"layer{i}/{ln}_g"] = (getattr(blk, ln).weight, False)
            out[f"layer{i}/{ln}_b"] = (getattr(blk, ln).bias, False)
    return out


def as_go(param, transposed):
    x = param.detach().numpy()
    return x.T if transposed else x


def main():
    folder, policy = sys.argv[1], sys.argv[2]
    before, after = np.load(f"{folder}/before.npz"), np.load(f"{folder}/after.npz")
    info = json.load(open(f"{folder}/update.json"))
    episodes = [types.SimpleNamespace(**e) for e in json.load(open(f"{folder}/episodes.json"))]
    model = Agent(before["tok"].shape[0])
    load_tinyagent(model, policy)
    params = go_names(model)
    start = max(float(np.abs(as_go(p, t) - before[k]).max()) for k, (p, t) in params.items())
    if start != 0:
        print(f"grpo_update_check.py: the start weights differ from JAX's by {start:.3g}", file=sys.stderr)
        sys.exit(1)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    loss, _, _ = update(model, opt, episodes, info["pad"])
    diff = step = rel = key_bias = 0.0
    worst = ""
    for k, (p, t) in params.items():
        got, want = as_go(p, t), after[k]
        d_torch, d_jax = got - before[k], want - before[k]
        diff, step = max(diff, float(np.abs(got - want).max())), max(step, float(np.abs(d_jax).max()))
        if k.endswith("/bk"):
            key_bias = max(key_bias, float(np.abs(d_jax).max()), float(np.abs(d_torch).max()))
            continue
        r = float(np.abs(d_torch - d_jax).max() / max(np.abs(d_jax).max(), 1e-30))
        if r > rel:
            rel, worst = r, k
    print(f"UPDATE loss_jax={info['loss']:.7g} loss_torch={loss:.7g} max_abs_weight_diff={diff:.3g} "
          f"max_abs_step={step:.3g} max_rel_step_diff={rel:.3g} worst={worst} key_bias_step={key_bias:.3g}")
    if abs(loss - info["loss"]) > 1e-4:
        print("grpo_update_check.py: the losses differ by more than 1e-4", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
