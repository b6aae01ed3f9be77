"""Memory benchmark (issue 15): bytes per recorded node and RSS over many replayed calls.

1. A compiled function that records NODES small elementwise ops in one trace (a long chain of
   `x * c` and `x + c` on 8 floats): peak RSS growth during that first call, and the bytes malloc
   still holds after it (the cached graph, its plan, its events), each per recorded node.
2. A small compiled function with a graph break, a Python float that changes and a module:
   RSS before and after CALLS replayed calls, after a warm-up.

Run: build/repl/dynrepl --batch bench/bench_memory.py [--quick]
Targets (issue 15): <= 300 bytes per node at peak; retained memory proportional to the cached
graphs only; RSS growth <= 1 MiB over 10^5 replays. No figure is asserted.
"""
import ctypes
import gc
import os
import resource
import sys
import time

import dyn

QUICK = "--quick" in sys.argv
NODES = 20_000 if QUICK else 200_000
CALLS = 10_000 if QUICK else 100_000


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]


_libc = ctypes.CDLL("libc.so.6")
_libc.mallinfo2.restype = _Mallinfo2


def malloc_in_use():
    m = _libc.mallinfo2()
    return m.uordblks + m.hblkhd


def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def long_trace():
    def chain(x):
        for _ in range(NODES // 2):
            x = x * 1.0001
            x = x + 0.5
        return x

    f = dyn.compile(chain, name="long_chain")
    x = dyn.randn(8)
    gc.collect()
    peak0, held0 = peak_rss(), malloc_in_use()
    t0 = time.perf_counter()
    f(x)
    record_s = time.perf_counter() - t0
    gc.collect()
    peak1, held1 = peak_rss(), malloc_in_use()
    t0 = time.perf_counter()
    f(x)
    replay_s = time.perf_counter() - t0
    nodes = sum(len(g.nodes) for g in dyn.debug.graphs(f))
    return nodes, (peak1 - peak0) / nodes, (held1 - held0) / nodes, record_s, replay_s


def replay_growth():
    lin = dyn.nn.Linear(16, 16)

    @dyn.compile
    def step(x, scale):
        y = lin(x).relu() * scale
        if y.sum().item() > 0:  # a graph break at every call
            y = y + 1
        return y.softmax(-1)

    x = dyn.randn(4, 16)
    for i in range(2000):
        step(x, 0.5 + i % 3)
    gc.collect()
    before = rss()
    t0 = time.perf_counter()
    for i in range(CALLS):
        step(x, 0.5 + i % 3)
    per_call = (time.perf_counter() - t0) / CALLS
    gc.collect()
    return before, rss(), per_call, dyn.debug.counters()


def main():
    print(f"dyn memory benchmark (issue 15){' --quick' if QUICK else ''}")
    nodes, peak, held, record_s, replay_s = long_trace()
    print(f"  one trace of {nodes:,} recorded nodes: peak RSS +{peak:,.0f} B/node (target <= 300), "
          f"retained {held:,.0f} B/node; recorded in {record_s:.2f} s, replayed in {replay_s:.2f} s")
    before, after, per_call, c = replay_growth()
    print(f"  {CALLS:,} replayed calls (a break and a changing float each): RSS {before / 2**20:.1f} -> "
          f"{after / 2**20:.1f} MiB ({(after - before) / 2**10:+,.0f} KiB; target <= 1 MiB), "
          f"{per_call * 1e6:.1f} us/call, {c['compiles']} compiles, {c['cache_hits']:,} cache hits")


if __name__ == "__main__":
    main()
