# Tier 2 (trace once): a cache hit runs the compiled graph without running the body, where a
# one-time analysis of the recording call shows that is exact (dyn.compile(lift=False) turns it
# off). Run: dynrepl scripts/examples/trace_once.py, then :why-python and :guards at the prompt.
import time

import dyn


def chain(x, n):
    for _ in range(n):
        x = x * 1.0001 + 0.0001
    return x


def timed(f, *a, reps=2000):
    for _ in range(100):
        f(*a)
    t = time.perf_counter()
    for _ in range(reps):
        f(*a)
    return (time.perf_counter() - t) / reps * 1e6


x = dyn.randn(8)
replayed = dyn.compile(chain, lift=False)
lifted = dyn.compile(chain)
assert dyn.equal(replayed(x, 100), lifted(x, 100))
print(f"100 tiny ops: replayed {timed(replayed, x, 100):.1f} us a call, lifted {timed(lifted, x, 100):.1f} us")
print("lifted hits:", lifted._state.lifted_hits)
lifted(x, 50)  # n decided the loop: its guard fails, tier 1 records, and a second lift serves n=50
print("entries:", lifted._state.entries, "lifts:", len(lifted._lifts))
for text, where in lifted._lifts[0].guard_lines():
    print("  guard:", text, "  #", where.rsplit("/", 1)[-1])


def noisy(x):
    print("side effect", end="; ")
    return x + 1


cn = dyn.compile(noisy)
for _ in range(2):
    cn(x)
print()
for entry, reason, where in cn.why_python():
    print(f"entry {entry} stays on tier 1: {reason} at {where.rsplit('/', 1)[-1]}")
