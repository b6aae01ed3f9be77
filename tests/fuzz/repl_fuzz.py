#!/usr/bin/python3
"""Random and malformed input for the dynrepl REPL and command line (issue 15).

The promise under test: nothing a user types may crash dynrepl, hang it or leave the REPL
unusable, and a mistake is answered by an `error: ...` line. Each session is one run of the real
binary, generated from (--seed, session number) alone, so any session can be replayed:

  prompt   `dynrepl --no-color [-i SCRIPT]`: `:` commands with junk arguments (ids out of range,
           negative, 20-digit, unbalanced quotes and brackets, unicode, control characters,
           NUL bytes, invalid UTF-8, 100k-character lines, empty, extra and unknown options) and
           random Python (valid, syntax errors, exceptions, unfinished blocks, deep nesting,
           re-entrant compiled calls, dyn.debug calls)
  stopped  the same while stopped at a breakpoint (`--break KIND[:FN]` or `:break` + `:run`),
           then `:continue`, more input
  pm       the same in post-mortem (`--pm`, or `:run` of a failing script then `:pm`)
  exit     input, then `exit(n)` / `quit()` / `raise SystemExit` / `:quit`: the status is as
           typed and the next line does not run
  cli      random option combinations (unknown options, missing values, bad kinds, paths that
           do not exist or cannot be written, generated scripts with syntax errors, exits,
           non-UTF-8 bytes, directories) and then REPL input

The commands are taken from `:help` at startup and the options from `--help`, not hard-coded.
Every session is checked for: no crash (signal, "Segmentation fault", "Fatal Python error",
"terminate called", sanitizer reports), no hang (--timeout), no leaked internal error (C++
exception text, a Python traceback printed for a `:` command, a stderr line of a `:` command
that is not an `error:` line), and still usable: after the random input (and whatever closes an
unfinished Python block), `print("SENTINEL", 6*7)`, `:stats` and `:graphs` must still answer.
To attribute output to input, a marker line (a print to stdout and to stderr) follows every
complete input unit; the fuzzer mirrors the REPL's own `codeop` logic to know where units end.

    /usr/bin/python3 tests/fuzz/repl_fuzz.py                          # 50 sessions, seed 0
    /usr/bin/python3 tests/fuzz/repl_fuzz.py --sessions 500 --seed 7
    /usr/bin/python3 tests/fuzz/repl_fuzz.py --time 600 --seed 3      # as many as fit in 10 min
    /usr/bin/python3 tests/fuzz/repl_fuzz.py --seed 7 --one 123       # one session, shown in full
    /usr/bin/python3 tests/fuzz/repl_fuzz.py --errors errors.txt      # + every distinct error: line

A failing session is written to --out DIR (default: a new temp dir) as a standalone repro:
`cmd` (golden format: line 1 the arguments, then stdin), `stdin.txt`, `args.txt`, any generated
script, `output.txt`, `problems.txt` and `replay.sh`. The binary is --binary, else $DYNREPL, else
build/repl/dynrepl. Only one dynrepl runs at a time. The last line printed is
`N sessions passed, M failed`; the exit status is 1 if M > 0.
"""
import argparse
import codeop
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
W = "@W@"  # placeholder for the session's work directory (generated scripts, written files)

# --------------------------------------------------------------------------------------------
# What the binary offers: commands from :help, options from --help.


class Offer:
    def __init__(self, binary):
        self.binary = binary
        self.commands = {}  # name -> argument spec from :help, e.g. "[ID or FN] [-v]"
        self.options = []  # (spellings, takes_value)
        self.kinds = []
        status, out, err, _ = run_dynrepl(binary, ["--no-color"], b":help\n", REPO, timeout=30)
        for line in out.decode("utf-8", "replace").splitlines():
            m = re.match(r"^\s+:([\w-]+)(.*?)(?:\s{2,}|$)", line)
            if m:
                self.commands[m.group(1)] = m.group(2).strip()
        if len(self.commands) < 5:
            sys.exit(f"repl_fuzz: could not read the commands from ':help' (status {status}):\n"
                     f"{out.decode(errors='replace')}{err.decode(errors='replace')}")
        status, out, err, _ = run_dynrepl(binary, ["--help"], b"", REPO, timeout=30)
        text = out.decode("utf-8", "replace")
        for line in text.splitlines():
            m = re.match(r"^\s+(-\w)?\s*(?:\[ )?(--[\w-]+)?(?: \])?\s*(arg)?(?:\s|$)", line)
            if m and (m.group(1) or m.group(2)):
                self.options.append(([s for s in (m.group(1), m.group(2)) if s], bool(m.group(3))))
            for u in re.findall(r"\[options\] (-\w) CODE", line):
                self.options.append(([u], True))
        m = re.search(r"KIND\[:FN\]\s*\(([^)]*)\)", text.replace("\n", " "))
        if m:
            self.kinds = [k.strip() for k in re.sub(r"\s+", " ", m.group(1)).split(",") if k.strip()]
        if not self.kinds:
            self.kinds = ["graph-break", "recompile", "guard-failure", "compile", "fallback"]
        if len(self.options) < 5:
            sys.exit(f"repl_fuzz: could not read the options from '--help':\n{text}")

    def option(self, long_name):
        for spellings, takes in self.options:
            if long_name in spellings:
                return spellings, takes
        return None


# --------------------------------------------------------------------------------------------
# Scripts the sessions run: the repo's examples and scenarios, and generated ones.

# (path relative to the repo, compiled function names, names a stop can see, break kinds that stop)
REPO_SCRIPTS = [
    ("scripts/examples/recompiles.py", ["f"], ["x", "scale", "steps", "_", "e", "c"],
     ["recompile", "guard-failure", "compile", "recompile:f"]),
    ("scripts/examples/branchy.py", ["fn"], ["a", "b", "x", "g", "e"], ["graph-break", "compile", "graph-break:fn"]),
    ("tests/repl/scenarios/lazy.py", ["layer"], ["x", "y", "z", "scale", "a", "b"],
     ["recompile:layer", "compile", "guard-failure"]),
    ("tests/repl/scenarios/fallback.py", ["small"], ["x", "k", "r"], ["fallback", "compile", "recompile"]),
    ("tests/repl/scenarios/frames.py", ["f"], ["x", "k", "y", "v"], ["graph-break", "compile"]),
    ("scripts/examples/first_steps.py", [], ["x", "y"], ["compile", "graph-break"]),
    ("scripts/examples/mlp_classifier.py", ["step"], ["x", "y", "model", "opt", "loss"], ["compile"]),
    ("scripts/examples/sampling.py", ["GPT"], ["x", "model", "logits"], ["recompile", "compile"]),
]
FAILING_SCRIPTS = ["tests/repl/scenarios/pm.py", "tests/repl/scenarios/raises.py"]
ARGV_SCRIPT = "tests/repl/scenarios/argv.py"

GENERATED = {
    "syntax_error.py": b"import dyn\nx = = 1\n",
    "exits.py": b"import sys\nprint('exits.py runs')\nsys.exit(5)\n",
    "exit_msg.py": b"raise SystemExit('bye from exit_msg.py')\n",
    "empty.py": b"",
    "latin1.py": b"# caf\xe9\nprint('latin1 \xe9')\n",
    "binary.py": bytes(range(256)),
    "bom.py": b"\xef\xbb\xbfprint('bom ok')\n",
    "keyboard.py": b"raise KeyboardInterrupt\n",
    "compiled_error.py": (b"import dyn\n\n@dyn.compile\ndef h(x):\n    y = x * 2\n    return y.view(7)\n\n"
                          b"h(dyn.ones(3))\n"),
    "deep.py": b"import dyn\n\n@dyn.compile\ndef r(x, n):\n    return x if n == 0 else r(x * 1.5, n - 1)\n\n"
               b"print(r(dyn.ones(2), 30).sum().item())\n",
    "unicode_名前.py": "import dyn\n名前 = dyn.ones(2)\nprint('名前', 名前.sum().item())\n".encode(),
}
GENERATED_DIR = "adir"  # a directory, given where a script is expected

# --------------------------------------------------------------------------------------------
# Pools of junk.

BIG = ["99999999999999999999", "18446744073709551616", "9223372036854775808", "2147483648", "4294967296",
       "-9223372036854775809", "1" + "0" * 400]
SMALL_INTS = ["0", "1", "2", "3", "-1", "-3", "-0", "+1", "01", "1_0", "0x10", "1e3", "1.5", "\u0663", "\uff11", "", " "]
UNICODE = ["\u00e9", "\u540d\u524d", "\U0001f389", "\u202e", "\u200b", "e\u0301", "\ufeff", "\u0430",
           "\u2028", "\u2029", "\u0085", "\U0010fffd", "\ufffd", "\u00a0", "\u3000"]
CONTROL = [chr(c) for c in range(1, 32) if c != 10] + ["\x7f", "\x1b[31m", "\x1b[2J", "\x1b]0;t\x07", "\x08\x08"]
QUOTES = ['"', "'", '"abc', "'abc", '""', "''", '"a b"', "'a\tb'", '"unterminated', 'a"b', "\\", "\\\"", "`"]
BRACKETS = ["[", "]", "f[", "f[0", "f]0[", "(", ")", "{", "}", "f[[0]]", "f[0]]", "[]", "[0]", "[0].0", "f[0].",
            "f[0]..0", "f[ 0 ]", "f[0].0.0", ".", "..", ".[0]", ".0", "f[0]:", "f:", ":f", "f[0][1]", "f[]", "f[].0"]
OPTIONS = ["-v", "-vv", "--verbose", "--nosuch", "-x", "--", "---", "-", "--v", "-V", "--help", "-h", "--all",
           "--diff", "-v=1", "--json"]
DANGEROUS_FILES = ["/nonexistent-dir/x.dot", "/", "/tmp", "/dev/full", "/dev/null", "", W, W + "/" + "n" * 300 + ".dot",
                   W + "/\u540d\u524d.dot", W + "/a b.dot", W + "/x", "x", "-", ".svg", W + "/x.SVG", W + "/x.pdf",
                   W + "/x.svg", W + "/x.png", W + "/x.html", W + "/x.dot", W + "/sub/dir/x.svg", "/proc/version"]
EVENT_KIND_JUNK = ["cache-hit", "cache_hit", "graph_break", "GRAPH-BREAK", "Recompile", "recompile:", "recompile::f",
                   "recompile:f:g", ":", "compile:" + "f" * 1000, "all", "*", "guard_failure", "fallback:nosuch"]

# Markers: complete input units are followed by one of these; they split the output per unit.
MARK = "@@M{}"


def marker_line(n):
    return (f"print('{MARK.format(n)}',flush=True);"
            f"print('{MARK.format(n)}',file=__import__('sys').stderr,flush=True)")


SENTINEL = ['print("SENTINEL", 6*7)', ":stats", ":graphs", 'print("SENTINEL_END", 6*7)']

# --------------------------------------------------------------------------------------------
# A session's input, mirroring how the REPL splits it into units (dynrepl runs codeop too).


class Feed:
    def __init__(self, crlf=False):
        self.lines = []  # bytes, without the line ending
        self.units = []  # per marker n: list of (line index, kind) in the unit that ends with it
        self.cur = []
        self.pending = ""
        self.compiler = codeop.CommandCompiler()
        self.crlf = crlf
        self.markers = 0
        self.mark()  # what the script prints before the first line is read goes to unit 0

    def _compile(self, source):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return "complete" if self.compiler(source, "<stdin>", "single") is not None else "incomplete"
            except BaseException:  # noqa: B036 - SyntaxError, MemoryError, RecursionError, ...
                return "error"

    @staticmethod
    def utf8_structure_ok(raw):
        """The REPL's own check: well-formed UTF-8 as Unicode defines it (no overlong forms,
        surrogates or code points above U+10FFFF), which is what Python's strict decoder accepts."""
        try:
            raw.decode("utf-8", "strict")
            return True
        except UnicodeDecodeError:
            return False

    @staticmethod
    def classify(raw):
        """What the REPL makes of one line when nothing is pending: rejected, cmd:NAME, undecodable or py."""
        if b"\0" in raw or not Feed.utf8_structure_ok(raw):
            return "rejected"
        stripped = raw.strip(b" \t")
        if stripped.startswith(b":"):
            words = Gen.classify_words(stripped.decode("utf-8", "surrogateescape"))
            name = words[0] if words else ""
            return "cmd:" + (name[1:] if name.startswith(":") else name)
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return "undecodable"  # passes the REPL's check, then Python fails to decode it
        return "py"

    def add(self, line, mark=True):
        raw = line.encode("utf-8", "surrogateescape") if isinstance(line, str) else line
        raw = raw.replace(b"\n", b" ")
        kind = self.classify(raw)
        if kind.startswith("cmd") and self.pending:
            try:
                raw.decode("utf-8")
                kind = "py"
            except UnicodeDecodeError:
                kind = "undecodable"
        if kind == "undecodable":  # dynrepl cannot hand it to codeop: an error, and the pending block is dropped
            self.pending = ""
        idx = len(self.lines)
        self.lines.append(raw)
        self.cur.append((idx, kind))
        if kind == "py":
            text = raw.decode("utf-8")
            source = self.pending + ("\n" if self.pending else "") + text
            if self._compile(source) == "incomplete":
                self.pending = source
                return
            self.pending = ""
        if mark and not self.pending:
            self.mark()

    def mark(self):
        assert not self.pending
        self.lines.append(marker_line(self.markers).encode())
        self.units.append(self.cur)
        self.cur = []
        self.markers += 1

    def close_pending(self):
        """Lines that finish (or break) whatever Python is pending; found by search, as codeop decides."""
        if not self.pending:
            return
        closers = ["", ")", "]", "}", '"""', "'''", "pass", "'", '"', "0"]
        frontier = [[]]
        for _depth in range(4):
            nxt = []
            for seq in frontier:
                for c in closers:
                    s = self.pending + "".join("\n" + x for x in seq + [c])
                    if self._compile(s) != "incomplete":
                        for x in seq + [c]:
                            self.add(x)
                        assert not self.pending
                        return
                    nxt.append(seq + [c])
            frontier = nxt[:200]
        raise RuntimeError("repl_fuzz: cannot close pending input: " + self.pending[:200])

    def data(self):
        end = b"\r\n" if self.crlf else b"\n"
        return b"".join(line + end for line in self.lines)


# --------------------------------------------------------------------------------------------
# Generators.


class Gen:
    def __init__(self, rng, offer, script=None):
        self.r = rng
        self.offer = offer
        self.fns = ["f", "g", "fn", "layer", "step", "small", "GPT", "nosuch"]
        self.names = ["x", "y", "z", "a", "b", "k", "t", "w", "scale", "steps", "_"]
        if script:
            self.fns = script[1] + self.fns
            self.names = script[2] + self.names

    def pick(self, seq):
        return self.r.choice(seq)

    def chance(self, p):
        return self.r.random() < p

    # -- command arguments

    def number(self):
        return self.pick(SMALL_INTS + BIG) if self.chance(0.6) else str(self.r.randrange(0, 12))

    def graph_id(self):
        fn = self.pick(self.fns) if self.chance(0.85) else self.pick(["", "\u540d", "f" * 200, "_", "dyn", "print"])
        form = self.r.randrange(6)
        if form == 0:
            return fn
        if form == 1:
            return f"{fn}[{self.number()}]"
        if form == 2:
            return f"{fn}[{self.number()}].{self.number()}"
        if form == 3:
            return self.pick(BRACKETS)
        if form == 4:
            return f"{fn}[{self.r.randrange(3)}].{self.r.randrange(3)}"
        return "."

    def junk_word(self):
        k = self.r.randrange(12)
        if k == 0:
            return self.pick(BIG)
        if k == 1:
            return self.pick(UNICODE) * self.r.randrange(1, 4)
        if k == 2:
            return "a" + self.pick(CONTROL) + "b"
        if k == 3:
            return self.pick(QUOTES)
        if k == 4:
            return self.pick(BRACKETS)
        if k == 5:
            return self.pick(OPTIONS)
        if k == 6:
            return self.long_junk()
        if k == 7:
            return self.pick(EVENT_KIND_JUNK + self.offer.kinds)
        if k == 8:
            return self.pick(DANGEROUS_FILES)
        if k == 9:
            return self.graph_id()
        if k == 10:
            # printable, but never a path outside the session's folder
            return "".join(chr(self.r.choice([c for c in range(33, 127) if c != 47])) for _ in range(self.r.randrange(1, 12)))
        return self.number()

    def long_junk(self):
        n = self.pick([1000, 20000, 100000])
        return self.pick(["a" * n, "f[" + "0" * n + "]", "[" * n, "-" * n, " " * n + "x", "f[0]." * (n // 5),
                          "\u540d" * (n // 3), "'" * n, "\\" * n])

    def arg_for(self, token, command):
        t = token.strip("[]")
        if t in ("ID or FN", "ID", "A", "B", "FN"):
            return self.graph_id() if self.chance(0.8) else self.junk_word()
        if t == "CMD":
            return self.pick(list(self.offer.commands)) if self.chance(0.7) else self.junk_word()
        if t == "KIND":
            kinds = self.offer.kinds + EVENT_KIND_JUNK
            k = self.pick(kinds)
            return k + (":" + self.pick(self.fns) if self.chance(0.2) else "")
        if t in ("N",):
            return self.number()
        if t.startswith("FILE"):
            if command == "run":
                return self.run_target()
            ext = t[4:] or self.pick([".dot", ".svg", ".png", ".html", ".txt", ""])
            return self.pick([W + "/out" + ext, W + "/out" + ext, self.pick(DANGEROUS_FILES)])
        if t in ("args",):
            return " ".join(self.junk_word() for _ in range(self.r.randrange(0, 3)))
        if t.startswith("-"):
            return t if self.chance(0.7) else self.pick(OPTIONS)
        return self.junk_word()

    def run_target(self):
        return self.pick([s[0] for s in REPO_SCRIPTS[:5]] + FAILING_SCRIPTS + [ARGV_SCRIPT, "/nonexistent/x.py", W,
                          W + "/syntax_error.py", W + "/empty.py", W + "/latin1.py", W + "/binary.py", W + "/" + GENERATED_DIR,
                          W + "/compiled_error.py", W + "/deep.py", W + "/unicode_\u540d\u524d.py", W + "/bom.py",
                          "", "scripts/examples", "\u540d.py"])

    def command(self, names=None, allow_quit=False):
        cmds = list(self.offer.commands)
        name = self.pick(names or cmds)
        spec = self.offer.commands.get(name, "")
        tokens = re.findall(r"\[[^\]]*\]|\S+", spec)
        args = []
        mode = self.r.randrange(10)
        if mode < 4:  # plausible arguments, each optional one maybe left out
            for tok in tokens:
                if tok.startswith("[") and self.chance(0.4):
                    continue
                args.append(self.arg_for(tok, name))
        elif mode < 6:  # plausible, then extra
            args = [self.arg_for(tok, name) for tok in tokens] + [self.junk_word() for _ in range(self.r.randrange(1, 4))]
        elif mode < 8:  # junk
            args = [self.junk_word() for _ in range(self.r.randrange(0, 4))]
        elif mode < 9:  # many
            args = [self.junk_word() if self.chance(0.3) else self.number() for _ in range(self.r.randrange(5, 60))]
        else:
            args = [self.arg_for(tok, name) for tok in tokens]
        if name == "quit" and not allow_quit and not args:
            args = [self.junk_word() or "x"]
            if not args[0].strip(" \t\"'"):
                args = ["now"]
        if name == "run" and not self.chance(0.5):  # a :run that runs something keeps the session short
            args = [self.run_target()] + args[1:]
        word = self.command_word(name)
        quoted = []
        for a in args:
            if a == "" or (" " in a and self.chance(0.5)):
                a = self.pick(['"', "'"]) + a + self.pick(['"', "'", ""])
            quoted.append(a)
        sep = self.pick([" ", " ", " ", "\t", "  "])
        line = ":" + word + (sep if quoted else "") + sep.join(quoted)
        if self.chance(0.05):
            line = self.pick(["  ", "\t", " \t "]) + line
        if self.chance(0.05):
            line += self.pick([" ", "\t", "\r", "  \t"])
        if name == "quit" and not allow_quit and self.classify_words(line) == ["quit"]:
            line += " now"
        return line

    @staticmethod
    def classify_words(line):
        """The words the REPL's split_words sees (quotes group, unbalanced quote takes the rest)."""
        words, cur, in_word, quote = [], "", False, ""
        for c in line.strip(" \t")[1:]:
            if quote:
                if c == quote:
                    quote = ""
                else:
                    cur += c
            elif c in "'\"":
                quote, in_word = c, True
            elif c in " \t":
                if in_word:
                    words.append(cur)
                    cur, in_word = "", False
            else:
                cur += c
                in_word = True
        if in_word:
            words.append(cur)
        return words

    def command_word(self, name):
        k = self.r.randrange(20)
        if k == 0:
            return name.upper()
        if k == 1:
            return name[: max(1, len(name) - 2)]
        if k == 2:
            return name + self.pick(["s", "x", "-", "_", "!", "?", "\u00e9", "\x01", "[0]"])
        if k == 3:
            return ":" + name
        if k == 4:
            return " " + name
        if k == 5:
            return name.replace("a", "\u0430")  # Cyrillic a
        if k == 6:
            return self.pick(['"' + name + '"', "'" + name, name + '"'])
        return name

    # -- Python

    def python_unit(self, stopped=False):
        """A list of lines (one unit, sometimes an unfinished one)."""
        n = self.pick(self.names)
        fn = self.pick(self.fns)
        r = self.r
        simple = [
            "1 + 1", f"{n}", f"{n}.shape", f"{n} + 1", f"{n}.sum()", f"print({n})", f"repr({n})", f"type({n})",
            f"{n}.item()", f"{n}.tolist()", f"{n}.numpy()", f"{n} * dyn.ones(1)", f"y2 = {n} * 2", f"del {n}",
            f"{n} = dyn.ones(2)", f"{n} = 3", "dyn.debug.counters()", "dyn.debug.events()[-2:]",
            "len(dyn.debug.graphs())", "[g.text() for g in dyn.debug.graphs()][:1]", f"dyn.debug.guards({fn!r})",
            f"dyn.debug.guards({fn})", f"dyn.debug.events('recompile', {fn!r})", "dyn.debug.reset()",
            f"dyn.debug.explain({fn}, dyn.ones(4, 8), 0.5)", f"dyn.debug.explain({fn}, dyn.ones(3))",
            f"{fn}(dyn.randn(4, 8), 0.5)", f"{fn}(dyn.randn(6, 8), 0.5, 2)", f"{fn}(dyn.ones(3))", f"{fn}(dyn.ones(4, 8), 1)",
            f"{fn}(dyn.ones(10), dyn.ones(10))", f"{fn}()", "dyn.compile(lambda v: v * 2)(dyn.ones(3))",
            "dyn.compile(lambda v: v * 2 if v.sum() > 0 else v)(dyn.ones(3))",
            "dyn.compile(lambda v: v.view(5))(dyn.ones(3))", "dyn.compile(fullgraph=True)(lambda v: v.item())(dyn.ones(1))",
            "dyn.sync()", "dyn.manual_seed(0)", "import torch; torch.compile(lambda v: v + 1)(torch.ones(2))",
            "dyn.ones(3) @ dyn.ones(4)", "dyn.tensor('abc')", "dyn.ones(-1)", "dyn.ones(3)[10]", "dyn.ones(3).view(7)",
            "dyn.debug.events(kind='nosuch')", "dyn.debug.graphs('nosuch')", "dyn.debug.explain(3)", "dyn.compile(3)",
            "dyn.debug.guards(None)", "dyn.mark_dynamic(dyn.ones(2), 5)", "dyn.randn(2, 3).softmax(dim=7)",
            "x = = 1", ")", "def", "1 +", "return 5", "yield 1", "break", "await x", "lambda: (yield)",
            "import nosuchmodule", "from dyn import nosuch", "import dyn.nosuch", "1/0", "undefined_name",
            "raise ValueError('boom')", "raise KeyboardInterrupt", "raise MemoryError", "raise RecursionError",
            "raise GeneratorExit", "raise BaseException('base')", "raise StopIteration", "assert False, 'nope'",
            "raise Exception('x' * 100000)", "exec('1/0')", "eval(')')", "compile('x=', 'f', 'exec')",
            "  x = 1", "\tpass", "#comment", ";", "pass;;", "", "   ", "print('a\\x00b')",
            "print('x' * 100000)", "import sys; print(sys.argv)", "import sys; sys.getrecursionlimit()",
            "import gc; gc.collect()", "import warnings; warnings.warn('w')", "__name__", "_", "dyn = None",
            "import dyn", "globals().keys() and None", "locals().keys() and None", "vars()['__name__']",
            "import threading; t_ = threading.Thread(target=lambda: dyn.ones(3) * 2); t_.start(); t_.join()",
            "import os, signal; os.kill(os.getpid(), signal.SIGINT)", "import sys; sys.setrecursionlimit(60)",
            "import sys; sys.setrecursionlimit(1000)", "b'\\xff'.decode()", "'\\N{nosuch}'", "0x", "1__0",
            "f'{'", "f'{1!z}'", "print(*range(3), sep='\\x1b[31m')", "import sys; sys.stdout.write('no newline')",
            "id(dyn.ones(1))", "dyn.ones(2, 3).t()", "dyn.ones(3).requires_grad_().sum().backward()",
            "[dyn.ones(2)] * 3", "dyn.zeros(3, dtype=dyn.int64) // 0", "dyn.ones(3) / 0",
        ]
        weird = [
            "-" * 100000 + "1", "(" * 100000, "[" * 300 + "]" * 300, "not " * 30000 + "x", "1" + "+1" * 50000,
            "x = '" + "a" * 100000 + "'", "x = [" + "1," * 50000 + "]", "'" + "\\" * 5 + "'", "\ufeffprint(1)",
            "\u540d\u524d = 1", "print('\u540d\u524d \U0001f389 \u202e rtl')", "\u540d\u524d + 1",
            "x\u200b = 1", "print('\u2028')", "e\u0301 = 2", "print(e\u0301)",
            "".join(self.pick(CONTROL) for _ in range(r.randrange(1, 8))),
            "print(1)" + self.pick(CONTROL), self.pick(CONTROL) + "print(2)",
            "\u0430 = 1", "print('a\\tb\\rc')",
        ]
        blocks = [
            ["@dyn.compile", "def h(v):", "    return v * 2 if v.sum() > 0 else v", "", "h(dyn.ones(3))"],
            ["@dyn.compile", "def h(v):", "    return v.view(7)", "", "h(dyn.ones(3))"],
            ["for i in range(3):", f"    {fn}(dyn.randn(i + 2, 8), 0.5)", ""],
            ["try:", "    1/0", "except ZeroDivisionError:", "    print('caught')", ""],
            ["def rec(n):", "    return rec(n + 1)", "", "rec(0)"],
            ["@dyn.compile", "def rc(v, n):", "    return v if n == 0 else rc(v + 1, n - 1)", "", "rc(dyn.ones(2), 200)"],
            ["class C:", "    def __repr__(self):", "        raise RuntimeError('repr fails')", "", "C()"],
            ["class D:", "    def __repr__(self):", "        return '\\x1b[31m' + 'r' * 100000", "", "D()"],
            ["x = (1,", "2)"], ["if True:", "x = 1"], ["if True:", "    pass", "  else:"],
            ["x = 1 + \\", "2"], ["\"\"\"", "still a string", "\"\"\""], ["s = '''abc", "def'''"],
            ["(", ":stats", ")"], ["def g2(:", ""], ["[1, 2", ":graphs", "]"],
            ["import dyn", "@dyn.compile", "def h2(v):", "    print(v)", "    return v + 1", "", "h2(dyn.ones(2))"],
            ["with dyn.no_grad():", "    dyn.ones(2) * 3", ""],
        ]
        unfinished = ["(", "[1, 2", '"""', "'''abc", "def g3():", "if x:", "x = 1 + \\", "for i in range(2):",
                      "class E:", "@dyn.compile", "{", "print((1"]
        k = r.randrange(20)
        if k < 11:
            return [self.pick(simple)]
        if k < 14:
            return [self.pick(weird)]
        if k < 18:
            return self.pick(blocks)
        if k < 19:
            return [self.pick(unfinished)]
        return [bytes(r.randrange(1, 256) for _ in range(r.randrange(1, 60))).replace(b"\n", b"?")]

    def exit_unit(self):
        """(lines, expected status) for a line that ends the session."""
        n = self.r.randrange(0, 8)
        return self.pick([
            ([f"exit({n})"], n), (["quit()"], 0), ([f"raise SystemExit({n})"], n), ([f"import sys; sys.exit({n})"], n),
            (["raise SystemExit"], 0), (["exit()"], 0), (["exit('bye')"], 1), ([f"quit({n})"], n),
            (["for i in range(3):", f"    exit({n})", ""], n),
        ])

    # -- one line or unit of any kind

    def unit(self, stop_cmds=False):
        r = self.r.random()
        if r < 0.45:
            names = None
            if stop_cmds and self.chance(0.5):
                names = [c for c in ("where", "up", "down", "list", "continue", "graphs", "events", "diff", "graph",
                                     "breaks", "stats", "guards", "why-recompile", "breakpoints")
                         if c in self.offer.commands]
            return [self.command(names)]
        if r < 0.9:
            return self.python_unit(stopped=stop_cmds)
        if r < 0.95:
            return [self.long_junk() if self.chance(0.5) else ":" + self.long_junk()]
        return [self.junk_line()]

    def junk_line(self):
        k = self.r.randrange(6)
        if k == 0:
            return b"\0" + b":stats"
        if k == 1:
            return b":graphs \0 f"
        if k == 2:
            return b":graph \xff\xfe"
        if k == 3:
            return b"\xc0\x80"
        if k == 4:
            return "".join(self.pick(CONTROL + UNICODE + QUOTES + BRACKETS) for _ in range(self.r.randrange(1, 20)))
        return bytes(self.r.randrange(1, 256) for _ in range(self.r.randrange(1, 80))).replace(b"\n", b"?")


# --------------------------------------------------------------------------------------------
# Sessions.


class Session:
    def __init__(self, seed, index):
        self.seed = seed
        self.index = index
        self.kind = ""
        self.args = []
        self.feed = None
        self.expect_sentinel = False
        self.expect_status = None  # an int, or a set of ints
        self.not_reached = False
        self.usage_error = None  # True: must fail as bad usage (status 2); False: must not; None: either
        self.notes = []


def pick_script(g, stops=False):
    if stops:
        return g.pick(REPO_SCRIPTS[:5] + REPO_SCRIPTS[:3])
    return g.pick(REPO_SCRIPTS)


def make_session(seed, index, offer):
    rng = random.Random(f"repl_fuzz:{seed}:{index}")
    s = Session(seed, index)
    s.feed = Feed(crlf=rng.random() < 0.05)
    roll = rng.random()
    if roll < 0.28:
        make_prompt(s, rng, offer)
    elif roll < 0.63:
        make_stopped(s, rng, offer)
    elif roll < 0.73:
        make_pm(s, rng, offer)
    elif roll < 0.83:
        make_exit(s, rng, offer)
    else:
        make_cli(s, rng, offer)
    return s


def add_units(s, g, count, stop_cmds=False):
    for _ in range(count):
        for line in g.unit(stop_cmds=stop_cmds):
            s.feed.add(line)


def add_sentinel(s):
    s.feed.close_pending()
    for line in SENTINEL:
        s.feed.add(line)
    s.expect_sentinel = True


def make_prompt(s, rng, offer):
    s.kind = "prompt"
    script = pick_script(Gen(rng, offer)) if rng.random() < 0.6 else None
    g = Gen(rng, offer, script)
    s.args = ["--no-color"] + (["-i", script[0]] if script else [])
    if rng.random() < 0.3:
        s.feed.add(f":run {g.pick(REPO_SCRIPTS[:5])[0]}")
    add_units(s, g, rng.randrange(5, 30))
    add_sentinel(s)
    s.expect_status = {0, 1}


def make_stopped(s, rng, offer):
    s.kind = "stopped"
    g0 = Gen(rng, offer)
    script = pick_script(g0, stops=True)
    g = Gen(rng, offer, script)
    kind = g.pick(script[3])
    if rng.random() < 0.6:
        s.args = ["-i", "--no-color", "--break", kind, script[0]]
        if rng.random() < 0.2:
            s.args[2:2] = ["--break", g.pick(offer.kinds)]
        if rng.random() < 0.15:
            s.args.insert(0, "--pm")
    else:
        s.args = ["--no-color"]
        spec = kind.split(":")
        s.feed.add(f":break {spec[0]}" + (f" {spec[1]}" if len(spec) > 1 else ""))
        if rng.random() < 0.3:
            s.feed.add(f":break {g.pick(offer.kinds)}")
        add_units(s, g, rng.randrange(0, 3))
        s.feed.add(f":run {script[0]}")
    for _round in range(rng.randrange(1, 4)):
        add_units(s, g, rng.randrange(2, 15), stop_cmds=True)
        s.feed.close_pending()
        for _ in range(rng.randrange(0, 3)):
            s.feed.add(":continue")
    add_units(s, g, rng.randrange(0, 5))
    add_sentinel(s)
    s.expect_status = {0, 1}


def make_pm(s, rng, offer):
    s.kind = "pm"
    script = rng.choice(FAILING_SCRIPTS + ["@W@/compiled_error.py"])
    g = Gen(rng, offer, (script, ["f", "step", "h"], ["scale", "t", "n", "y", "x", "w"], []))
    if rng.random() < 0.5:
        s.args = ["--pm", "--no-color", script] + (["-i"] if rng.random() < 0.3 else [])
    else:
        s.args = ["--no-color"]
        s.feed.add(f":run {script}")
        add_units(s, g, rng.randrange(0, 3))
        s.feed.close_pending()
        s.feed.add(":pm")
    add_units(s, g, rng.randrange(3, 20), stop_cmds=True)
    add_sentinel(s)
    s.expect_status = {0, 1}


def make_exit(s, rng, offer):
    s.kind = "exit"
    where = rng.randrange(3)
    script = REPO_SCRIPTS[rng.randrange(2)]
    g = Gen(rng, offer, script)
    if where == 0:
        s.args = ["--no-color"]
    elif where == 1:
        s.args = ["-i", "--no-color", script[0]]
    else:
        s.args = ["-i", "--no-color", "--break", g.pick(script[3]), script[0]]
    for _ in range(rng.randrange(0, 12)):  # not :pm, :break or :run: they would nest a prompt that :quit leaves
        unit = g.unit(stop_cmds=where == 2)
        if not re.match(r"^\s*:+\s*[\"']?(pm|break|run)\b", unit[0] if isinstance(unit[0], str) else ""):
            for line in unit:
                s.feed.add(line)
    s.feed.close_pending()
    if rng.random() < 0.2:
        lines, status = [":quit"], (0 if where < 2 else 1)
    else:
        lines, status = g.exit_unit()
    for line in lines:
        s.feed.add(line, mark=False)
    s.feed.add('print("NOT REACHED")', mark=False)
    s.feed.add(":stats", mark=False)
    s.expect_status = status
    s.not_reached = True
    if where == 2 and lines == [":quit"]:
        s.expect_status = 1
    s.notes.append(f"ends with {lines!r}: status {s.expect_status}")


def make_cli(s, rng, offer):
    s.kind = "cli"
    g = Gen(rng, offer)
    args = []
    bad = False  # an option that must be refused (status 2) was given
    unknown = False  # a value whose acceptance the fuzzer does not predict
    ends = False  # something may end the session before stdin is read (-e exit, a script that exits, --batch)
    has_i = has_batch = has_exec = False
    seen = set()
    roles = []
    for _ in range(rng.randrange(0, 6)):
        spellings, takes = rng.choice(offer.options)
        name = rng.choice(spellings)
        long_name = spellings[-1]
        if long_name in seen and long_name not in ("--exec", "--break"):
            unknown = True  # a flag given twice: refusing it is a choice (boost's default), not checked
        seen.add(long_name)
        if long_name in ("--help", "-h", "--version"):
            if rng.random() < 0.7:
                continue
            ends = True
        if long_name in ("--interactive", "-i"):
            has_i = True
        if long_name == "--batch":
            has_batch = True
        value = None
        if takes:
            if long_name in ("--exec", "-e"):
                has_exec = True
                unit = g.unit()
                value = "\n".join(x if isinstance(x, str) else x.decode("utf-8", "replace") for x in unit)
                value = value.replace("\0", "")[:60000]  # an argument is at most 128 KiB (execve)
                if Feed.classify(value.encode("utf-8", "surrogateescape")).startswith("cmd:quit"):
                    value = ":stats"
            elif long_name == "-c":
                value = rng.choice(["print('from -c')", "1/0", "x = = 1", "import sys; print(sys.argv)",
                                    "exit(4)", "", "import dyn; dyn.compile(lambda v: v * 2)(dyn.ones(2))"])
                if "exit" in value:
                    ends = True
                has_exec = True  # a -c counts as code: no REPL without -i
                unknown = True  # and, as with python, the words after its CODE are the code's arguments
            elif long_name == "--break":
                value = g.pick(offer.kinds) + (":" + g.pick(g.fns) if rng.random() < 0.3 else "")
                if rng.random() < 0.3:
                    value = g.pick(EVENT_KIND_JUNK + ["", "nosuch", ":f"])
                    unknown = True
            elif long_name == "--events":
                value = g.pick([W + "/ev.jsonl", W + "/ev.jsonl", "/nonexistent-dir/e.jsonl", "/dev/null", W, ""])
                if value in ("/nonexistent-dir/e.jsonl", W, ""):
                    unknown = True
            elif long_name == "--dot-dir":
                value = g.pick([W + "/dots", W + "/dots", W + "/sub/dots", "/nonexistent-dir/d", W + "/empty.py", "", "/dev/null"])
                if value not in (W + "/dots",):
                    unknown = True
            elif long_name == "--report":
                value = g.pick([W + "/r.html", "/nonexistent-dir/r.html", "/dev/full", W, "", W + "/r.txt"])
                unknown = unknown or value != W + "/r.html"
            else:
                value = g.junk_word()
                unknown = True
        if takes and rng.random() < 0.05:
            args.append(name)  # the value is missing (or the next word is taken for it)
            roles.append("needs-value")
            unknown = True
            continue
        if takes and name.startswith("--") and rng.random() < 0.2:
            args.append(f"{name}={value}")
            roles.append("option")
        else:
            args.append(name)
            roles.append("needs-value" if takes else "option")
            if takes:
                args.append(value)
                roles.append("value")
    junk = None
    if rng.random() < 0.25:
        junk = rng.choice(["--nosuch", "-x", "-", "--", "---", "--no-color=1", "--batch=yes", "-ie", "-ix", "--Batch",
                           "-" + "i" * 3, "--" + "a" * 1000, "--\u00e9", "-e", "--events", "--break"])
        at = rng.randrange(len(args) + 1)
        args.insert(at, junk)
        unknown = True
        if at > 0 and roles[at - 1] == "needs-value":
            pass  # taken as the value of the option before it
        elif junk in ("--nosuch", "-x", "---", "--no-color=1", "--batch=yes", "-ix", "--Batch", "--" + "a" * 1000, "--\u00e9"):
            bad = True
    script = None
    k = rng.random()
    if k < 0.45:
        script = g.pick(REPO_SCRIPTS)[0]
    elif k < 0.75:
        script = W + "/" + g.pick(sorted(GENERATED) + [GENERATED_DIR, "nosuch.py"])
        if not script.endswith(("bom.py", "unicode_\u540d\u524d.py", "deep.py")):
            unknown = True
            ends = True
    elif k < 0.8:
        script = g.pick(["", "-", "/dev/null", "/nonexistent/x.py", "scripts", ARGV_SCRIPT])
        unknown = True
    if script is not None:
        args.append(script)
        for _ in range(rng.randrange(0, 3)):
            args.append(g.pick(["--batch", "-i", "--pm", "-e", "a b", "\u540d", "", "--", "-c", "x" * 1000]))
    if rng.random() < 0.5 and "--no-color" not in seen:
        args.insert(0, "--no-color")
    s.args = args
    add_units(s, g, rng.randrange(0, 8))
    add_sentinel(s)
    no_code = script is None and not has_exec and "-c" not in args
    if has_batch and (has_i or "--pm" in seen):
        unknown = True  # refused as contradictory: a choice, not checked
    if bad and "-c" not in args[:args.index(junk) if junk in args else len(args)]:
        s.usage_error = True
        s.expect_sentinel = False
    elif unknown or ends:
        s.expect_sentinel = False
    else:
        s.usage_error = False
        s.expect_sentinel = not has_batch and (has_i or no_code)


# --------------------------------------------------------------------------------------------
# Running and checking.


def run_dynrepl(binary, args, stdin, cwd, timeout):
    """Runs dynrepl in its own process group; returns (status or None on timeout, stdout, stderr, seconds)."""
    home = tempfile.mkdtemp(prefix="repl-fuzz-home-")
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONWARNINGS", "DYNREPL_TRACEBACK")}
    env.update(HOME=home, TERM="dumb", PYTHONDONTWRITEBYTECODE="1", LC_ALL="C.UTF-8")
    t0 = time.monotonic()
    p = subprocess.Popen([binary] + list(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=cwd, env=env, start_new_session=True)
    try:
        out, err = p.communicate(stdin, timeout=timeout)
        status = p.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        status = None
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return status, out, err, time.monotonic() - t0


def link_repo_dirs(folder):
    """dynrepl runs in the session's folder (files a junk argument names land there, not in the
    repo); the repo's scripts/ and tests/ are reachable by their usual relative paths."""
    for name in ("scripts", "tests"):
        link = os.path.join(folder, name)
        if not os.path.lexists(link):
            os.symlink(os.path.join(REPO, name), link)


def materialize(s, workdir):
    """Writes the generated files into workdir; returns (args, stdin bytes) with the placeholder replaced."""
    for name, data in GENERATED.items():
        with open(os.path.join(workdir, name), "wb") as f:
            f.write(data)
    os.makedirs(os.path.join(workdir, GENERATED_DIR), exist_ok=True)
    link_repo_dirs(workdir)
    args = [a.replace(W, workdir) for a in s.args]
    stdin = s.feed.data().replace(W.encode(), workdir.encode())
    return args, stdin


CRASH = ["Segmentation fault", "Fatal Python error", "terminate called", "AddressSanitizer", "LeakSanitizer",
         "UndefinedBehaviorSanitizer", "runtime error:", "core dumped", "double free", "corrupted size",
         "malloc():", "free(): ", "stack smashing", "Aborted"]
LEAK = ["what():", "std::", "basic_string", "stoi", "stoll", "stoul", "out_of_range", "bad_alloc", "bad_optional",
        "vector::", "fmt::", "format_error", "nlohmann", "boost::", "internal error", "SystemError",
        "returned NULL without setting", "returned a result with an exception set", "Assertion `", "Assertion failed", "<NULL>",
        "unhandled exception", "Exception ignored", "bad_variant", "bad_function_call", "invalid_argument",
        "unknown exception", "(null)", "PyErr_", "Py_"]
TB = "Traceback (most recent call last)"


def split_marks(text):
    """{marker n: text before it (after the previous marker)}, and the tail after the last one."""
    parts = {}
    cur = []
    for line in text.split("\n"):
        line += "\n"
        m = re.match(r"^@@M(\d+)$", line.rstrip("\r\n"))
        if m:
            parts[int(m.group(1))] = "".join(cur)
            cur = []
        else:
            cur.append(line)
    return parts, "".join(cur)


def check(s, status, out, err, stdin_text):
    problems = []
    o = out.decode("utf-8", "backslashreplace")
    e = err.decode("utf-8", "backslashreplace")
    both = o + "\n" + e
    if status is None:
        problems.append(("hang", "did not finish before the timeout"))
    elif status < 0:
        problems.append(("crash", f"killed by signal {-status} ({signal.Signals(-status).name})"))
    for pat in CRASH:
        if pat in both and pat not in stdin_text:
            problems.append(("crash", f"output contains {pat!r}"))
    for pat in LEAK:
        if pat in both and pat not in stdin_text:
            line = next(x for x in both.split("\n") if pat in x)
            problems.append(("leak", f"output contains {pat!r}: {line[:300]!r}"))
    if status is None or status < 0:
        return problems
    # Per unit: what a :command printed.
    out_parts, _ = split_marks(o)
    err_parts, _ = split_marks(e)
    lines = s.feed.lines
    # Every marker runs as its own statement, in order. One missing while a later one printed: the
    # REPL did not split the input into the units Python's codeop rules give (a line swallowed,
    # two lines run together, a block dropped); the output of later units cannot be attributed.
    desync = None
    if out_parts:
        last = max(out_parts)
        missing = [n for n in range(last) if n not in out_parts]
        if missing:
            desync = missing[0]
            unit = s.feed.units[desync]
            text = " / ".join(short(lines[i], 120) for i, _ in unit[-3:]) or "(the start)"
            seg = err_parts.get(desync + 1, "") if desync + 1 in err_parts else ""
            problems.append(("desync", f"marker {desync} did not run as its own line: the REPL did not take the input "
                                       f"as Python's rules split it, after the unit {text}; stderr next: {short(seg, 300)}"))
    for n, unit in enumerate(s.feed.units):
        if desync is not None and n >= desync:
            break
        if len(unit) != 1 or not unit[0][1].startswith("cmd:"):
            continue
        if n not in out_parts or n not in err_parts:
            continue
        cmdline = lines[unit[0][0]].decode("utf-8", "replace")
        name = unit[0][1][4:]
        seg_o, seg_e = out_parts[n], err_parts[n]
        if name not in ("run", "continue", "pm", "quit") and not cmdline.strip().startswith((":run", ":continue")):
            if TB in seg_o + seg_e:
                problems.append(("leak", f"a Python traceback for the command {short(cmdline)}: "
                                         f"{short(seg_e or seg_o, 400)}"))
            for line in seg_e.split("\n"):
                if not line.startswith(("error: ", "  ", "warning: ")) and line.strip():
                    problems.append(("unclear", f"{short(cmdline)} printed a stderr line that is not an error: line: "
                                                f"{short(line)}"))
                    break
    # Tracebacks show the user's frames: dynrepl leaves dyn's own out, and the REPL's machinery
    # (codeop, which compiles each line) is not the user's either.
    for m in re.finditer(r'^  File "([^"]+)", line \d+', e, re.M):
        path = m.group(1)
        if (path.endswith(("/codeop.py", "/code.py")) or "/python/dyn/" in path or path.startswith(REPO + "/python")) \
                and path not in stdin_text:
            problems.append(("leak", f"a traceback shows an internal frame: {short(e[m.start():m.start() + 400], 300)}"))
            break
    # An exception line printed with no traceback or source before it: what raised it, and why?
    prev = None
    for line in e.split("\n"):
        if re.match(r"^@@M\d+$", line):
            prev = None
            continue
        # python3 prints an error raised compiling a typed line (too deep to parse) alone, too.
        compiling = re.match(r"^(MemoryError|RecursionError: maximum recursion depth exceeded during compilation)$",
                             line)
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Warning)(: |$)", line) and line not in stdin_text \
                and not compiling:
            if prev is None or not (prev.startswith((" ", "\t", "Traceback")) or prev == ""):
                problems.append(("unclear", f"an exception without its context: {short(line, 300)}"))
                break
        prev = line
    if s.expect_sentinel:
        m1 = re.search(r"^SENTINEL 42$", o, re.M)
        m2 = re.search(r"^SENTINEL_END 42$", o, re.M)
        if not m1 or not m2:
            problems.append(("unusable", "the final sentinel lines did not answer"
                                         f" (SENTINEL {'ok' if m1 else 'missing'}, SENTINEL_END {'ok' if m2 else 'missing'})"))
        else:
            between = o[m1.end():m2.start()]
            if not re.search(r"^calls \d+", between, re.M):
                problems.append(("unusable", f":stats did not answer after the sentinel: {short(between, 300)}"))
            sentinel_marks = [n for n, u in enumerate(s.feed.units) if u and s.feed.lines[u[0][0]] == b":graphs"]
            if sentinel_marks:
                n = sentinel_marks[-1]
                seg = out_parts.get(n, "") + err_parts.get(n, "")
                if not seg.strip() or TB in seg:
                    problems.append(("unusable", f":graphs did not answer after the sentinel: {short(seg, 300)}"))
    if s.not_reached and "NOT REACHED" in o:
        problems.append(("exit", "a line after the exit ran"))
    if isinstance(s.expect_status, int) and status != s.expect_status:
        problems.append(("status", f"exit status {status}, expected {s.expect_status}"))
    elif isinstance(s.expect_status, set) and status not in s.expect_status:
        problems.append(("status", f"exit status {status}, expected one of {sorted(s.expect_status)}"))
    if s.usage_error is True:
        if status != 2 or "error" not in e:
            problems.append(("usage", f"bad usage was not refused with status 2 and an error line (status {status})"))
    elif s.usage_error is False and status == 2:
        problems.append(("usage", f"a valid command line was refused: {short(e, 300)}"))
    if s.kind == "cli" and status == 2 and not re.search(r"^(dynrepl: |error: )", e, re.M):
        problems.append(("unclear", f"status 2 (bad usage) without a line saying what was wrong: {short(e, 300)}"))
    return problems


def short(text, n=160):
    text = text if isinstance(text, str) else text.decode("utf-8", "replace")
    r = repr(text)
    return r if len(r) <= n else r[: n - 20] + f"...' ({len(text)} chars)"


def save_repro(s, args, stdin, status, out, err, problems, workdir, out_dir):
    d = os.path.join(out_dir, f"seed{s.seed}_session{s.index}")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name in list(GENERATED) + [GENERATED_DIR]:
        src = os.path.join(workdir, name)
        if os.path.isdir(src):
            os.makedirs(os.path.join(d, name), exist_ok=True)
        elif os.path.exists(src):
            shutil.copy(src, os.path.join(d, name))
    rargs = [a.replace(W, d) for a in s.args]
    rstdin = s.feed.data().replace(W.encode(), d.encode())
    link_repo_dirs(d)
    with open(os.path.join(d, "stdin.txt"), "wb") as f:
        f.write(rstdin)
    with open(os.path.join(d, "args.txt"), "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(shlex.join(rargs) + "\n")
    with open(os.path.join(d, "cmd"), "wb") as f:
        f.write(shlex.join(rargs).encode("utf-8", "surrogateescape") + b"\n" + rstdin)
    with open(os.path.join(d, "output.txt"), "wb") as f:
        f.write(b"== status: %s\n== stdout:\n" % str(status).encode() + out + b"\n== stderr:\n" + err)
    with open(os.path.join(d, "problems.txt"), "w", encoding="utf-8") as f:
        f.write(f"session {s.index} of seed {s.seed}, kind {s.kind}\n")
        for kind, text in problems:
            f.write(f"{kind}: {text}\n")
        for note in s.notes:
            f.write(f"note: {note}\n")
    replay = os.path.join(d, "replay.sh")
    with open(replay, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write("#!/bin/sh\n# replays one repl_fuzz session; run from anywhere; binary: $DYNREPL or the repo's build\n")
        f.write(f"cd {shlex.quote(d)} || exit 1  # scripts/ and tests/ link to the repo's\n")
        f.write(f'exec "${{DYNREPL:-{REPO}/build/repl/dynrepl}}" {shlex.join(rargs)} < {shlex.quote(d)}/stdin.txt\n')
    os.chmod(replay, 0o755)
    return d


ERROR_LINE = re.compile(r"^(?:dynrepl: )?error: .*$", re.M)


def normalize_error(line):
    line = re.sub(r"/tmp/repl-fuzz-[^\s'/]+", "<W>", line)
    line = re.sub(r"\d+", "N", line)
    return line[:300]


def run_one(s, binary, timeout, out_dir, verbose=False, errors=None, ignore=(), ignored=None):
    workdir = tempfile.mkdtemp(prefix="repl-fuzz-")
    try:
        args, stdin = materialize(s, workdir)
        try:
            status, out, err, secs = run_dynrepl(binary, args, stdin, workdir, timeout)
        except OSError as e:  # the fuzzer's own limit (an argument too long for execve): not a finding
            print(f"skipped session {s.index} (seed {s.seed}): {e}")
            return None, None, 0.0
        stdin_text = stdin.decode("utf-8", "replace") + "\n".join(args)
        for g in GENERATED.values():
            stdin_text += g.decode("utf-8", "replace")
        problems = check(s, status, out, err, stdin_text)
        known = [p for p in problems if any(re.search(rx, f"{p[0]}: {p[1]}") for rx in ignore)]
        problems = [p for p in problems if p not in known]
        if known and ignored is not None:
            ignored.append((s.index, known))
        if errors is not None:
            for m in ERROR_LINE.finditer((out + b"\n" + err).decode("utf-8", "backslashreplace")):
                key = normalize_error(m.group(0))
                errors.setdefault(key, (s.seed, s.index))
        if verbose:
            print(f"session {s.index} (seed {s.seed}), kind {s.kind}, {secs:.2f}s, status {status}")
            print("args:", shlex.join(args))
            print("stdin:")
            for line in stdin.decode("utf-8", "backslashreplace").splitlines():
                print("  | " + (line if len(line) < 300 else line[:280] + f"... ({len(line)} chars)"))
            print("stdout:\n" + out.decode("utf-8", "backslashreplace")[-20000:])
            print("stderr:\n" + err.decode("utf-8", "backslashreplace")[-20000:])
        repro = None
        if problems:
            repro = save_repro(s, args, stdin, status, out, err, problems, workdir, out_dir)
        return problems, repro, secs
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.environ.get("DYNREPL") or os.path.join(REPO, "build", "repl", "dynrepl"))
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--first", type=int, default=0, help="number of the first session (default 0)")
    ap.add_argument("--one", type=int, help="run only this session, showing its input and output")
    ap.add_argument("--time", type=float, help="run sessions until this many seconds have passed (no --sessions cap)")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds before a session counts as hung")
    ap.add_argument("--out", help="where failing sessions are written (default: a new temp dir)")
    ap.add_argument("--errors", help="write every distinct error: line seen (numbers masked) to this file")
    ap.add_argument("--kind", help="only sessions of this kind (prompt, stopped, pm, exit, cli)")
    ap.add_argument("--ignore", action="append", default=[], metavar="REGEX",
                    help="a problem whose text matches REGEX does not fail its session (a known bug); repeatable")
    ap.add_argument("--no-snapshot", action="store_true",
                    help="run the binary in place (default: a private copy taken at the start)")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress line per 50 sessions")
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    if not os.access(binary, os.X_OK):
        sys.exit(f"repl_fuzz: no dynrepl binary at {binary} (--binary or $DYNREPL)")
    snapshot = None
    if not a.no_snapshot:  # a rebuild during the run must not swap the binary under it
        snapshot = tempfile.mkdtemp(prefix="repl-fuzz-bin-")
        shutil.copy2(binary, os.path.join(snapshot, "dynrepl"))
        binary = os.path.join(snapshot, "dynrepl")
    try:
        return fuzz(a, binary)
    finally:
        if snapshot:
            shutil.rmtree(snapshot, ignore_errors=True)


def fuzz(a, binary):
    offer = Offer(binary)
    out_dir = a.out or tempfile.mkdtemp(prefix="repl-fuzz-out-")
    os.makedirs(out_dir, exist_ok=True)
    errors = {} if a.errors else None
    if a.one is not None:
        s = make_session(a.seed, a.one, offer)
        problems, repro, _ = run_one(s, binary, a.timeout, out_dir, verbose=True, errors=errors)
        if problems is None:
            return 1
        for kind, text in problems:
            print(f"PROBLEM {kind}: {text}")
        if repro:
            print(f"repro: {repro}/replay.sh")
        print(f"{0 if problems else 1} sessions passed, {1 if problems else 0} failed")
        return 1 if problems else 0
    t0 = time.monotonic()
    passed = failed = 0
    kinds = {}
    ignored = []
    skipped = 0
    index = a.first
    while True:
        if a.time is not None:
            if time.monotonic() - t0 > a.time:
                break
        elif index >= a.first + a.sessions:
            break
        s = make_session(a.seed, index, offer)
        index += 1
        if a.kind and s.kind != a.kind:
            continue
        problems, repro, secs = run_one(s, binary, a.timeout, out_dir, errors=errors, ignore=a.ignore, ignored=ignored)
        if problems is None:
            skipped += 1
            continue
        kinds[s.kind] = kinds.get(s.kind, 0) + 1
        if problems:
            failed += 1
            print(f"FAIL session {s.index} (seed {s.seed}, {s.kind}, {secs:.1f}s):")
            for kind, text in problems[:6]:
                print(f"  {kind}: {text}")
            print(f"  replay: sh {repro}/replay.sh   or: {sys.argv[0]} --seed {s.seed} --one {s.index}")
        else:
            passed += 1
        if not a.quiet and (passed + failed) % 50 == 0:
            print(f"... {passed + failed} sessions, {failed} failed, {time.monotonic() - t0:.0f}s", flush=True)
    if errors is not None:
        with open(a.errors, "w", encoding="utf-8") as f:
            for key in sorted(errors):
                f.write(f"{key}\t(seed {errors[key][0]} session {errors[key][1]})\n")
    print(f"kinds: {', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}; failures under {out_dir}"
          if failed else f"kinds: {', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}")
    if ignored:
        print(f"{len(ignored)} session(s) had problems matching --ignore (known bugs), e.g. session {ignored[0][0]}: "
              f"{ignored[0][1][0][0]}: {short(ignored[0][1][0][1], 200)}")
    if skipped:
        print(f"{skipped} session(s) skipped (could not be started)")
    print(f"{passed} sessions passed, {failed} failed")
    return 1 if failed or (skipped and not passed) else 0


if __name__ == "__main__":
    sys.exit(main())
