"""Where does a compiled step spend its time? Each plan step's time, by the line that made it.

Run it with:  build/repl/dynrepl scripts/examples/profile.py
then try      :profile    :profile step    :profile --reset    :graph step -v
"""
import dyn
import dyn.nn as nn
import dyn.nn.functional as F


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        h = F.gelu(self.up(self.norm(x)))
        return x + self.down(h)


dyn.manual_seed(0)
model = Block(128)
opt = dyn.optim.SGD(model.parameters(), lr=0.01)


@dyn.compile
def step(x, target):
    loss = F.mse_loss(model(x), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


x, target = dyn.randn(64, 128), dyn.randn(64, 128)
step(x, target)  # the first call traces and compiles, and its run is timed as well
dyn.debug.reset_profile()  # so that the times below are of warm calls only
calls = 20
for _ in range(calls):
    loss = step(x, target)

rows = dyn.debug.profile(step)
assert rows and all(r["runs"] == calls for r in rows)
total = sum(r["seconds"] for r in rows)
print(f"{len(rows)} plan steps, {total / calls * 1e3:.2f} ms a call in them; the five slowest:")
for r in sorted(rows, key=lambda r: -r["seconds"])[:5]:
    where = f"line {r['line']}: {r['source']}" if r["line"] else "(no user line)"
    print(f"  {r['seconds'] / total:6.1%}  {r['kind']:<7} {r['what'][:60]:<60}  {where}")

# The steps of the forward pass carry the lines of Block.forward that recorded them.
forward_lines = {r["line"] for r in rows if r["line"] is not None}
assert any("self.up" in (r["source"] or "") for r in rows), forward_lines
