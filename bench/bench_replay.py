"""Replay benchmark: per-op cost of replaying a cached trace vs recording it vs eager dispatch,
and the whole-call overhead of a cache hit, side by side with PyTorch's lazy tensors (torch._lazy)
when PyTorch is installed.

Run: build/repl/dynrepl bench/bench_replay.py [--quick]
Targets (issue 4): replay <= 0.3 us per op; a cache hit's fixed overhead <= 2 us; replay at least
10x cheaper per op than the peer's lazy tracing.
"""
import statistics
import sys
import time

import dyn

QUICK = "--quick" in sys.argv
N_OPS = 100


def timeit(f, number):
    f()
    trials = []
    for _ in range(3 if QUICK else 7):
        t0 = time.perf_counter()
        for _ in range(number):
            f()
        trials.append((time.perf_counter() - t0) / number)
    return statistics.median(trials)


def chain(x, n=N_OPS):
    for _ in range(n // 2):
        x = x * 1.0001
        x = x + 0.5
    return x


def one_op(x):
    return x + 0.5


def dyn_rows():
    x = dyn.randn(8)
    number = 200 if QUICK else 2000
    eager_call = timeit(lambda: chain(x), number)

    compiled = dyn.compile(chain, name="chain")
    compiled(x)
    hit_call = timeit(lambda: compiled(x), number)
    c = dyn.debug.counters()
    # A cache hit = replay (checks) + executing the cached plan with the eager kernels; the
    # counters split the time, so replay's share per op is measured, not estimated.
    dyn.debug.reset()
    compiled(x)  # records again after the reset
    c0 = dyn.debug.counters()
    for _ in range(number):
        compiled(x)
    c1 = dyn.debug.counters()
    replay_per_op = (c1["replay_s"] - c0["replay_s"]) / number / N_OPS
    execute_per_op = (c1["execute_s"] - c0["execute_s"]) / number / N_OPS

    # Recording: a fresh function each time (nothing cached), minus its compile and execute time.
    rec = []
    for _ in range(5 if QUICK else 20):
        dyn.debug.reset()
        f = dyn.compile(chain, name="fresh")
        b = dyn.debug.counters()
        t0 = time.perf_counter()
        f(x)
        t = time.perf_counter() - t0
        a = dyn.debug.counters()
        rec.append((t - (a["compile_s"] - b["compile_s"]) - (a["execute_s"] - b["execute_s"])) / N_OPS)
    record_per_op = statistics.median(rec)

    small = dyn.compile(one_op, name="one_op")
    small(x)
    fixed = timeit(lambda: small(x), number) - timeit(lambda: one_op(x), number)
    return {
        "eager dispatch": eager_call / N_OPS,
        "record (first call)": record_per_op,
        "replay (cache hit)": replay_per_op,
        "execute (cached plan)": execute_per_op,
        "cache-hit call, 100 ops": hit_call,
        "eager call, 100 ops": eager_call,
        "cache-hit fixed overhead": fixed,
    }


def torch_lazy_rows():
    try:
        import torch
        import torch._lazy
        import torch._lazy.ts_backend

        torch._lazy.ts_backend.init()
    except Exception as e:  # noqa: BLE001 - any failure means "no peer"
        return None, f"torch._lazy unavailable: {type(e).__name__}: {e}"
    torch.set_num_threads(dyn.get_num_threads())
    x = torch.randn(8, device="lazy")
    number = 50 if QUICK else 300

    def trace_only():
        return chain(x)

    def step():
        chain(x)
        torch._lazy.mark_step()

    step()
    trace = timeit(trace_only, number) / N_OPS
    torch._lazy.mark_step()
    whole = timeit(step, number)
    return {"trace per op": trace, "traced call + mark_step, 100 ops": whole}, torch.__version__


def main():
    d = dyn_rows()
    t, info = torch_lazy_rows()
    print("dyn replay benchmark (float32[8], a chain of 100 elementwise ops)")
    print(f"threads: dyn {dyn.get_num_threads()}; peer: {'torch ' + info + ' lazy tensors (TorchScript backend)' if t else info}")
    print()
    print(f"{'measure':<28} {'dyn':>10}  {'torch._lazy':>12}  {'ratio':>8}")
    us = lambda v: f"{v * 1e6:8.3f} us"  # noqa: E731
    peer_trace = t["trace per op"] if t else None
    rows = [
        ("eager dispatch / op", d["eager dispatch"], None),
        ("record / op (first call)", d["record (first call)"], peer_trace),
        ("replay / op (cache hit)", d["replay (cache hit)"], peer_trace),
        ("execute / op (cached plan)", d["execute (cached plan)"], None),
        ("cache-hit call (100 ops)", d["cache-hit call, 100 ops"], t["traced call + mark_step, 100 ops"] if t else None),
        ("eager call (100 ops)", d["eager call, 100 ops"], None),
        ("cache-hit fixed overhead", d["cache-hit fixed overhead"], None),
    ]
    for name, v, p in rows:
        ratio = f"{p / v:7.1f}x" if p else ""
        print(f"{name:<28} {us(v):>10}  {us(p) if p else 'n/a':>12}  {ratio:>8}")
    print()
    ok = lambda b: "MET" if b else "NOT MET"  # noqa: E731
    print(f"target replay <= 0.3 us/op: {ok(d['replay (cache hit)'] <= 0.3e-6)} ({d['replay (cache hit)'] * 1e6:.3f})")
    print(f"target cache-hit fixed overhead <= 2 us: {ok(d['cache-hit fixed overhead'] <= 2e-6)} "
          f"({d['cache-hit fixed overhead'] * 1e6:.2f})")
    if peer_trace:
        r = peer_trace / d["replay (cache hit)"]
        print(f"target replay >= 10x cheaper than torch._lazy tracing: {ok(r >= 10)} ({r:.1f}x)")


main()
