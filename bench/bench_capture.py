"""Capture benchmark: cost of recording an op while tracing, and compile time by graph size.

Run: build/repl/dynrepl bench/bench_capture.py [--quick]
Targets (issue 3): recording <= 2 us per op; compiling a 10,000-node graph <= 50 ms.
"""
import statistics
import sys
import time

import dyn

QUICK = "--quick" in sys.argv


def median_time(f, trials=7):
    f()
    ts = []
    for _ in range(3 if QUICK else trials):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def chain(x, n):
    for _ in range(n // 2):
        x = x * 1.0001
        x = x + 0.5
    return x


def run():
    x = dyn.randn(8)
    rows = []
    # eager per-op cost, for reference
    n = 1000
    t_eager = median_time(lambda: chain(x, n)) / n
    # recording: a fresh function per measurement so every call records and compiles a new graph;
    # the compile time (from the counters) is subtracted, leaving trace + execute of tiny ops
    for size in (100, 1000, 10000):
        dyn.debug.reset()
        fns = [dyn.compile(lambda a, s=size: chain(a, s), name=f"chain{size}") for _ in range(3)]
        ts, cs, es = [], [], []
        for f in fns:
            before = dyn.debug.counters()
            t0 = time.perf_counter()
            f(x)
            total = time.perf_counter() - t0
            after = dyn.debug.counters()
            compile_s = after["compile_s"] - before["compile_s"]
            execute_s = after["execute_s"] - before["execute_s"]
            ts.append(total - compile_s - execute_s)
            cs.append(compile_s)
            es.append(execute_s)
            dyn.debug.reset()  # next call compiles again instead of reusing the plan
        rows.append((size, statistics.median(ts) / size, statistics.median(cs), statistics.median(es) / size))
    # a cache hit: replay (checks only) + execute, no compile
    f = dyn.compile(lambda a: chain(a, 1000), name="warm")
    f(x)
    t_warm = median_time(lambda: f(x)) / 1000

    print("dyn capture benchmark")
    print(f"eager dispatch (8 f32)       {t_eager * 1e6:8.2f} us/op")
    print(f"{'graph size':>10}  {'record us/op':>12}  {'compile ms':>10}  {'execute us/op':>13}")
    for size, rec, comp, ex in rows:
        print(f"{size:>10}  {rec * 1e6:>12.2f}  {comp * 1e3:>10.2f}  {ex * 1e6:>13.2f}")
    print(f"cache hit, 1000 ops: {t_warm * 1e6:.2f} us/op (replay + execute)")
    rec_max = max(r[1] for r in rows)
    comp_10k = rows[-1][2]
    print(f"target record <= 2 us/op: {'MET' if rec_max <= 2e-6 else 'NOT MET'} (worst {rec_max * 1e6:.2f})")
    print(f"target compile 10,000 nodes <= 50 ms: {'MET' if comp_10k <= 0.05 else 'NOT MET'} ({comp_10k * 1e3:.1f} ms)")


run()
