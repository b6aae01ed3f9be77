"""A tiny decoder-only transformer (token embedding, causal self-attention, RMSNorm, SiLU MLP,
2 layers) trained on fake tokens, eagerly and with the whole training step compiled.

Run it with:  build/repl/dynrepl scripts/examples/tiny_transformer.py [steps]
"""
import math
import sys
import time

import dyn
import dyn.nn as nn
import dyn.nn.functional as F

VOCAB, DIM, HEADS, LAYERS, SEQ, BATCH = 64, 64, 4, 2, 32, 8


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim)) + mask
        y = scores.softmax(dim=-1) @ v  # [b, heads, t, head_dim]
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1, self.norm2 = nn.RMSNorm(dim), nn.RMSNorm(dim)
        self.attn = Attention(dim, heads)
        self.up, self.down = nn.Linear(dim, 4 * dim, bias=False), nn.Linear(4 * dim, dim, bias=False)

    def forward(self, x, mask):
        x = x + self.attn(self.norm1(x), mask)
        return x + self.down(F.silu(self.up(self.norm2(x))))


class TinyTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.blocks = nn.ModuleList([Block(DIM, HEADS) for _ in range(LAYERS)])
        self.norm = nn.RMSNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)
        # causal mask: 0 on and below the diagonal, -inf above
        i, j = dyn.arange(SEQ).unsqueeze(1), dyn.arange(SEQ).unsqueeze(0)
        self.register_buffer("mask", dyn.where(j > i, float("-inf"), 0.0))

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, self.mask)
        return self.head(self.norm(x))


def fake_batch():
    # next-token prediction on a learnable pattern: token t+1 = (token t * 3 + 1) % VOCAB
    start = dyn.randint(0, VOCAB, (BATCH, 1))
    steps = dyn.arange(SEQ + 1).unsqueeze(0)
    seq = (start * (3 ** (steps % 4)) + steps) % VOCAB
    return seq[:, :SEQ], seq[:, 1:]


def train(compiled, steps):
    dyn.manual_seed(0)
    model = TinyTransformer()
    opt = dyn.optim.AdamW(model.parameters(), lr=3e-3)
    tokens, targets = fake_batch()

    def step(tokens, targets):
        opt.zero_grad()
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(BATCH * SEQ, VOCAB), targets.reshape(BATCH * SEQ))
        loss.backward()
        opt.step()
        return loss

    if compiled:
        step = dyn.compile(step)
    step(tokens, targets)  # warm-up (the compiled one traces and compiles here)
    t0 = time.perf_counter()
    losses = [step(tokens, targets).item() for _ in range(steps)]
    dt = time.perf_counter() - t0
    return losses, BATCH * SEQ * steps / dt


if __name__ == "__main__":
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    eager, eager_tps = train(False, steps)
    dyn.debug.reset()
    compiled, compiled_tps = train(True, steps)
    print(f"loss: {eager[0]:.4f} -> {eager[-1]:.4f} over {steps} steps")
    print(f"eager {eager_tps:,.0f} tokens/s, compiled {compiled_tps:,.0f} tokens/s")
    print("compiled losses equal eager bit for bit:", compiled == eager)
    c = dyn.debug.counters()
    g = dyn.debug.graphs()
    print(f"compiled step: {len(g)} graph of {len(g[0].nodes)} ops, {c['graph_breaks']} graph breaks, "
          f"{c['compiles']} compile, {c['recompiles']} recompiles")
    assert compiled == eager and eager[-1] < eager[0]
    assert len(g) == 1 and c["graph_breaks"] == 0 and c["recompiles"] == 0
