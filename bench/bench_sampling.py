"""Sampling benchmark: a tiny GPT (scripts/examples/sampling.py) generates 64 new tokens, its input
one token longer at every step: dyn eager vs dyn compiled (dynamic shapes) vs PyTorch eager
(the same file, with `import dyn` giving torch), one thread. Reports the compile count: without
dynamic shapes every length would be a graph of its own (and the cache limit would end it).

Run: build/repl/dynrepl --real-torch bench/bench_sampling.py [--quick]
Target (issue 17): compiled not slower than eager once warm; compiles <= 3.
"""
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts", "examples"))

import dyn  # noqa: E402
import sampling  # noqa: E402
from _torch_twin import Alias, load_with  # noqa: E402

QUICK = "--quick" in sys.argv
NEW_TOKENS = 64
# The example's model at the tiny transformer's width (scripts/examples/tiny_transformer.py).
SIZES = dict(VOCAB=64, DIM=64, HEADS=4, LAYERS=2, MAX_LEN=NEW_TOKENS)


def sized(module):
    for k, v in SIZES.items():
        setattr(module, k, v)
    return module


def timed(fn, trials):
    times = []
    for _ in range(trials):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def torch_sampling():
    """The example file run again with `import dyn` giving torch: the same model and loop."""
    import torch

    stand_ins = {"dyn": Alias("dyn", torch), "dyn.nn": torch.nn, "dyn.nn.functional": torch.nn.functional}
    module = load_with(sampling.__file__, "sampling_torch", stand_ins)
    return sized(module), torch


def main():
    trials = 3 if QUICK else 7
    dyn.set_num_threads(1)
    sized(sampling)
    dyn.manual_seed(0)
    model = sampling.GPT().eval()
    compiled = dyn.compile(model)

    eager_s = timed(lambda: sampling.sample(model, NEW_TOKENS), trials)
    dyn.debug.reset()
    t0 = time.perf_counter()
    cold_tokens = sampling.sample(compiled, NEW_TOKENS)
    cold_s = time.perf_counter() - t0
    c = dyn.debug.counters()
    compiles, recompiles, fallbacks = c["compiles"], c["recompiles"], c["fallbacks"]
    warm_s = timed(lambda: sampling.sample(compiled, NEW_TOKENS), trials)
    same = bool((cold_tokens == sampling.sample(model, NEW_TOKENS)).all())

    torch_s = None
    try:
        tmod, torch = torch_sampling()
        torch.set_num_threads(1)
        torch.manual_seed(0)
        tmodel = tmod.GPT().eval()
        torch_s = timed(lambda: tmod.sample(tmodel, NEW_TOKENS), trials)
    except ImportError:
        pass

    print(f"dyn sampling benchmark: tiny GPT (vocab {sampling.VOCAB}, dim {sampling.DIM}, heads {sampling.HEADS}, "
          f"layers {sampling.LAYERS}), {NEW_TOKENS} new tokens from 1, lengths 1..{NEW_TOKENS}, 1 thread")
    print(f"{'':28}{'ms per 64 tokens':>18}  {'vs dyn eager':>12}  {'vs torch eager':>14}")

    def row(name, s):
        vs_torch = f"{torch_s / s:13.2f}x" if torch_s else "           n/a"
        print(f"{name:28}{s * 1e3:18.2f}  {eager_s / s:11.2f}x  {vs_torch}")

    row("dyn eager", eager_s)
    row("dyn compiled, warm", warm_s)
    row("dyn compiled, first run", cold_s)
    if torch_s:
        row("torch eager", torch_s)
    print(f"compiled: {compiles} compiles, {recompiles} recompiles, {fallbacks} fallbacks over {NEW_TOKENS} lengths; "
          f"tokens equal to eager: {same}")


main()
