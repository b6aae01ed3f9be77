"""Training benchmark: tokens/s of the tiny transformer's training step (scripts/examples/
tiny_transformer.py), dyn eager vs dyn compiled vs PyTorch eager (same model and sizes), at one
thread and at all cores; and how far the compiled step is from its floor (its matrix products at
the machine's measured BLAS speed).

Run: build/repl/dynrepl bench/bench_train.py [--quick]
Targets (issue 7): dyn compiled >= 2x PyTorch eager at the same thread count, and >= 1.3x dyn eager.
"""
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "examples"))

import dyn  # noqa: E402
import tiny_transformer as tt  # noqa: E402
from _torch_twin import Alias, load_with  # noqa: E402

QUICK = "--quick" in sys.argv
STEPS = 5 if QUICK else 20
TOKENS = tt.BATCH * tt.SEQ


def time_steps(step, *args):
    step(*args)
    step(*args)  # warm-up (traces and compiles when compiled)
    trials = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(STEPS):
            step(*args)
        trials.append((time.perf_counter() - t0) / STEPS)
    return statistics.median(trials)


def dyn_step(compiled):
    dyn.manual_seed(0)
    model = tt.TinyTransformer()
    opt = dyn.optim.AdamW(model.parameters(), lr=3e-3)
    tokens, targets = tt.fake_batch()

    def step(tokens, targets):
        opt.zero_grad()
        logits = model(tokens)
        loss = dyn.nn.functional.cross_entropy(logits.reshape(TOKENS, tt.VOCAB), targets.reshape(TOKENS))
        loss.backward()
        opt.step()
        return loss

    if compiled:
        step = dyn.compile(step, name="train_step")
    return step, (tokens, targets)


def torch_example():
    """The example file run again with `import dyn` giving torch, so that the peer runs the example's
    own model code, not a copy that could drift from it. That code keeps to the API the two libraries
    share, but for nn.RMSNorm (torch 1.13 has none)."""
    import torch

    class RMSNorm(torch.nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(dim))

        def forward(self, x):
            return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1.1920928955078125e-07) * self.weight

    nn = Alias("dyn.nn", torch.nn, RMSNorm=RMSNorm)
    stand_ins = {"dyn": Alias("dyn", torch, nn=nn), "dyn.nn": nn, "dyn.nn.functional": torch.nn.functional}
    module = load_with(tt.__file__, "tiny_transformer_torch", stand_ins)
    return module, torch


def torch_step():
    ttt, torch = torch_example()
    torch.manual_seed(0)
    model = ttt.TinyTransformer()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    tokens = torch.randint(0, tt.VOCAB, (tt.BATCH, tt.SEQ))
    targets = torch.randint(0, tt.VOCAB, (tt.BATCH, tt.SEQ))

    def step(tokens, targets):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(tokens).reshape(TOKENS, tt.VOCAB), targets.reshape(TOKENS))
        loss.backward()
        opt.step()
        return loss

    return step, (tokens, targets), torch


def matmul_flops_of_step():
    """FLOPs of every matmul in the compiled step's graph (forward and backward)."""
    g = dyn.debug.graphs("train_step")[0]
    shapes = {i["value"]: tuple(i["shape"]) for i in g.inputs}
    for n in g.nodes:
        shapes[n.outputs[0]] = tuple(n.shape)
    flops = 0
    for n in g.nodes:
        if n.op == "matmul":
            a = shapes[n.inputs[0]]
            k = a[-1]
            flops += 2 * math.prod(n.shape) * k
    return flops


def blas_gflops():
    a, b = dyn.randn(256, 256), dyn.randn(256, 256)
    t = time_steps(lambda: a @ b)
    return 2 * 256 ** 3 / t / 1e9


def main():
    try:
        import torch  # noqa: F401

        have_torch = True
    except ImportError:
        have_torch = False
    threads_all = dyn.get_num_threads()
    print("dyn training benchmark: tiny transformer "
          f"(vocab {tt.VOCAB}, dim {tt.DIM}, heads {tt.HEADS}, layers {tt.LAYERS}, seq {tt.SEQ}, batch {tt.BATCH}), "
          f"AdamW, {TOKENS} tokens per step")
    print(f"{'threads':>7}  {'dyn eager':>12}  {'dyn compiled':>13}  {'torch eager':>12}  "
          f"{'compiled/eager':>14}  {'compiled/torch':>14}")
    floor_line = ""
    for threads in sorted({1, threads_all}):
        dyn.set_num_threads(threads)
        results = {}
        for compiled in (False, True):
            dyn.debug.reset()
            step, args = dyn_step(compiled)
            results[compiled] = TOKENS / time_steps(step, *args)
        torch_tps = None
        if have_torch:
            step, args, torch = torch_step()
            torch.set_num_threads(threads)
            torch_tps = TOKENS / time_steps(step, *args)
        ratio_eager = results[True] / results[False]
        ratio_torch = f"{results[True] / torch_tps:13.2f}x" if torch_tps else "          n/a"
        print(f"{threads:>7}  {results[False]:>12,.0f}  {results[True]:>13,.0f}  "
              f"{(f'{torch_tps:,.0f}' if torch_tps else 'n/a'):>12}  {ratio_eager:>13.2f}x  {ratio_torch}")
        if threads == threads_all:
            flops = matmul_flops_of_step()
            gflops = blas_gflops()
            step_s = TOKENS / results[True]
            floor_s = flops / (gflops * 1e9)
            floor_line = (f"floor at {threads} threads: {flops / 1e6:.1f} MFLOP of matmuls per step at "
                          f"{gflops:.0f} GFLOP/s (256x256 sgemm) = {floor_s * 1e3:.3f} ms; the compiled step takes "
                          f"{step_s * 1e3:.2f} ms ({step_s / floor_s:.0f}x its floor)")
    print("tokens/s; ratios > 1 mean dyn compiled is faster")
    print(floor_line)


main()
