"""Dynamic shapes: a tiny GPT samples 30 tokens, its input one token longer at every step.

Eagerly and compiled, side by side. The compiled model recompiles twice and then serves every
length from one graph: length 1 is specialized (as in PyTorch), length 2 is its own entry, and
length 3 differs from 2 only in sizes, so the recompile makes the sequence length a symbol (s0)
and every size that follows it (the positions' arange, the mask's slice, the views) a form in it.

Run it with:  build/repl/dynrepl scripts/examples/sampling.py
then try      :why-recompile GPT    :guards GPT    :graph GPT[2].0
"""
import math

import dyn
import dyn.nn as nn
import dyn.nn.functional as F

VOCAB, DIM, HEADS, LAYERS, MAX_LEN = 32, 16, 2, 2, 64


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.register_buffer("mask", dyn.tril(dyn.ones(MAX_LEN, MAX_LEN)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, HEADS, C // HEADS).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.attn = Attention()
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Embedding(MAX_LEN, DIM)
        self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
        self.ln = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, idx):
        B, T = idx.shape
        x = self.tok(idx) + self.pos(dyn.arange(0, T))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))[:, -1, :]  # the next token's logits


def sample(model, new_tokens):
    idx = dyn.zeros(1, 1, dtype=dyn.int64)
    with dyn.no_grad():
        for _ in range(new_tokens):
            nxt = model(idx).argmax(-1, keepdim=True)
            idx = dyn.cat([idx, nxt], dim=1)
    return idx


if __name__ == "__main__":
    dyn.manual_seed(0)
    model = GPT().eval()
    compiled = dyn.compile(model)
    eager_tokens = sample(model, 30)
    compiled_tokens = sample(compiled, 30)
    print("tokens:", compiled_tokens.tolist()[0])
    print("compiled == eager:", bool((eager_tokens == compiled_tokens).all()))
    c = dyn.debug.counters()
    print(f"calls {c['calls']}, cache hits {c['cache_hits']}, compiles {c['compiles']}, recompiles {c['recompiles']}")
    for e in dyn.debug.events("recompile"):
        print(e["reason"])
