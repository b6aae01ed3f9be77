"""Compile regions, graph breaks and dyn.debug: the example every graph-capture tool starts with.

Run it with:  build/repl/dynrepl scripts/examples/branchy.py
"""
import dyn


@dyn.compile
def fn(a, b):
    x = a + b
    x = x / 2.0
    if x.sum() < 0:
        return x * -1.0
    return x


dyn.manual_seed(0)
a, b = dyn.randn(10), dyn.randn(10)
fn(a, b)  # the branch may go either way...
fn(-a.abs(), -b.abs())  # ...here it is taken: a second graph holds the multiply

for g in dyn.debug.graphs(fn):
    print(f"graph {g.id}: {', '.join(g.ops)}")
    print(g.text())

for e in dyn.debug.events("graph_break"):
    print(f"graph break in {e['fn']} at line {e['line']}: {e['source']}")
    print(f"  {e['reason']}")
    print(f"  hint: {e['hint']}")

print()
print(dyn.debug.explain(fn, -a.abs(), -b.abs()))

# Compiled results equal eager results bit for bit.
x = (a + b) / 2.0
eager = x * -1.0 if x.sum() < 0 else x
assert dyn.equal(fn(a, b), eager)
