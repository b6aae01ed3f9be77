#!/usr/bin/python3
"""Golden transcripts of dynrepl sessions: stdin lines in, merged stdout+stderr out.

Each golden is three files in tests/repl/golden/:
  NAME.cmd     first line: the dynrepl arguments (shell-quoted, relative to the repo root,
               which is the working directory); every following byte is fed to stdin
  NAME.out     the expected merged stdout+stderr, after masking
  NAME.status  the expected exit status (one integer)

Masked before comparing, and nothing else: addresses (0x...), timings (0.0123s, 1.234 ms,
12.5 us as <t> ms, and a share of a time: 41.2%) and
the absolute path of the repository (<repo>).

usage: run_golden.py                 run every golden
       run_golden.py NAME...         run these
       run_golden.py --bless NAME... regenerate these from the current binary (for developers:
                                     review the diff before committing; tests never bless)
       run_golden.py --list          list the golden names
The binary is $DYNREPL, else build/repl/dynrepl under the repo root.
"""
import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")
REPO = os.path.dirname(os.path.dirname(HERE))
TIMEOUT_S = 30


def binary():
    path = os.environ.get("DYNREPL") or os.path.join(REPO, "build", "repl", "dynrepl")
    if not os.access(path, os.X_OK):
        sys.exit(f"run_golden: no dynrepl binary at {path} (set DYNREPL)")
    return path


def names():
    return sorted(f[:-4] for f in os.listdir(GOLDEN) if f.endswith(".cmd"))


def mask(text):
    for root in sorted({REPO, os.path.realpath(REPO)}, key=len, reverse=True):
        text = text.replace(root, "<repo>")
    text = re.sub(r"0x[0-9a-fA-F]+", "0x<addr>", text)
    # A time right-aligned in a column keeps one space of its padding: the digits set the rest. Its
    # unit is masked too (:profile prints us below 1 ms).
    text = re.sub(r"( *)\b\d+\.\d+ (ms|us)\b", lambda m: (" " if m.group(1) else "") + "<t> ms", text)
    text = re.sub(r"\b\d+\.\d+ms\b", "<t>ms", text)
    text = re.sub(r"( *)\b\d+\.\d%", lambda m: (" " if m.group(1) else "") + "<t>%", text)  # a share of a time
    text = re.sub(r"\b\d+\.\d+s\b", "<t>s", text)
    return text


def run(name):
    """Runs one golden; returns (masked output, exit status)."""
    with open(os.path.join(GOLDEN, name + ".cmd"), "rb") as f:
        data = f.read()
    first, _, stdin = data.partition(b"\n")
    args = shlex.split(first.decode())
    with tempfile.TemporaryDirectory(prefix="dynrepl-golden-") as home:
        env = dict(os.environ)
        for var in ("NO_COLOR", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONWARNINGS"):
            env.pop(var, None)
        env.update(HOME=home, TERM="dumb", PYTHONDONTWRITEBYTECODE="1", LC_ALL="C.UTF-8")
        try:
            p = subprocess.run([binary()] + args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               cwd=REPO, env=env, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode("utf-8", "backslashreplace")
            return mask(out) + f"\n<timed out after {TIMEOUT_S}s>\n", None
    return mask(p.stdout.decode("utf-8", "backslashreplace")), p.returncode


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def check(name):
    out, status = run(name)
    expected = read_text(os.path.join(GOLDEN, name + ".out"))
    expected_status = int(read_text(os.path.join(GOLDEN, name + ".status")).strip())
    ok = out == expected and status == expected_status
    if not ok:
        print(f"FAIL {name}")
        if status != expected_status:
            print(f"  exit status {status}, expected {expected_status}")
        if out != expected:
            sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), out.splitlines(True),
                                                       f"golden/{name}.out", f"{name} (actual)"))
            if not out.endswith("\n") or not expected.endswith("\n"):
                print("\n  (one side does not end with a newline)")
    else:
        print(f"ok   {name}")
    return ok


def bless(name):
    out, status = run(name)
    if status is None:
        sys.exit(f"run_golden: {name} timed out; not blessed")
    with open(os.path.join(GOLDEN, name + ".out"), "w", encoding="utf-8") as f:
        f.write(out)
    with open(os.path.join(GOLDEN, name + ".status"), "w") as f:
        f.write(f"{status}\n")
    print(f"blessed {name} (status {status}); review: git diff -- tests/repl/golden/{name}.out")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*")
    ap.add_argument("--bless", action="store_true", help="regenerate the named goldens")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    known = names()
    if a.list:
        print("\n".join(known))
        return 0
    for n in a.names:
        if n not in known:
            sys.exit(f"run_golden: no golden '{n}' (have: {', '.join(known)})")
    if a.bless:
        if not a.names:
            sys.exit("run_golden: --bless needs the NAMEs to regenerate")
        for n in a.names:
            bless(n)
        return 0
    failed = [n for n in (a.names or known) if not check(n)]
    if failed:
        print(f"{len(failed)} golden(s) failed: {' '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
