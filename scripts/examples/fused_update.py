"""What the compiled backend does with elementwise code: one pass over memory instead of one per op.

An activation chain and an optimizer-style update in place run as fused loops; the plan says which
nodes fused, and the results equal eager mode bit for bit.

Run it with:  build/repl/dynrepl scripts/examples/fused_update.py   (or :graph -v fused_step at the prompt)
"""
import time

import dyn


def fused_step(x, w, b, m, g):
    y = (x * w + b).tanh() * 0.5 + x  # five elementwise ops: one loop
    m.mul_(0.9).add_(g * 0.1)          # an update written straight into m's buffer
    return y


n = 1 << 22
x, w, b, g = (dyn.randn(n) for _ in range(4))
m_eager, m_compiled = dyn.zeros(n), dyn.zeros(n)

compiled = dyn.compile(fused_step)
want = fused_step(x, w, b, m_eager, g)
got = compiled(x, w, b, m_compiled, g)
assert bool((want == got).all()) and bool((m_eager == m_compiled).all()), "compiled must equal eager"

plan = dyn.debug.graphs(compiled)[-1].plan()
print(plan)
assert "fused" in plan and "mul_(" in plan

for name, fn, m in (("eager", fused_step, m_eager), ("compiled", compiled, m_compiled)):
    t0 = time.perf_counter()
    for _ in range(5):
        fn(x, w, b, m, g)
    print(f"{name:>8}: {(time.perf_counter() - t0) / 5 * 1e3:.1f} ms per call")
