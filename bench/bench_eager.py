"""Eager per-op cost from Python: dyn side by side with numpy and PyTorch, in one process.

Run through the binary:  build/repl/dynrepl bench/bench_eager.py [--quick] [--json FILE]
(/usr/bin/python3 bench/bench_eager.py runs the peers alone; the dyn column then shows n/a.)
"""

import argparse
import ctypes
import gc
import json
import os
import platform
import statistics
import sys
import time
import timeit

TINY_N = 8
SMALL_MM = 64
LARGE_N = 16 * 1024 * 1024
LARGE_MM = 1024
PEERS = ("dyn", "numpy", "torch")


# ---------------------------------------------------------------- peers ------

def try_import(name):
    """Returns (module, None) or (None, "ExcType: message")."""
    try:
        return __import__(name), None
    except Exception as e:  # noqa: BLE001 - any failure means "peer missing"
        return None, brief(e)


def brief(e, limit=70):
    text = f"{type(e).__name__}: {e}".splitlines()[0] if str(e) else type(e).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


dyn, dyn_err = try_import("dyn")
np, np_err = try_import("numpy")
torch, torch_err = try_import("torch")
MODULES = {"dyn": dyn, "numpy": np, "torch": torch}
IMPORT_ERRORS = {"dyn": dyn_err, "numpy": np_err, "torch": torch_err}


def first_attr(obj, *names):
    """The first of obj.<name> that exists, for ops a peer may spell differently."""
    for n in names:
        if hasattr(obj, n):
            return getattr(obj, n)
    raise AttributeError(f"{type(obj).__name__} has none of {', '.join(names)}")


# Each peer: how to make float32 inputs and how each op is spelled. Statements are timed
# inline by timeit (no extra Python call per iteration), so they are kept as source text.
def make_inputs(peer, n_vec, n_mm):
    if peer == "dyn":
        return {"a": dyn.randn(n_vec), "b": dyn.randn(n_vec), "c": dyn.randn(n_vec),
                "m": dyn.randn(n_mm, n_mm), "w": dyn.randn(n_mm, n_mm)}
    if peer == "numpy":
        rng = np.random.default_rng(0)
        f = lambda *s: rng.standard_normal(s, dtype=np.float32)  # noqa: E731
        return {"a": f(n_vec), "b": f(n_vec), "c": f(n_vec), "m": f(n_mm, n_mm), "w": f(n_mm, n_mm)}
    if peer == "torch":
        return {"a": torch.randn(n_vec), "b": torch.randn(n_vec), "c": torch.randn(n_vec),
                "m": torch.randn(n_mm, n_mm), "w": torch.randn(n_mm, n_mm)}
    raise ValueError(peer)


def relu_stmt(peer, x):
    if peer == "numpy":
        return f"np.maximum({x}, 0)"
    mod = MODULES[peer]
    probe = mod.ones(2)
    if hasattr(probe, "relu"):
        return f"({x}).relu()"
    if hasattr(mod, "relu"):
        return f"{peer}.relu({x})"
    raise AttributeError(f"{peer} has neither Tensor.relu nor {peer}.relu")


def statements(peer):
    """op key -> Python statement for this peer (relu resolved lazily, it may be missing)."""
    return {
        "add": lambda: "a + b",
        "mul": lambda: "a * b",
        "relu": lambda: relu_stmt(peer, "a"),
        "sum": lambda: "a.sum()",
        "matmul": lambda: "m @ w",
        "chain": lambda: relu_stmt(peer, "(a + b) * c"),
    }


# --------------------------------------------------------------- timing ------

def measure(stmt, env, min_trial_s, trials):
    """Median seconds per execution of stmt, timeit-style: warm up, pick a loop count so that
    one trial takes at least min_trial_s, run `trials` trials. Returns (median_s, all_trials_s)."""
    timer = timeit.Timer(stmt, globals=env, timer=time.perf_counter_ns)
    # Warm-up: first calls, caches, and memory the process has not touched yet (a VM's first
    # touch of fresh huge pages is slow); at least 3 calls, up to 0.1 s or 10 calls.
    spent = calls = 0
    while calls < 3 or (spent < 1e8 and calls < 10):
        spent += timer.timeit(1)
        calls += 1
    number = 1
    while True:
        ns = timer.timeit(number)
        if ns >= min_trial_s * 1e9:
            break
        # grow towards the target with a margin, like timeit.autorange but fewer rounds
        number = max(number * 2, int(number * min_trial_s * 1.2e9 / max(ns, 1)))
    per_op = [timer.timeit(number) / 1e9 / number for _ in range(trials)]
    return statistics.median(per_op), per_op


def to_numpy(x):
    if np is not None and isinstance(x, np.ndarray):
        return x
    if hasattr(x, "numpy"):
        return np.asarray(x.numpy())
    return np.asarray(x.tolist(), dtype=np.float32)


def dyn_from_numpy(arr):
    if hasattr(dyn, "from_numpy"):
        return dyn.from_numpy(np.ascontiguousarray(arr))
    return dyn.tensor(arr.tolist())


def check_dyn(stmt_np, stmt_dyn, data, rtol, atol):
    """Runs one op in dyn on numpy's data and compares with numpy.
    Returns "ok", or "WRONG"/"error" with a detail."""
    try:
        env_np = dict(data, np=np)
        env_d = {k: dyn_from_numpy(v) for k, v in data.items()}
        env_d["dyn"] = dyn
        want = np.asarray(eval(stmt_np, env_np))  # noqa: S307 - our own fixed statements
        got = eval(stmt_dyn, env_d)  # noqa: S307
        got_np = to_numpy(got)
        dt = str(getattr(got, "dtype", "?"))
        if "float32" not in dt:
            return "WRONG", f"result dtype {dt}, expected float32"
        if tuple(got_np.shape) != tuple(want.shape):
            return "WRONG", f"result shape {tuple(got_np.shape)}, numpy gives {tuple(want.shape)}"
        if not np.allclose(got_np, want, rtol=rtol, atol=atol):
            err = float(np.max(np.abs(got_np.astype(np.float64) - want.astype(np.float64))))
            return "WRONG", f"differs from numpy by up to {err:.3g} (rtol=atol={rtol:g})"
        return "ok", None
    except Exception as e:  # noqa: BLE001
        return "error", "check: " + brief(e)


# ----------------------------------------------------------------- rows ------

class Row:
    def __init__(self, key, label, unit, tiny, work=None):
        self.key, self.label, self.unit, self.tiny = key, label, unit, tiny
        self.work = work              # bytes or flops per execution, for rate rows
        self.seconds = {}             # peer -> median seconds per op
        self.trials = {}              # peer -> every trial, seconds per op
        self.errors = {}              # peer -> brief error text
        self.check = "n/a"            # dyn vs numpy on the same data: ok / WRONG / error
        self.check_detail = None


ROW_SPECS = [
    # key (op spelling in statements()), label, time unit, tiny?
    ("add", f"add      ({TINY_N} f32)", "ns", True),
    ("mul", f"mul      ({TINY_N} f32)", "ns", True),
    ("relu", f"relu     ({TINY_N} f32)", "ns", True),
    ("sum", f"sum      ({TINY_N} f32)", "ns", True),
    ("matmul", f"matmul   ({SMALL_MM}x{SMALL_MM} f32)", "ns", True),
    ("chain", "relu((a+b)*c) (16M f32)", "ms", False),
    ("matmul", f"matmul   ({LARGE_MM}x{LARGE_MM} f32)", "ms", False),
]

# Eager traffic of relu((a+b)*c): add reads 2 writes 1, mul reads 2 writes 1, relu reads 1
# writes 1: 8 arrays of LARGE_N float32 move through memory.
CHAIN_BYTES = 8 * 4 * LARGE_N
MATMUL_FLOPS = 2 * LARGE_MM ** 3


def run_group(rows, tiny, min_trial_s, trials, log):
    """Measures the rows of one size group, each peer with its own inputs, then frees them."""
    n_vec, n_mm = (TINY_N, SMALL_MM) if tiny else (LARGE_N, LARGE_MM)
    for peer in PEERS:
        mod = MODULES[peer]
        if mod is None:
            for r in rows:
                r.errors[peer] = "import failed: " + (IMPORT_ERRORS[peer] or "?")
            continue
        try:
            env = make_inputs(peer, n_vec, n_mm)
        except Exception as e:  # noqa: BLE001
            for r in rows:
                r.errors[peer] = "inputs: " + brief(e)
            continue
        env["np" if peer == "numpy" else peer] = mod
        stmts = statements(peer)
        for r in rows:
            try:
                stmt = stmts[r.key]()
                log(f"  {peer:6s} {r.label:26s} {stmt}")
                r.seconds[peer], r.trials[peer] = measure(stmt, env, min_trial_s, trials)
            except Exception as e:  # noqa: BLE001
                r.errors[peer] = brief(e)
        del env
        gc.collect()


def check_group(rows, tiny):
    if dyn is None or np is None:
        return
    n_vec, n_mm = (TINY_N, SMALL_MM) if tiny else (LARGE_N, LARGE_MM)
    rng = np.random.default_rng(1)
    f = lambda *s: rng.standard_normal(s, dtype=np.float32)  # noqa: E731
    data = {"a": f(n_vec), "b": f(n_vec), "c": f(n_vec), "m": f(n_mm, n_mm), "w": f(n_mm, n_mm)}
    np_stmts, dyn_stmts = statements("numpy"), statements("dyn")
    for r in rows:
        try:
            sd = dyn_stmts[r.key]()
        except Exception as e:  # noqa: BLE001
            r.check, r.check_detail = "error", "check: " + brief(e)
            continue
        tol = 1e-3 if r.key == "matmul" else 1e-6
        r.check, r.check_detail = check_dyn(np_stmts[r.key](), sd, data, rtol=tol, atol=tol)
    del data
    gc.collect()


# -------------------------------------------------------------- context ------

def cpu_model():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return " ".join(f for f in ("avx2", "fma", "avx512f") if f in flags) or "-"
    except OSError:
        pass
    return "?"


def load_average():
    """1/5/15-minute load average: other work on the machine makes every column noisy."""
    try:
        with open("/proc/loadavg") as fh:
            return " ".join(fh.read().split()[:3])
    except OSError:
        return "?"


def openblas_state():
    """Core and thread count of the OpenBLAS loaded in this process (all peers share it)."""
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode(), lib.openblas_get_num_threads()
    except (OSError, AttributeError):
        return None, None


def call_or_none(obj, name):
    if obj is not None and hasattr(obj, name):
        try:
            return getattr(obj, name)()
        except Exception as e:  # noqa: BLE001
            return "error: " + brief(e)
    return None


def set_threads():
    """Gives torch as many threads as dyn uses; returns {peer: threads}."""
    n = call_or_none(dyn, "get_num_threads")
    n = n if isinstance(n, int) and n > 0 else (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())
    threads = {"dyn": call_or_none(dyn, "get_num_threads") if dyn else None}
    if torch is not None:
        torch.set_num_threads(n)
        threads["torch"] = torch.get_num_threads()
    threads["openblas"] = openblas_state()[1]
    threads["target"] = n
    return threads


def context(threads, load):
    core, _ = openblas_state()
    ctx = {
        "nproc": os.cpu_count(),
        "cpu": cpu_model(),
        "cpu_flags": cpu_flags(),
        "load": load,
        "python": platform.python_version() + " (" + sys.executable + ")",
        "dyn": (getattr(dyn, "__version__", "built-in") if dyn else "n/a: " + dyn_err),
        "numpy": (np.__version__ if np else "n/a: " + np_err),
        "torch": (torch.__version__ if torch else "n/a: " + torch_err),
        "threads": threads,
        "openblas_core": core,
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "blas_info": None,
    }
    info = call_or_none(dyn, "blas_info")
    if info is not None:
        ctx["blas_info"] = info if isinstance(info, (str, int, float, dict, list)) else str(info)
    return ctx


# ---------------------------------------------------------------- table ------

def fmt_value(v, unit):
    if unit == "ns":
        return f"{v * 1e9:,.0f}"
    if unit == "ms":
        return f"{v * 1e3:,.2f}"
    return f"{v:,.1f}"                          # GB/s, GFLOP/s


def build_table(rows):
    notes = {}                                  # note text -> number; equal errors share one

    def cell(r, peer, value):
        if peer not in r.errors:
            return value if value is not None else "n/a"
        err = r.errors[peer]
        text = f"{peer}: {err}" if err.startswith("import failed") else f"{peer} {' '.join(r.label.split())}: {err}"
        n = notes.setdefault(text, len(notes) + 1)
        return f"n/a({n})"

    header = ["op", "unit", "dyn", "numpy", "torch", "dyn/numpy", "dyn/torch", "dyn check"]
    lines = []
    for r in rows:
        cells = [r.label, f"{r.unit}/op" if r.unit == "ns" else r.unit]
        for peer in PEERS:
            s = r.seconds.get(peer)
            cells.append(cell(r, peer, fmt_value(s, r.unit) if s is not None else None))
        d = r.seconds.get("dyn")
        for peer in ("numpy", "torch"):
            p = r.seconds.get(peer)
            cells.append(f"{d / p:.2f}x" if d is not None and p else "n/a")
        if r.check_detail and r.errors.get("dyn") != r.check_detail.removeprefix("check: "):
            n = notes.setdefault(f"dyn {' '.join(r.label.split())}: {r.check_detail}", len(notes) + 1)
            cells.append(f"{r.check}({n})")
        else:
            cells.append(r.check)
        lines.append(cells)
        if r.work is not None:                  # the rate row under a large op
            unit = "GB/s" if r.key == "chain" else "GFLOP/s"
            rate = ["", unit]
            for peer in PEERS:
                s = r.seconds.get(peer)
                rate.append(fmt_value(r.work / s / 1e9, unit) if s else "n/a")
            rate += ["", "", ""]
            lines.append(rate)
    widths = [max(len(str(c)) for c in col) for col in zip(header, *lines)]
    out = []
    for i, cells in enumerate([header] + lines):
        out.append("  ".join(str(c).ljust(w) if j < 2 else str(c).rjust(w)
                             for j, (c, w) in enumerate(zip(cells, widths))).rstrip())
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    return out, notes


def verdict(rows):
    tiny = [r for r in rows if r.unit == "ns"]
    ratios, missing = {}, []
    for r in tiny:
        d, n = r.seconds.get("dyn"), r.seconds.get("numpy")
        if d is None or n is None:
            missing.append(r.key)
        else:
            ratios[r.key] = d / n
    slower = {k: v for k, v in ratios.items() if v >= 1}
    met = not missing and not slower
    if met:
        text = "target MET: per-op overhead on tiny tensors below numpy's (dyn/numpy < 1 on every tiny op)"
    else:
        why = []
        if slower:
            why.append("slower than numpy on " + ", ".join(f"{k} {v:.2f}x" for k, v in slower.items()))
        if missing:
            why.append("not measured: " + ", ".join(missing))
        text = "target NOT MET: per-op overhead on tiny tensors below numpy's -- " + "; ".join(why)
    return met, text, ratios


# ----------------------------------------------------------------- main ------

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer, shorter trials (a smoke run)")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    ap.add_argument("-v", "--verbose", action="store_true", help="log each measurement")
    args = ap.parse_args(argv)
    min_trial_s, trials = (0.01, 3) if args.quick else (0.02, 7)
    log = (lambda s: print(s, file=sys.stderr, flush=True)) if args.verbose else (lambda s: None)

    load = load_average()         # before we add our own
    threads = set_threads()
    rows = []
    for key, label, unit, tiny in ROW_SPECS:
        r = Row(key, label, unit, tiny)
        if not tiny:
            r.work = CHAIN_BYTES if key == "chain" else MATMUL_FLOPS
        rows.append(r)
    tiny_rows = [r for r in rows if r.tiny]
    large_rows = [r for r in rows if not r.tiny]
    t0 = time.perf_counter()
    run_group(tiny_rows, True, min_trial_s, trials, log)
    run_group(large_rows, False, min_trial_s, max(3, trials // 2 + 1) if args.quick else trials, log)
    check_group(tiny_rows, True)
    check_group(large_rows, False)
    elapsed = time.perf_counter() - t0

    ctx = context(threads, load)  # after the runs: OpenBLAS is loaded and initialised by then
    th = ctx["threads"]
    print(f"dynrepl eager benchmark{' (--quick)' if args.quick else ''}")
    print(f"machine : {ctx['nproc']} cpus, {ctx['cpu']} [{ctx['cpu_flags']}], load {ctx['load']} before the run")
    print(f"python  : {ctx['python']}")
    print(f"versions: dyn {ctx['dyn']} | numpy {ctx['numpy']} | torch {ctx['torch']}")
    print(f"threads : dyn {th.get('dyn') if th.get('dyn') is not None else 'n/a'}"
          f" | torch {th.get('torch', 'n/a')} (set to match dyn)"
          f" | openblas {th.get('openblas') if th.get('openblas') is not None else 'n/a'}")
    print(f"openblas: core {ctx['openblas_core'] or 'n/a'} (one library shared by all peers in this process)"
          + (f"; OPENBLAS_CORETYPE={ctx['OPENBLAS_CORETYPE']} in the environment" if ctx["OPENBLAS_CORETYPE"] else ""))
    if ctx["blas_info"] is not None:
        print(f"dyn.blas_info(): {ctx['blas_info']}")
    print(f"timing  : median of {trials} trials, each >= {min_trial_s * 1e3:.0f} ms of back-to-back calls;"
          f" ratio = dyn time / peer time (< 1: dyn faster)")
    print()
    table, notes = build_table(rows)
    print("\n".join(table))
    if notes:
        print()
        print("\n".join(f"({n}) {text}" for text, n in notes.items()))
    print()
    met, text, ratios = verdict(rows)
    print(text)

    if args.json:
        data = {
            "context": ctx,
            "settings": {"quick": args.quick, "trials": trials, "min_trial_s": min_trial_s,
                         "elapsed_s": round(elapsed, 2)},
            "rows": [{"op": r.key, "label": r.label, "unit": r.unit,
                      "seconds": r.seconds, "trials": r.trials, "errors": r.errors,
                      "dyn_check": r.check, "dyn_check_detail": r.check_detail,
                      **({"work": r.work, "work_unit": "bytes" if r.key == "chain" else "flop"}
                         if r.work else {})} for r in rows],
            "target": {"met": met, "text": text, "dyn_over_numpy_tiny": ratios},
        }
        with open(args.json, "w") as fh:
            json.dump(data, fh, indent=2, default=str)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
