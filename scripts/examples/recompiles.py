"""Why did it recompile? Guards, the cache and the reason for every recompile.

Run it with:  build/repl/dynrepl scripts/examples/recompiles.py
"""
import dyn


@dyn.compile
def f(x, scale):
    return (x * scale).relu()


f(dyn.randn(4, 8), 0.5)  # compile: entry f[0]
f(dyn.randn(4, 8), 0.5)  # cache hit: replayed, no tracing cost beyond the checks, no compile
f(dyn.randn(6, 8), 0.5)  # recompile: the size of x changed
f(dyn.randn(4, 8), 0.7)  # recompile: the Python number baked into the graph changed

for e in dyn.debug.events("recompile", f):
    print(e["reason"])
    for failure in e["failures"]:
        print(f"  {e['fn']}[{failure['entry']}] failed {failure['guard']}: {failure['text']}")

print()
print("guards of f[0]:")
for line in dyn.debug.guards(f)[0]:
    print("  " + line)

c = dyn.debug.counters()
print()
print(f"calls {c['calls']}, cache hits {c['cache_hits']}, compiles {c['compiles']}, recompiles {c['recompiles']}")

# The fix the hint suggests: pass the scale as a tensor, and one graph serves every value.
@dyn.compile
def g(x, scale):
    return (x * scale).relu()


for s in (0.5, 0.7, 0.9):
    g(dyn.randn(4, 8), dyn.tensor(s))
assert dyn.debug.counters()["recompiles"] == c["recompiles"]  # no new recompile
print(f"g: {len(dyn.debug.guards(g))} cache entry for 3 different scales")
