"""Backend benchmark (issue 13): the same workloads in PyTorch eager, torch.compile, numpy, dyn eager and
dyn compiled, in one process, at 1 thread (the large workloads also at 2), with the physical floors.

Run: build/repl/dynrepl --real-torch --batch bench/bench_backend.py [--quick] [--json FILE]
Without --real-torch (or without PyTorch installed) the torch columns show n/a. No timing is asserted.
"""
import ast
import json
import math
import os
import statistics
import sys
import time
import types

import numpy as np

import dyn

HERE = os.path.dirname(os.path.abspath(__file__))
QUICK = "--quick" in sys.argv
JSON = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv[:-1] else None
MIN_TRIAL_S, TRIALS, WARMUP = 0.02, (3 if QUICK else 7), (1 if QUICK else 3)
# dyn.compile: the default (tier 2 serves lifted entries without running the body); dyn.replay:
# dyn.compile(lift=False), tier 1 only (the body runs and replays against the cached trace).
COLS = ("torch", "torch.compile", "numpy", "dyn", "dyn.replay", "dyn.compile")
TOL = dict(rtol=1e-3, atol=1e-4)  # the loose dyn-vs-numpy sanity check


def brief(e, limit=90):
    text = (f"{type(e).__name__}: {e}" if str(e) else type(e).__name__).splitlines()[0]
    return text if len(text) <= limit else text[: limit - 3] + "..."


try:
    import torch

    TORCH_ERR = None
    if torch is dyn or getattr(torch, "__name__", "") != "torch":  # dynrepl maps `torch` onto dyn by default
        torch, TORCH_ERR = None, "import torch gives dyn (start dynrepl with --real-torch)"
except Exception as e:  # noqa: BLE001 - any failure means "no peer"
    torch, TORCH_ERR = None, "import torch: " + brief(e)


def _run(fn, number):
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return time.perf_counter() - t0


def _calibrate(fn):
    """Warm-up, then the number of calls that makes a trial last >= MIN_TRIAL_S (timeit-style)."""
    for _ in range(WARMUP):
        fn()
    number = 1
    while (t := _run(fn, number)) < MIN_TRIAL_S:
        number = max(number * 2, int(number * MIN_TRIAL_S * 1.2 / max(t, 1e-9)))
    return number


def measure(fn):
    """Median seconds per call over TRIALS trials."""
    number = _calibrate(fn)
    return statistics.median(_run(fn, number) / number for _ in range(TRIALS))


def measure_interleaved(fns):
    """{column: median seconds per call}, the columns' trials taken in turn, so that a burst of load
    from elsewhere on the machine lands on every column of a row rather than on one."""
    numbers = {c: _calibrate(fn) for c, fn in fns.items()}
    samples = {c: [] for c in fns}
    for _ in range(TRIALS):
        for c, fn in fns.items():
            samples[c].append(_run(fn, numbers[c]) / numbers[c])
    return {c: statistics.median(v) for c, v in samples.items()}


def set_threads(n):
    dyn.set_num_threads(n)  # also sets the OpenBLAS library that numpy shares
    if torch is not None:
        torch.set_num_threads(n)


# ------------------------------------------------------------------ workloads ------
def np_gelu(x):
    """Exact GELU; numpy has no erf, so Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7)."""
    z = np.abs(x) * np.float32(1 / math.sqrt(2))
    t = 1 / (1 + np.float32(0.3275911) * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return 0.5 * x * (1 + np.sign(x) * (1 - poly.astype(np.float32) * np.exp(-z * z)))


def mlp(rng, layers, dim, act):
    """(make(lib) -> fn, numpy fn): `layers` x Linear(dim, dim) with `act` between, shared weights."""
    s = 1 / math.sqrt(dim)
    params = [(rng.uniform(-s, s, (dim, dim)).astype(np.float32), rng.uniform(-s, s, dim).astype(np.float32))
              for _ in range(layers)]

    def make(lib):
        mods = [lib.nn.Linear(dim, dim)]
        for _ in range(layers - 1):
            mods += [getattr(lib.nn, act)(), lib.nn.Linear(dim, dim)]
        model = lib.nn.Sequential(*mods)
        model.load_state_dict({f"{2 * i}.{k}": lib.from_numpy(a.copy())
                               for i, (w, b) in enumerate(params) for k, a in (("weight", w), ("bias", b))})

        def forward(x):
            with lib.no_grad():  # inference
                return model(x)
        return forward

    np_act = np_gelu if act == "GELU" else (lambda x: np.maximum(x, np.float32(0)))

    def np_forward(x):
        for i, (w, b) in enumerate(params):
            x = x @ w.T + b
            x = np_act(x) if i < layers - 1 else x
        return x
    return make, np_forward


def tiny_ops(x):  # 100 elementwise ops on an 8-element tensor
    for _ in range(50):
        x = x * 1.0001
        x = x + 0.5
    return x


def constant_python(x):  # a body whose Python is expensive and constant: an int from constants, then one op
    n = 0
    for i in range(2000):
        n = (n * 31 + i) % 1009
    return x + n


def np_layer_norm(x, w, b):
    m = x.mean(-1, keepdims=True)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + np.float32(1e-5)) * w + b


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def workloads():
    """(name, numpy inputs, make(lib) -> fn(*inputs), numpy fn, floor bytes: a read or write of f32 = 4 bytes)."""
    rng = np.random.default_rng(0)
    f32 = lambda *s: rng.standard_normal(s, dtype=np.float32)  # noqa: E731
    n, rows = 1 << 24, 4096 * 1024
    return [
        ("elementwise chain", [f32(n), f32(n), f32(n)], lambda lib: lambda x, w, b: lib.tanh(x * w + b) * 0.5 + x,
         lambda x, w, b: np.tanh(x * w + b) * np.float32(0.5) + x, 4 * 4 * n),  # 3 reads + 1 write
        ("row softmax", [f32(4096, 1024)], lambda lib: lambda x: lib.softmax(x, dim=-1), np_softmax, 2 * 4 * rows),
        ("layer_norm", [f32(4096, 1024), f32(1024), f32(1024)],
         lambda lib: lambda x, w, b: lib.nn.functional.layer_norm(x, (1024,), w, b), np_layer_norm, 2 * 4 * rows),
        ("MLP batch 256", [f32(256, 512)], *mlp(rng, 4, 512, "GELU"), None),
        ("MLP batch 1", [f32(1, 64)], *mlp(rng, 8, 64, "ReLU"), None),
        ("100 tiny ops", [f32(8)], lambda lib: tiny_ops, tiny_ops, None),
        ("constant Python + 1 op", [f32(8)], lambda lib: constant_python, constant_python, None),
    ]


# the workloads large enough to split over two threads (the ahead-of-every-peer issue asks >= 1.6x)
TWO_THREADS = ("elementwise chain", "row softmax", "layer_norm", "MLP batch 256")


def load_bench_train():
    """bench_train.py as a module (its model, training steps and matmul FLOP count), without running main()."""
    path = os.path.join(HERE, "bench_train.py")
    with open(path) as fh:
        tree = ast.parse(fh.read(), path)
    tree.body = [s for s in tree.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                                              and getattr(s.value.func, "id", None) == "main")]
    mod = types.ModuleType("bench_train")
    mod.__file__ = path
    exec(compile(tree, path, "exec"), mod.__dict__)  # noqa: S102 - the project's own file
    return mod


# ----------------------------------------------------------------------- rows ------
class Row:
    def __init__(self, name, threads):
        self.name, self.threads = name, threads
        self.times, self.errors, self.check, self.sanity = {}, {}, "n/a", "n/a"


def compiler(lib):
    if not hasattr(lib, "compile"):
        raise RuntimeError(f"torch {lib.__version__} has no torch.compile")
    return lib.compile


COMPILED = {}  # (workload, column) -> compiled function, made once, reused at every thread count


def run_row(name, inputs, make, np_fn, threads):
    row, out, timed = Row(name, threads), {}, {}
    set_threads(threads)
    for col in COLS:
        lib = None if col == "numpy" else torch if col.startswith("torch") else dyn
        if col == "numpy" and threads > 1:
            row.errors[col] = "-"  # numpy's elementwise ops and reductions are single-threaded
            continue
        if col.startswith("torch") and torch is None:
            row.errors[col] = TORCH_ERR
            continue
        try:
            if lib is None:
                fn, args = np_fn, inputs
            else:
                # each library's own copy, in its allocator's memory (64-byte aligned), as the
                # tensors a program computes on are; numpy's arrays start 16 bytes into a cache line
                args = [lib.from_numpy(a).clone() for a in inputs]
                if col.endswith("compile") or col == "dyn.replay":
                    if (name, col) not in COMPILED:
                        COMPILED[name, col] = (dyn.compile(make(lib), lift=False) if col == "dyn.replay"
                                               else compiler(lib)(make(lib)))
                    fn = COMPILED[name, col]
                else:
                    fn = make(lib)
            # The first call also traces/compiles. A dyn compiled call returns materialized tensors: the
            # region ends (syncs) when the call returns, so timing the calls times the work.
            r = fn(*args)
            out[col] = np.ascontiguousarray(r if lib is None else r.detach().numpy())
            timed[col] = (lambda fn, args: lambda: fn(*args))(fn, args)
        except Exception as e:  # noqa: BLE001 - a missing op is a cell, not a crash
            row.errors[col] = brief(e)
    row.times.update(measure_interleaved(timed))
    if "dyn" in out and "dyn.compile" in out:
        a, b = out["dyn"], out["dyn.compile"]
        row.check = "equal" if a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32)) else "DIFF"
    if "dyn" in out and "numpy" in out:
        row.sanity = "ok" if np.allclose(out["dyn"], out["numpy"], **TOL) else "WRONG"
    return row


def decoder_row(bt):
    """bench_train's training step (forward, backward, AdamW) of the tiny decoder, at 1 thread."""
    row, losses, flops, timed = Row("tiny decoder train step", 1), {}, None, {}
    row.errors["numpy"] = "-"
    set_threads(1)
    for col in ("dyn", "dyn.replay", "dyn.compile", "torch", "torch.compile"):
        if col.startswith("torch") and torch is None:
            row.errors[col] = TORCH_ERR
            continue
        try:
            if col.startswith("dyn"):
                dyn.debug.reset()
                step, args = bt.dyn_step(col != "dyn")  # the compiled one is named train_step
                if col == "dyn.replay":
                    step = dyn.compile(step._fn, lift=False, name="train_step_replay")
            else:
                step, args, _ = bt.torch_step()
                torch.set_num_threads(1)
                step = compiler(torch)(step) if col == "torch.compile" else step
            losses[col] = [float(step(*args)) for _ in range(3)]  # same seed: dyn's two columns must agree
            timed[col] = (lambda step, args: lambda: step(*args))(step, args)
        except Exception as e:  # noqa: BLE001
            row.errors[col] = brief(e)
        if col == "dyn.compile" and col in timed:
            try:
                flops = bt.matmul_flops_of_step()
            except Exception as e:  # noqa: BLE001
                print(f"decoder floor n/a: {brief(e)}")
    row.times.update(measure_interleaved(timed))
    if "dyn" in losses and "dyn.compile" in losses:
        row.check = "equal" if losses["dyn"] == losses["dyn.compile"] == losses.get("dyn.replay", losses["dyn"]) \
            else "DIFF"
    return row, flops


# ---------------------------------------------------------------------- table ------
def fmt_time(s):
    unit, scale = next(((u, f) for u, f in (("s", 1), ("ms", 1e-3), ("us", 1e-6)) if s >= f), ("ns", 1e-9))
    return f"{s / scale:.3g} {unit}" if s < 100 * scale else f"{s / scale:.0f} {unit}"


def table(rows):
    header = ["workload", "thr", *COLS, "torch/comp", "numpy/comp", "comp/eager", "replay/comp", "check", "vs numpy"]
    notes, lines = {}, []
    for r in rows:
        cells = [r.name, str(r.threads)]
        for col in COLS:
            err = r.errors.get(col, "not measured")
            if col in r.times or err == "-":
                cells.append(fmt_time(r.times[col]) if col in r.times else "-")
                continue
            cells.append(f"n/a({notes.setdefault(err, len(notes) + 1)})")  # one note per distinct error
        t = r.times
        for a, b in ((t.get("torch"), t.get("dyn.compile")), (t.get("numpy"), t.get("dyn.compile")),
                     (t.get("dyn.compile"), t.get("dyn")), (t.get("dyn.replay"), t.get("dyn.compile"))):
            cells.append(f"{a / b:.2f}x" if a and b else "n/a")
        lines.append(cells + [r.check, r.sanity])
    widths = [max(len(x) for x in col) for col in zip(header, *lines)]
    fmt = lambda cs: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cs, widths)))  # noqa: E731
    return [fmt(header), "  ".join("-" * w for w in widths), *map(fmt, lines),
            *(f"  ({n}) {text}" for text, n in notes.items())]


def main():
    with open("/proc/loadavg") as fh:
        load = fh.read().split()[0]
    print(f"dyn backend benchmark (issue 13): {os.cpu_count()} cpus, load {load}, numpy {np.__version__}, "
          f"torch {torch.__version__ if torch else 'n/a'}, BLAS {dyn.blas_info()}")
    set_threads(1)
    src, dst = np.ones(16 << 20, np.float32), np.zeros(16 << 20, np.float32)
    bw = 2 * src.nbytes / measure(lambda: np.copyto(dst, src))  # bytes read + written per second
    # The product floor at one thread, taken with dyn's own products: numpy's bundled OpenBLAS (the
    # venv's numpy 2) keeps its own thread count, which dyn.set_num_threads does not reach.
    set_threads(1)
    a = dyn.ones(1024, 1024)
    gflops = 2 * 1024 ** 3 / measure(lambda: a @ a) / 1e9
    rows, floors = [], []
    for name, inputs, make, np_fn, floor_bytes in workloads():
        for threads in (1, 2) if name in TWO_THREADS else (1,):
            rows.append(run_row(name, inputs, make, np_fn, threads))
            if floor_bytes:
                floors.append((rows[-1], floor_bytes))
    bt = load_bench_train()
    decoder, flops = decoder_row(bt)
    rows.append(decoder)

    print("\n".join(table(rows)))
    print("median time per call (the columns of a row timed in turn, trial by trial). torch/comp, numpy/comp: peer time / dyn compiled time (> 1: dyn faster); "
          "comp/eager: dyn compiled time / dyn eager time;\ncheck: dyn compiled vs dyn eager, bitwise; "
          f"vs numpy: dyn eager allclose to numpy (rtol {TOL['rtol']:g}, atol {TOL['atol']:g})")
    print("tiny decoder tokens/s at 1 thread: "
          + (", ".join(f"{c} {bt.TOKENS / decoder.times[c]:,.0f}" for c in COLS if c in decoder.times) or "n/a"))
    print(f"\nfloors: memcpy {bw / 1e9:.1f} GB/s (np.copyto of 64 MiB, read + write), "
          f"sgemm {gflops:.1f} GFLOP/s (dyn 1024^3, 1 thread)")
    for r, nbytes in floors:
        floor, c = nbytes / bw, r.times.get("dyn.compile")
        print(f"  {r.name:<18} thr {r.threads}: {nbytes >> 20} MiB moved -> floor {fmt_time(floor)}; dyn compiled "
              + (f"{fmt_time(c)} = {c / floor:.1f}x floor" if c else "n/a"))
    c = decoder.times.get("dyn.compile")
    if flops and c:
        floor = flops / (gflops * 1e9)
        print(f"  tiny decoder step: {flops / 1e6:.1f} MFLOP of matmuls -> floor {fmt_time(floor)}; "
              f"dyn compiled {fmt_time(c)} = {c / floor:.1f}x floor")
    if JSON:
        with open(JSON, "w") as fh:
            json.dump({"memcpy_GBps": bw / 1e9, "sgemm_GFLOPs": gflops, "decoder_matmul_flops": flops,
                       "torch": torch.__version__ if torch else TORCH_ERR, "rows": [vars(r) for r in rows]}, fh, indent=1)


main()
