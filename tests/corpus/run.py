#!/usr/bin/env python3
"""Run the corpus of public PyTorch programs under PyTorch 2.15 and under dynrepl, and print a
markdown table: program | PyTorch 2.15 | dynrepl | first blocker.

    /usr/bin/python3 tests/corpus/run.py                 # every program, both sides
    /usr/bin/python3 tests/corpus/run.py --only mnist    # names containing "mnist" (repeatable, or a,b)
    /usr/bin/python3 tests/corpus/run.py --dyn-only --json out.json
    /usr/bin/python3 tests/corpus/run.py --setup         # install the reference side's extra packages

Each program (a file, or a folder for multi-file programs) is copied with corpus_synthetic/ into
a fresh temporary directory, which is the working directory of every step. A program passes when
each of its steps exits with status 0 within the timeout. Programs run one at a time.

The reference side is /opt/torch-ref/bin/python (PyTorch 2.15); torchvision, pillow and
tensorboard, which some programs import and which that environment lacks, come from
/opt/corpus-refdeps (`--setup` installs them there with pip --no-deps). dynrepl maps
`import torch`/`torchvision` onto dyn itself and needs none of them.

Programs, their sources and every change made to them: SOURCES.md beside this file.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DYNREPL = os.environ.get("DYNREPL") or os.path.join(ROOT, "build", "repl", "dynrepl")
REF_PYTHON = "/opt/torch-ref/bin/python"
REF_SITE = "/opt/torch-ref/lib/python3.11/site-packages"
REF_DEPS = "/opt/corpus-refdeps"
REF_DEPS_PACKAGES = ["torchvision==0.29.2", "pillow", "tensorboard", "protobuf", "absl-py"]

# name, path under tests/corpus (file or folder), steps: (script in that folder, args).
# A single-file program's one step runs that file.
P = []


def prog(name, path, *steps):
    P.append({"name": name, "path": path, "steps": list(steps) or [(None, [])]})


def one(name, path, *args):
    prog(name, path, (None, list(args)))


# pytorch/examples
one("examples/mnist", "examples_mnist.py", "--epochs", "1", "--dry-run")
one("examples/mnist_rnn", "examples_mnist_rnn.py", "--epochs", "1", "--dry-run")
one("examples/regression", "examples_regression.py")
prog("examples/time_sequence_prediction", "examples_time_sequence_prediction",
     ("generate_sine_wave.py", []), ("train.py", ["--steps", "2"]))
one("examples/vae", "examples_vae.py", "--epochs", "1")
one("examples/dcgan", "examples_dcgan.py", "--dataset", "fake", "--dry-run")
prog("examples/word_language_model", "examples_word_language_model",
     ("main.py", ["--data", "data/synthetic", "--epochs", "1", "--dry-run"]),
     ("generate.py", ["--data", "data/synthetic", "--words", "100"]))
prog("examples/word_language_model_transformer", "examples_word_language_model",
     ("main.py", ["--data", "data/synthetic", "--model", "Transformer", "--epochs", "1", "--dry-run"]),
     ("generate.py", ["--data", "data/synthetic", "--words", "100"]))
one("examples/siamese_network", "examples_siamese_network.py", "--epochs", "1", "--dry-run",
    "--test-batch-size", "100")
prog("examples/super_resolution", "examples_super_resolution",
     ("main.py", ["--upscale_factor", "3", "--batchSize", "4", "--testBatchSize", "100", "--nEpochs", "1",
                  "--lr", "0.001"]))
one("examples/gcn", "examples_gcn.py", "--epochs", "1", "--dry-run")
one("examples/gat", "examples_gat.py", "--epochs", "1", "--dry-run")
one("examples/mnist_forward_forward", "examples_mnist_forward_forward.py", "--epochs", "20",
    "--train_size", "2000", "--test_size", "1000", "--no_accel")
one("examples/fx_invert", "examples_fx_invert.py")
one("examples/fx_replace_op", "examples_fx_replace_op.py")
one("examples/reinforce", "examples_reinforce.py")
# karpathy
prog("nanoGPT/train", "nanogpt",
     ("data/shakespeare_char/prepare.py", []),
     ("train.py", ["config/train_shakespeare_char.py", "--device=cpu", "--compile=False", "--eval_iters=5",
                   "--eval_interval=20", "--log_interval=5", "--block_size=64", "--batch_size=12", "--n_layer=2",
                   "--n_head=4", "--n_embd=64", "--max_iters=20", "--lr_decay_iters=20", "--dropout=0.0"]))
prog("nanoGPT/train_compiled", "nanogpt",
     ("data/shakespeare_char/prepare.py", []),
     ("train.py", ["config/train_shakespeare_char.py", "--device=cpu", "--compile=True", "--eval_iters=5",
                   "--eval_interval=20", "--log_interval=5", "--block_size=64", "--batch_size=12", "--n_layer=2",
                   "--n_head=4", "--n_embd=64", "--max_iters=20", "--lr_decay_iters=20", "--dropout=0.0"]))
prog("minGPT/adder", "mingpt", ("adder.py", ["--trainer.max_iters=30", "--trainer.num_workers=0"]))
prog("minGPT/chargpt", "mingpt", ("chargpt.py", ["--trainer.max_iters=20", "--trainer.num_workers=0",
                                                 "--model.model_type=gpt-nano", "--trainer.batch_size=16"]))
prog("makemore", "makemore", ("makemore.py", ["-i", "names.txt", "-o", "out", "--max-steps", "501",
                                              "--num-workers", "0"]))
# yunjey/pytorch-tutorial
one("yunjey/pytorch_basics", "yunjey_pytorch_basics.py")
one("yunjey/linear_regression", "yunjey_linear_regression.py")
one("yunjey/logistic_regression", "yunjey_logistic_regression.py")
one("yunjey/feedforward_neural_network", "yunjey_feedforward_neural_network.py")
one("yunjey/convolutional_neural_network", "yunjey_convolutional_neural_network.py")
one("yunjey/deep_residual_network", "yunjey_deep_residual_network.py")
one("yunjey/recurrent_neural_network", "yunjey_recurrent_neural_network.py")
one("yunjey/bidirectional_rnn", "yunjey_bidirectional_recurrent_neural_network.py")
prog("yunjey/language_model", "yunjey_language_model", ("main.py", []))
one("yunjey/generative_adversarial_network", "yunjey_generative_adversarial_network.py")
one("yunjey/variational_autoencoder", "yunjey_variational_autoencoder.py")
# pytorch/tutorials
one("tutorials/quickstart", "tutorials_quickstart_tutorial.py")
one("tutorials/cifar10_tutorial", "tutorials_cifar10_tutorial.py")
one("tutorials/polynomial_custom_function", "tutorials_polynomial_custom_function.py")
one("tutorials/spatial_transformer_tutorial", "tutorials_spatial_transformer_tutorial.py")
prog("tutorials/char_rnn_classification", "tutorials_char_rnn_classification",
     ("char_rnn_classification_tutorial.py", []))

PROGRAMS = [p for p in P if os.path.exists(os.path.join(HERE, p["path"]))]


def ref_command():
    env = dict(os.environ)
    # PyTorch's OpenMP pool on this 2-core machine, shared with builds, made small-op programs up to
    # 100x slower (time_sequence_prediction: 20 s per LBFGS iteration); one thread avoids that.
    env.setdefault("OMP_NUM_THREADS", "1")
    paths = [REF_DEPS] if os.path.isdir(REF_DEPS) else []
    if os.path.exists(REF_PYTHON):
        exe = [REF_PYTHON]
    else:
        exe = ["/usr/bin/python3"]
        paths.append(REF_SITE)
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return exe, env


def dyn_command():
    # The binary may be rebuilt while we run: wait for it to come back.
    for _ in range(10):
        if os.path.isfile(DYNREPL) and os.access(DYNREPL, os.X_OK):
            break
        print(f"[corpus] {DYNREPL} is missing; waiting 60 s", file=sys.stderr)
        time.sleep(60)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return [DYNREPL, "--batch"], env


def stage(program, workdir):
    src = os.path.join(HERE, program["path"])
    if os.path.isdir(src):
        shutil.copytree(src, workdir, dirs_exist_ok=True)
    else:
        shutil.copy(src, workdir)
    shutil.copytree(os.path.join(HERE, "corpus_synthetic"), os.path.join(workdir, "corpus_synthetic"),
                    dirs_exist_ok=True)


def run_side(program, side, timeout):
    """Run every step of one program on one side; return a result dict."""
    workdir = tempfile.mkdtemp(prefix="corpus-")
    try:
        stage(program, workdir)
        start = time.time()
        for script, args in program["steps"]:
            script = script or os.path.basename(program["path"])
            for attempt in range(3):
                exe, env = ref_command() if side == "ref" else dyn_command()
                cmd = exe + [script] + args
                try:
                    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True,
                                          errors="replace", timeout=timeout, stdin=subprocess.DEVNULL)
                except subprocess.TimeoutExpired as e:
                    out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
                    err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
                    return {"ok": False, "status": f"TIMEOUT {timeout}s", "step": script, "seconds": timeout,
                            "blocker": f"timeout after {timeout} s in {script}; last output: "
                                       + (last_lines(err, 2) or last_lines(out, 2)),
                            "stderr_tail": last_lines(err, 15), "stdout_tail": last_lines(out, 5)}
                except OSError as e:  # binary replaced under us (text file busy, exec format error)
                    if side == "dyn" and attempt < 2:
                        time.sleep(60)
                        continue
                    return {"ok": False, "status": "ERROR", "step": script, "seconds": 0,
                            "blocker": f"could not start {cmd[0]}: {e}", "stderr_tail": "", "stdout_tail": ""}
                # a dynrepl killed by a signal right after a rebuild: retry once the binary is back
                if side == "dyn" and proc.returncode < 0 and not os.path.exists(DYNREPL) and attempt < 2:
                    time.sleep(60)
                    continue
                break
            if proc.returncode != 0:
                return {"ok": False, "status": f"FAIL rc={proc.returncode}", "step": script,
                        "seconds": round(time.time() - start, 1),
                        "blocker": blocker(proc.stderr, proc.stdout, workdir, proc.returncode),
                        "stderr_tail": last_lines(proc.stderr, 25), "stdout_tail": last_lines(proc.stdout, 5)}
        return {"ok": True, "status": "ok", "seconds": round(time.time() - start, 1), "blocker": "",
                "stdout_tail": last_lines(proc.stdout, 3)}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def last_lines(text, n):
    lines = [l for l in (text or "").rstrip().splitlines() if l.strip()]
    return "\n".join(lines[-n:])


FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (.+)$')


def blocker(stderr, stdout, workdir, rc):
    """The exception (type: message) and the last frame in the program's own files."""
    lines = (stderr or "").rstrip().splitlines()
    tb = max((i for i, l in enumerate(lines) if l.startswith("Traceback (most recent call last)")), default=None)
    if tb is None:
        tail = last_lines(stderr, 3) or last_lines(stdout, 3)
        if rc < 0:
            return f"killed by signal {-rc}" + (f"; last output: {tail}" if tail else "")
        return f"exit status {rc}; last output: {tail}"
    frames, exc_lines = [], []
    i = tb + 1
    while i < len(lines):
        m = FRAME.match(lines[i])
        if m:
            code = lines[i + 1].strip() if i + 1 < len(lines) and not FRAME.match(lines[i + 1]) else ""
            frames.append((m.group(1), int(m.group(2)), m.group(3), code))
            i += 1
        elif not lines[i].startswith(" ") and lines[i].strip():
            exc_lines = lines[i:]
            break
        i += 1
    exc = " ".join(l.strip() for l in exc_lines if l.strip())
    # dynrepl's standard advice adds nothing to a table row
    exc = re.sub(r"\s*\(\d+ frames? inside dyn left out;[^)]*\)", "", exc)
    exc = re.sub(r"\s*Run the script with `dynrepl --real-torch`.*?avoid this module\.", "", exc)
    if len(exc) > 400:
        exc = exc[:400] + " ..."
    real = os.path.realpath(workdir)
    user = [f for f in frames if os.path.realpath(os.path.join(real, f[0])).startswith(real + os.sep)
            and "corpus_synthetic" not in f[0]]
    where = ""
    if user:
        path, line, fn, code = user[-1]
        where = f" — at {os.path.relpath(os.path.join(real, path), real)}:{line} in {fn}: `{code}`"
    return exc + where


def cell(text):
    return (text or "").replace("|", "\\|").replace("\n", " ⏎ ")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", default=[], help="run programs whose name contains NAME")
    ap.add_argument("--dyn-only", action="store_true", help="run under dynrepl only")
    ap.add_argument("--ref-only", action="store_true", help="run under PyTorch 2.15 only")
    ap.add_argument("--json", metavar="OUT", help="also write the results as JSON")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per step (default 120)")
    ap.add_argument("--list", action="store_true", help="list the programs and exit")
    ap.add_argument("--expect", metavar="JSON",
                    help="exit 1 unless each program's dynrepl outcome is the file's (expected.json: the test)")
    ap.add_argument("--setup", action="store_true",
                    help=f"pip install {' '.join(REF_DEPS_PACKAGES)} (--no-deps) into {REF_DEPS} and exit")
    args = ap.parse_args()

    if args.setup:
        exe, _ = ref_command()
        sys.exit(subprocess.call(exe + ["-m", "pip", "install", "--no-deps", "--target", REF_DEPS]
                                 + REF_DEPS_PACKAGES))
    names = [n for o in args.only for n in o.split(",") if n]
    progs = [p for p in PROGRAMS if not names or any(n in p["name"] for n in names)]
    if args.list:
        for p in progs:
            print(p["name"], p["path"], p["steps"])
        return
    sides = ["dyn"] if args.dyn_only else ["ref"] if args.ref_only else ["ref", "dyn"]

    results = []
    for p in progs:
        row = {"name": p["name"], "path": p["path"]}
        for side in sides:
            r = run_side(p, side, args.timeout)
            row[side] = r
            print(f"[corpus] {p['name']:45s} {side}: {r['status']} ({r['seconds']} s)"
                  + (f"  {r['blocker'][:200]}" if not r["ok"] else ""), file=sys.stderr, flush=True)
        results.append(row)

    def status(r):
        if r is None:
            return "—"
        return f"ok ({r['seconds']} s)" if r["ok"] else r["status"]

    print("| program | PyTorch 2.15 | dynrepl | first blocker |")
    print("|---|---|---|---|")
    for row in results:
        ref, dyn = row.get("ref"), row.get("dyn")
        b = ""
        if dyn is not None and not dyn["ok"]:
            b = dyn["blocker"]
        elif ref is not None and not ref["ok"]:
            b = "(PyTorch 2.15) " + ref["blocker"]
        print(f"| {row['name']} | {status(ref)} | {status(dyn)} | {cell(b)} |")
    counted = [r for r in results if "dyn" in r]
    if counted:
        npass = sum(r["dyn"]["ok"] for r in counted)
        print(f"\ndynrepl: {npass} of {len(counted)} programs pass"
              + (f"; PyTorch 2.15: {sum(r['ref']['ok'] for r in results if 'ref' in r)} of "
                 f"{sum('ref' in r for r in results)}" if "ref" in sides else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.expect:
        sys.exit(check_expected(args.expect, results))


def check_expected(path, results):
    """expected.json: program -> "pass", or the first blocker dynrepl is known to stop at. A
    program that stops is a regression; one that passes where a blocker was expected means the
    file is out of date (update it, with the table in RESULTS.md)."""
    with open(path) as f:
        expected = json.load(f)["dynrepl"]
    problems = []
    for row in results:
        if "dyn" not in row:
            continue
        want, got = expected.get(row["name"]), row["dyn"]
        if want is None:
            problems.append(f"{row['name']}: not in {os.path.basename(path)}")
        elif want == "pass" and not got["ok"]:
            problems.append(f"{row['name']}: passed before, now stops: {got['blocker'][:300]}")
        elif want != "pass" and got["ok"]:
            problems.append(f"{row['name']}: passes now (expected to stop at: {want}); mark it \"pass\"")
    for p in problems:
        print("corpus:", p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    main()
