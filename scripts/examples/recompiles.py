"""Why did it recompile? Guards, the cache and the reason for every recompile.

Run it with:  build/repl/dynrepl scripts/examples/recompiles.py
then try      :why-recompile f    :guards f    :graph f[1].0
"""
import dyn


@dyn.compile
def f(x, scale, steps=1):
    for _ in range(steps):
        x = (x * scale).relu()
    return x


f(dyn.randn(4, 8), 0.5)  # compile: entry f[0]
f(dyn.randn(4, 8), 0.7)  # cache hit: a float is an input of the graph, read at each call
f(dyn.randn(6, 8), 0.5)  # recompile: the size of x changed, so dim 0 of x becomes dynamic (s0)
f(dyn.randn(9, 8), 0.5)  # cache hit: f[1] serves every size >= 2 of that dim
f(dyn.randn(4, 8), 0.5, steps=2)  # recompile: the Python int steps decides how many ops run

for e in dyn.debug.events("recompile", f):
    print(e["reason"])
    print(f"  cause: {e['cause']['key']} took {e['cause']['value']} (traced with {e['cause']['first']})")
    for failure in e["failures"]:
        print(f"  {e['fn']}[{failure['entry']}] failed {failure['guard']}: {failure['text']}")

print()
print("guards of f[0]:")
for line in dyn.debug.guards(f)[0]:
    print("  " + line)

c = dyn.debug.counters()
print()
print(f"calls {c['calls']}, cache hits {c['cache_hits']}, compiles {c['compiles']}, recompiles {c['recompiles']}")
