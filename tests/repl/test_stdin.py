#!/usr/bin/python3
"""Properties of the non-TTY REPL that a golden transcript cannot pin: random bytes on stdin,
files whose size varies (:render, :report), and known bugs kept as expected failures (each turns
into an "unexpected success", i.e. a failure, once fixed: then drop its marker and, where the
output became stable, make it a golden with run_golden.py --bless).

Run: /usr/bin/python3 tests/repl/test_stdin.py [-v]   (binary: $DYNREPL, else build/repl/dynrepl)
"""
import os
import random
import re
import subprocess
import tempfile
import unicodedata
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BINARY = os.environ.get("DYNREPL") or os.path.join(REPO, "build", "repl", "dynrepl")


def dynrepl(args, stdin=b""):
    """Runs dynrepl with stdin from a pipe; returns (status, stdout, stderr) as bytes."""
    with tempfile.TemporaryDirectory(prefix="dynrepl-stdin-") as home:
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "PYTHONSTARTUP")}
        env.update(HOME=home, TERM="dumb", PYTHONDONTWRITEBYTECODE="1", LC_ALL="C.UTF-8")
        p = subprocess.run([BINARY] + list(args), input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           cwd=REPO, env=env, timeout=30)
    return p.returncode, p.stdout, p.stderr


def garbage(seed, lines=40):
    """Random bytes, newline-separated, none of them a newline themselves."""
    r = random.Random(seed)
    return b"\n".join(bytes(r.choice([b for b in range(256) if b != 10]) for _ in range(r.randrange(1, 80)))
                      for _ in range(lines)) + b"\n"


class StdinTest(unittest.TestCase):
    def test_binary_garbage_session_goes_on(self):
        for seed in (1, 2, 3):
            with self.subTest(seed=seed):
                status, out, err = dynrepl(["--no-color"], garbage(seed) + b"print('alive')\n")
                self.assertEqual(status, 0, err[-2000:])
                self.assertTrue(out.endswith(b"alive\n"), out[-500:])
                self.assertNotIn(b"Segmentation", err)
                self.assertNotIn(b"internal error", err)

    def test_binary_garbage_then_exit_status(self):
        status, out, err = dynrepl(["--no-color"], garbage(7) + b"exit(5)\nprint('not reached')\n")
        self.assertEqual(status, 5, err[-2000:])
        self.assertNotIn(b"not reached", out)

    def test_binary_garbage_while_stopped(self):
        status, out, err = dynrepl(["-i", "--no-color", "--break", "recompile", "scripts/examples/recompiles.py"],
                                   garbage(11) + b"print('scale is', scale)\n:continue\n:continue\n")
        self.assertEqual(status, 0, err[-2000:])
        self.assertIn(b"scale is 0.5", out)
        self.assertIn(b"calls 5, cache hits 2, compiles 3, recompiles 2", out)

    def test_binary_garbage_reports_one_error_line_each(self):
        status, out, err = dynrepl(["--no-color"], b"\xff\xfe\x80 abc\n\xc3(\nprint('alive')\n")
        self.assertEqual(status, 0)
        self.assertEqual(out, b"alive\n")
        lines = err.decode("utf-8", "replace").splitlines()
        self.assertEqual(len(lines), 2, lines)
        for line in lines:
            self.assertTrue(line.startswith("error: "), line)

    def test_utf8_check_agrees_with_pythons_decoder(self):
        # UTF-8-shaped bytes that are not UTF-8 (overlong forms, surrogates, past U+10FFFF) must be
        # refused before Python sees them, or the half-typed block is lost to a bare UnicodeDecodeError.
        r = random.Random(5)
        lines, bad = [], 0
        for _ in range(400):
            n = r.choice([2, 3, 4])
            lead = r.randrange({2: 0xc0, 3: 0xe0, 4: 0xf0}[n], {2: 0xe0, 3: 0xf0, 4: 0xf8}[n])
            seq = bytes([lead] + [r.randrange(0x80, 0xc0) for _ in range(n - 1)])
            try:
                seq.decode("utf-8")
            except UnicodeDecodeError:
                bad += 1
            lines.append(b"# " + seq)
        status, out, err = dynrepl(["--no-color"], b"x = (1,\n" + b"\n".join(lines) + b"\n2)\nprint(x)\n")
        self.assertEqual(status, 0, err[-2000:])
        self.assertEqual(out, b"(1, 2)\n")
        errors = err.decode().splitlines()
        self.assertGreater(bad, 50)  # seed 5 draws each kind: C0/C1, E0, ED, F0, F4, F5..
        self.assertEqual(len(errors), bad, errors[:5])
        self.assertTrue(all(e.startswith("error: the line is not UTF-8 text") for e in errors), errors[:5])

    def test_exec_line_not_utf8(self):
        status, out, err = dynrepl(["--batch", "--no-color", "-e", b"\xc0\x80", "-e", "print('next')"])
        self.assertEqual(status, 1)
        self.assertEqual(out, b"next\n")
        self.assertEqual(err, b"error: the line is not UTF-8 text (byte 0xc0 at column 1) and was not run; type text\n")

    def test_errors_escape_what_does_not_print(self):
        # Every character Python's repr escapes (controls, format characters, separators) is shown
        # escaped when an error echoes it, as repr shows it; a printable one is shown as it is.
        hidden = [chr(c) for c in range(1, 0x110000) if unicodedata.category(chr(c)) in ("Cc", "Cf", "Zs", "Zl", "Zp")
                  and chr(c) not in " \n"]
        shown = ["é", "λ", "中", "🙂", "\u0301"]  # a combining accent prints on the quote before it
        lines = [f":delete 'x{ch}'".encode() for ch in hidden + shown]
        status, out, err = dynrepl(["--no-color"], b"\n".join(lines) + b"\n")
        self.assertEqual(status, 0)
        got = err.decode().splitlines()
        self.assertEqual(len(got), len(hidden) + len(shown))
        for ch, line in zip(hidden + shown, got):
            want = repr(ch)[1:-1] if ch in hidden else ch
            self.assertEqual(line, f"error: expected a breakpoint number, got 'x{want}'", f"U+{ord(ch):04X}")

    def test_command_line_errors_escape_what_does_not_print(self):
        status, out, err = dynrepl(["--break", b"compile\x1b[31m", "-c", "pass"])
        self.assertEqual(status, 2)
        self.assertIn(b"unknown event kind 'compile\\x1b[31m'", err)
        status, out, err = dynrepl([b"--no-col\x01or", "-c", "pass"])
        self.assertEqual(status, 2)
        self.assertNotIn(b"\x01", err)
        self.assertIn(b"--no-col\\x01or", err)

    def test_syntax_error_like_python(self):
        status, out, err = dynrepl(["--no-color"], b"x = = 1\nprint('ok')\n")
        self.assertEqual(status, 0)
        self.assertEqual(out, b"ok\n")
        self.assertEqual(err.decode(), '  File "<stdin>", line 1\n    x = = 1\n        ^\nSyntaxError: invalid syntax\n')

    def test_nul_byte_is_reported(self):
        status, out, err = dynrepl(["--no-color"], b"print(1)\x00print(2)\nprint('end')\n")
        self.assertEqual(status, 0)
        self.assertIn(b"nul byte", err.lower())

    def test_very_long_command_line(self):
        name = "n" * 100_000
        status, out, err = dynrepl(["--no-color"], f":guards {name}\n:help {name}\nprint('alive')\n".encode())
        self.assertEqual(status, 0)
        self.assertEqual(out, b"alive\n")
        lines = err.decode().splitlines()
        self.assertEqual(len(lines), 2)
        self.assertTrue(all(line.startswith("error: ") for line in lines))

    def test_very_long_graph_id(self):
        long_id = "n" * 100_000
        for line in (f":graph {long_id}", f":dot {long_id}", f":diff {long_id} x", f":render {long_id} /tmp/x.svg"):
            with self.subTest(cmd=line.split()[0]):
                status, out, err = dynrepl(["--no-color"], f"{line}\nprint('alive')\n".encode())
                self.assertEqual(status, 0)
                self.assertEqual(out, b"alive\n")
                self.assertTrue(err.startswith(b"error: "))

    def test_render_and_report(self):
        with tempfile.TemporaryDirectory(prefix="dynrepl-render-") as d:
            svg, png, html, dif = (os.path.join(d, n) for n in ("g.svg", "g.png", "r.html", "d.svg"))
            status, out, err = dynrepl(["-i", "--no-color", "scripts/examples/recompiles.py"],
                                       f":render f[0].0 {svg}\n:render f {png}\n:render --diff f[0] f[2] {dif}\n"
                                       f":report {html}\n".encode())
            self.assertEqual(status, 0, err)
            self.assertEqual(err, b"")
            for path in (svg, png, html, dif):
                m = re.search(rb"wrote " + re.escape(path.encode()) + rb" \((\d+) bytes\)\n", out)
                self.assertIsNotNone(m, f"no 'wrote {path}' line in:\n{out.decode()}")
                self.assertEqual(int(m.group(1)), os.path.getsize(path))
            with open(svg, "rb") as f:
                self.assertIn(b"<svg", f.read())
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            with open(html, "rb") as f:
                text = f.read()
            self.assertIn(b"<html", text.lower())
            self.assertIn(b"f[2]", text)


if __name__ == "__main__":
    if not os.access(BINARY, os.X_OK):
        raise SystemExit(f"test_stdin: no dynrepl binary at {BINARY} (set DYNREPL)")
    unittest.main()
