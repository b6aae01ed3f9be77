"""Mixed precision: a bfloat16 model, and autocast over a float32 one.

Run it with:  build/repl/dynrepl scripts/examples/mixed_precision.py
then try      :why-recompile    :graph step[1]    :guards step

The same training step runs twice: first with the model in float32 under
torch.autocast("cpu", dtype=torch.bfloat16), whose products compute in bfloat16, then without
autocast. The compiled step gets one entry per autocast state, and :why-recompile names it. A
second model is cast to bfloat16 whole (.bfloat16()): every op computes in float32 and rounds
its result to bfloat16 once, in eager and compiled alike.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(64, 16), torch.randint(0, 4, (64,))


@torch.compile
def step(x, y, autocast):
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        logits = model(x)  # bfloat16 under autocast: the products ran in bfloat16
    loss = nn.functional.cross_entropy(logits.float(), y)
    loss.backward()
    opt.step()
    return loss, logits.dtype


for autocast in (True, True, False, False):
    loss, dtype = step(x, y, autocast)
    print(f"autocast={autocast}: logits {dtype}, loss {loss.item():.4f}")

half = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4)).bfloat16()
compiled = torch.compile(half)
xb = x.bfloat16()
out, again = half(xb), compiled(xb)
print("bfloat16 model:", out.dtype, "compiled == eager:", torch.equal(out, again), "first row", out[0].tolist())
