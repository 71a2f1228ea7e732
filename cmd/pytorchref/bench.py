"""PyTorch reference of gomlxmodel's TinyAgent benchmarks (same model, same shapes).

TinyAgent: vocab 150, 256 learned positions, d_model 64, 4 heads, 3 pre-LN blocks, GELU MLP 192,
(tanh form), final LayerNorm, output head (161,046 parameters). Measures, with 2 threads:
  forward  logits for a [64, 128] batch
  update   one PPO step: forward, clipped surrogate (token_mean), backward, grad-norm clip 1, Adam
  decode   one KV-cache decode step for 64 rows with 127 cached tokens
Prints one line per measurement: "<name> <wall ms> <cpu ms>" (median wall time of the timed runs,
mean process CPU time per run).
"""
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "2")))
torch.manual_seed(0)

V, MAXLEN, D, H, L, M = 150, 256, 64, 4, 3, 192
B, T = 64, 128
DH = D // H


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.q, self.k, self.v, self.o = (nn.Linear(D, D) for _ in range(4))
        self.fc1, self.fc2 = nn.Linear(D, M), nn.Linear(M, D)

    def heads(self, x):  # [B, T, D] -> [B, H, T, dh]
        return x.view(x.shape[0], x.shape[1], H, DH).transpose(1, 2)

    def forward(self, x, mask):
        h = self.ln1(x)
        q, k, v = self.heads(self.q(h)), self.heads(self.k(h)), self.heads(self.v(h))
        att = (q @ k.transpose(-1, -2)) / math.sqrt(DH) + mask
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(x.shape)
        x = x + self.o(y)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    def step(self, x, kc, vc, pos):  # x [B, 1, D]; caches [B, H, MAXLEN, dh]
        h = self.ln1(x)
        q, k, v = self.heads(self.q(h)), self.heads(self.k(h)), self.heads(self.v(h))
        kc[:, :, pos] = k[:, :, 0]
        vc[:, :, pos] = v[:, :, 0]
        att = (q @ kc[:, :, : pos + 1].transpose(-1, -2)) / math.sqrt(DH)
        y = (att.softmax(-1) @ vc[:, :, : pos + 1]).transpose(1, 2).reshape(x.shape)
        x = x + self.o(y)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


class TinyAgent(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok, self.pos = nn.Embedding(V, D), nn.Embedding(MAXLEN, D)
        self.blocks = nn.ModuleList(Block() for _ in range(L))
        self.ln, self.head = nn.LayerNorm(D), nn.Linear(D, V)

    def forward(self, ids):
        t = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(t))
        mask = torch.full((t, t), float("-inf")).triu(1)
        for blk in self.blocks:
            x = blk(x, mask)
        return self.head(self.ln(x))

    def step(self, ids, caches, pos):  # ids [B, 1]
        x = self.tok(ids) + self.pos(torch.tensor([pos]))
        for blk, (kc, vc) in zip(self.blocks, caches):
            x = blk.step(x, kc, vc, pos)
        return self.head(self.ln(x))[:, 0]


def timeit(fn, runs):
    """Median wall time and mean CPU time (all threads) per run, in ms."""
    fn()  # warm-up
    times = []
    c0 = time.process_time()
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times), 1e3 * (time.process_time() - c0) / runs


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    model = TinyAgent()
    assert sum(p.numel() for p in model.parameters()) == 161046
    ids = torch.randint(0, V, (B, T))
    mask = (torch.rand(B, T - 1) < 0.5).float()
    old_logp = -math.log(V) + 0.1 * torch.randn(B, T - 1)
    adv = torch.randn(B, T - 1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)

    def forward():
        with torch.no_grad():
            model(ids)

    def update():
        logits = model(ids)[:, :-1]
        logp = logits.log_softmax(-1).gather(-1, ids[:, 1:, None])[..., 0]
        ratio = (logp - old_logp).exp()
        per_tok = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv)
        loss = (per_tok * mask).sum() / mask.sum()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    caches = [(torch.zeros(B, H, MAXLEN, DH), torch.zeros(B, H, MAXLEN, DH)) for _ in range(L)]
    with torch.no_grad():
        for p in range(T - 1):  # fill 127 positions
            model.step(ids[:, p : p + 1], caches, p)

    def decode():
        with torch.no_grad():
            model.step(ids[:, T - 1 : T], caches, T - 1)

    for name, fn, n in (("forward", forward, runs), ("update", update, runs), ("decode", decode, 10 * runs)):
        wall, cpu = timeit(fn, n)
        print(f"{name} {wall:.3f} {cpu:.3f}")


if __name__ == "__main__":
    main()
