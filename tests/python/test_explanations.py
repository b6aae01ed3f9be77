"""Every explanation exact: the right cause, the name as written, no hint that is false.

Each scenario is a script a user would write, run by the dynrepl binary as a user runs it
(`--report`, then `:why-recompile` and `:guards` at the prompt); the test reads the recompile
events (dyn.debug.events, printed by the script as JSON), the commands' text and the HTML report
as a user would. Names must come from the tool's own words (not from a quoted source line): every
check strips the quoted source first. Values and lines are the scenario's own.
"""
import html
import json
import os
import re
import subprocess
import tempfile
import textwrap
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("DYNREPL") or os.path.join(REPO, "build", "repl", "dynrepl")

# Printed by every scenario after its calls: the recompile events, for the test to read.
DUMP = """
import json as _json
print("EVENTS " + _json.dumps(dyn.debug.events("recompile")))
print("GUARDS " + _json.dumps({f: dyn.debug.guards(f) for f in FNS}))
"""


def own_words(text):
    """The tool's words only: the source lines it quotes (after two spaces, or in backquotes
    after 'at file:line') are dropped, so that a name found is one the tool wrote."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"`[^`]*`$", "", line)          # "... at f.py:4 `return x * factor`"
        line = re.sub(r"(\.py:\d+)  .*$", r"\1", line)  # "at f.py:4  return x * factor"
        line = re.sub(r"# \S+\.py:\d+ .*$", "", line)   # ":guards" lines: "  # f.py:4 `...`"
        out.append(line)
    return "\n".join(out)


class Scenario(unittest.TestCase):
    """Runs one scenario script; keeps its events, guards, :why-recompile, :guards and report."""

    def run_scenario(self, body, fns, commands=(":why-recompile", ":guards")):
        tmp = tempfile.TemporaryDirectory(prefix="dynrepl_explain_")
        self.addCleanup(tmp.cleanup)
        d = os.path.realpath(tmp.name)
        self.script = os.path.join(d, "scenario.py")
        self.base = "scenario.py"
        src = textwrap.dedent(body) + f"\nFNS = {list(fns)!r}\n" + DUMP
        with open(self.script, "w") as f:
            f.write(src)
        self.lines = src.splitlines()
        report = os.path.join(d, "report.html")
        p = subprocess.run([BIN, "-i", "--no-color", "--report", report, self.script],
                           input="\n".join(commands) + "\n", capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, NO_COLOR="1"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.out, self.err = p.stdout, p.stderr
        ev_line = next(l for l in p.stdout.splitlines() if l.startswith("EVENTS "))
        g_line = next(l for l in p.stdout.splitlines() if l.startswith("GUARDS "))
        self.events = json.loads(ev_line[len("EVENTS "):])
        self.guards = json.loads(g_line[len("GUARDS "):])
        self.text = own_words(p.stdout[p.stdout.index(g_line) + len(g_line):])
        with open(report) as f:
            self.report = html.unescape(re.sub(r"<[^>]+>", "", f.read()))

    def line(self, marker):
        """The 1-based line of the scenario that carries `# marker`."""
        hits = [i + 1 for i, l in enumerate(self.lines) if l.rstrip().endswith("# " + marker)]
        self.assertEqual(len(hits), 1, marker)
        return hits[0]

    def at(self, marker):
        return f"{self.base}:{self.line(marker)}"

    def summary(self, fn):
        """The summary line(s) :why-recompile starts with for fn, up to the blank line."""
        start = self.text.index(f"{fn}: ")
        return self.text[start:self.text.index("\n\n", start)]


class TestClosestEntry(Scenario):
    """Issue case 1: batches of 1, 10, 11, 15 rows, then a weight that grows from 211 to 307
    columns. The third recompile is the weight's, not x's: it is the failure of the entry that came
    closest (proj[2], dynamic in x's rows), not of entry 0."""

    BODY = """
        import dyn
        @dyn.compile
        def proj(x, w):
            return (x @ w).relu()  # USE
        dyn.manual_seed(0)
        w = dyn.randn(8, 211)
        for rows in (1, 10, 11, 15):
            proj(dyn.randn(rows, 8), w)
        w = dyn.randn(8, 307)
        proj(dyn.randn(15, 8), w)
        """

    def test_cause_is_the_closest_entrys(self):
        self.run_scenario(self.BODY, ["proj"], (":why-recompile", ":guards", ":stats"))
        r1, r2, r3 = self.events
        self.assertEqual([r["closest"] for r in self.events], [0, 1, 2])
        self.assertEqual([(r["cause"]["key"], r["cause"]["value"], r["cause"]["first"]) for r in self.events],
                         [("dim 0 of tensor 'x' (argument)", "10", "1"),
                          ("dim 0 of tensor 'x' (argument)", "11", "10"),
                          ("dim 1 of tensor 'w' (argument)", "307", "211")])
        self.assertEqual(r3["cause"]["where"], self.at("USE"))
        # the other entries' failures are still listed, each with its own guard
        self.assertEqual([(f["entry"], f["what"]) for f in r3["failures"]],
                         [(0, "tensor 'x' (argument) size mismatch at dim 0"),
                          (1, "tensor 'x' (argument) size mismatch at dim 0"),
                          (2, "tensor 'w' (argument) size mismatch at dim 1")])
        # what became dynamic: x's rows at the second recompile; the third makes w's columns
        # dynamic and keeps x's rows (they were dynamic in proj[2] already)
        self.assertEqual(r2["dynamic"], "x.size(0) became dynamic as s0 (sizes 10 and 11 seen)")
        self.assertEqual(r3["dynamic"], "w.size(1) became dynamic as s1 (sizes 211 and 307 seen)")
        self.assertIn("x.size(0) stays dynamic as s0 (as in proj[2])", r3["reason"])

        summary = self.summary("proj")
        self.assertIn("proj: 3 recompiles from 2 causes", summary)
        self.assertIn("2 recompiles because dim 0 of tensor 'x' (argument) took the values 10, 11 "
                      f"(first traced with 1; at {self.at('USE')})", summary)
        self.assertIn("1 recompile because dim 1 of tensor 'w' (argument) took the value 307 "
                      f"(first traced with 211; at {self.at('USE')})", summary)
        self.assertNotIn("15", summary)
        self.assertIn("proj[2] failed tensor_input (the closest entry: the cause): tensor 'w' (argument) size "
                      "mismatch at dim 1: expected 211, actual 307", self.text)
        self.assertIn("3 recompiles from 2 causes (see :why-recompile proj)", self.text)  # :stats
        # the report's table has one row per recompile, blamed as above
        for cause, value in (("dim 0 of tensor 'x' (argument)", "10 (1)"), ("dim 0 of tensor 'x' (argument)",
                                                                          "11 (10)"),
                             ("dim 1 of tensor 'w' (argument)", "307 (211)")):
            self.assertRegex(self.report, re.escape(cause) + r"\s*" + re.escape(value))
        self.assertIn("1 recompile because dim 1 of tensor 'w' (argument) took the value 307", self.report)


class TestSizeHints(Scenario):
    """Issue case 2: a hint is printed only when it is true for this call."""

    def test_specialized_size_then_dynamic(self):
        self.run_scenario("""
            import dyn
            @dyn.compile
            def f(x):
                return x * 2  # USE
            for n in (1, 10, 11, 12):
                f(dyn.randn(n, 4))
            """, ["f"])
        r1, r2 = self.events
        (a,) = r1["failures"]
        # 1 -> 10: size 1 is specialized, and this recompile does not make the dim dynamic
        self.assertEqual((a["expected"], a["actual"]), ("1", "10"))
        self.assertIn("sizes 0 and 1 are specialized", a["hint"])
        self.assertNotIn("dynamic", a["hint"])
        self.assertEqual(r1["dynamic"], "")
        # 10 -> 11: this one does, and says so; the failure against size 1 keeps its own hint
        b0, b1 = r2["failures"]
        self.assertEqual(r2["closest"], 1)
        self.assertIn("sizes 0 and 1 are specialized", b0["hint"])
        self.assertIn("the recompile made dim 0 dynamic", b1["hint"])
        self.assertIn("dyn.mark_dynamic(x, 0) before the first call saves the recompile", b1["hint"])
        self.assertEqual(r2["dynamic"], "x.size(0) became dynamic as s0 (sizes 10 and 11 seen)")
        self.assertEqual(len(self.events), 2, "12 is served by the dynamic entry")
        # the guard_failure events say what the recompile events say
        self.assertIn("hint: the recompile made dim 0 dynamic", self.text)
        summary = self.summary("f")
        self.assertIn("f: 2 recompiles, all because dim 0 of tensor 'x' (argument) took the values 10, 11 "
                      "(first traced with 1", summary)
        self.assertIn("hint: the recompile made dim 0 dynamic", summary)  # the newest recompile's: true now
        self.assertNotIn("makes it dynamic", self.out)

    def test_dynamic_false_says_so(self):
        self.run_scenario("""
            import dyn, warnings
            warnings.simplefilter("always")
            @dyn.compile(dynamic=False, cache_limit=4)
            def g(x):
                return x * 2  # USE
            for n in (2, 3, 4, 5, 6):
                g(dyn.randn(n, 4))
            """, ["g"])
        self.assertEqual(len(self.events), 3)
        hints = [f["hint"] for r in self.events for f in r["failures"]]
        self.assertEqual(len(hints), 6)
        for h in hints:
            self.assertIn("'g' was compiled with dynamic=False", h)
            self.assertNotIn("made dim", h)
            self.assertNotIn("the recompile makes", h)
        self.assertEqual({r["dynamic"] for r in self.events}, {""})
        # the cache-limit warning carries the same true hint
        warning = next(l for l in self.err.splitlines() if "reached cache_limit=4" in l)
        self.assertIn("'g' was compiled with dynamic=False", warning)
        self.assertIn("hint: 'g' was compiled with dynamic=False", self.summary("g"))


class TestSwap(Scenario):
    """Issue case 3: a tensor argument replaced by a Python number (and back), by name."""

    def test_tensor_and_number_swapped(self):
        self.run_scenario("""
            import dyn
            @dyn.compile
            def f(x, factor):
                return x * factor  # MUL
            @dyn.compile
            def g(x, k):
                return k + x  # ADD
            f(dyn.randn(4), dyn.randn(4)); f(dyn.randn(4), 2.5)
            g(dyn.randn(4), 3); g(dyn.randn(4), dyn.randn(4))
            """, ["f", "g"])
        (rf,), (rg,) = [[e for e in self.events if e["fn"] == n] for n in ("f", "g")]
        (a,) = rf["failures"]
        self.assertEqual(a["guard"], "op")
        self.assertEqual(a["what"], "`factor` (argument) of mul is a Python float where the trace had a tensor")
        self.assertEqual(a["actual"], "a Python float (2.5)")
        self.assertTrue(a["expected"].startswith(f"a tensor f32[4] at {self.at('MUL')}"), a["expected"])
        self.assertIn("pass `factor` as the same kind at every call", a["hint"])
        self.assertEqual(rf["cause"]["key"],
                         f"`factor` (argument) is a Python float where the trace had a tensor at {self.at('MUL')}")
        (b,) = rg["failures"]
        self.assertEqual(b["what"], "`k` (argument) of add is a tensor where the trace had a Python int")
        self.assertEqual((b["expected"].split(" at ")[0], b["actual"]), ("a Python int (3)", "a tensor f32[4]"))
        self.assertIn("f: 1 recompile, because `factor` (argument) is a Python float where the trace had a tensor",
                      self.text)
        self.assertIn("g: 1 recompile, because `k` (argument) is a tensor where the trace had a Python int",
                      self.text)
        self.assertNotIn("swapped?", self.out)
        self.assertIn("`factor` (argument) is a Python float where the trace had a tensor", self.report)


class TestItem(Scenario):
    """Issue cases 4 and 5: a number Python read by .item(), named by the variable it was stored
    to; its guard line says it is read at each call, not checked."""

    BODY = """
        import dyn
        @dyn.compile
        def f(x, lens):
            longest = int(lens.max().item())  # ITEM
            return x[:, :longest] * 2
        @dyn.compile
        def g(x, s):
            scale = s.max().item()  # FLOAT
            return x * scale
        @dyn.compile
        def h(x, s):
            y = s.max().item() * 2  # NOT_STORED
            return x[:, :int(y)]
        x = dyn.randn(2, 800)
        f(x, dyn.tensor([3, 25])); f(x, dyn.tensor([3, 325]))
        g(x, dyn.tensor([2.5])); g(x, dyn.tensor([3.25]))
        h(x, dyn.tensor([1])); h(x, dyn.tensor([2]))
        """

    def test_item_int_named(self):
        self.run_scenario(self.BODY, ["f", "g", "h"])
        (rf,) = [e for e in self.events if e["fn"] == "f"]
        c = rf["cause"]
        self.assertEqual((c["key"], c["value"], c["first"], c["from"]),
                         ("`longest`", "325", "25", f"from .item() at {self.at('ITEM')}"))
        (a,) = rf["failures"]
        self.assertEqual(a["guard"], "branch")
        self.assertEqual(a["cause"], f"`longest` (from .item() at {self.at('ITEM')}) changed from 25 to 325")
        self.assertEqual((a["expected"], a["actual"]), ("25", "325"))
        self.assertNotIn("value Python observed", self.out)
        self.assertIn(f"f: 1 recompile, because `longest` (from .item() at {self.at('ITEM')}) took the value 325 "
                      "(first traced with 25)", self.text)
        self.assertIn(f"because `longest` (from .item() at {self.at('ITEM')}) changed from 25 to 325", self.text)
        self.assertIn("`longest` (from .item()", self.report)
        # a value computed from .item() is not the variable it is stored to: no name is made up
        (rh,) = [e for e in self.events if e["fn"] == "h"]
        self.assertEqual(rh["cause"]["key"], f"the value of .item() at {self.at('NOT_STORED')}")
        self.assertEqual((rh["cause"]["first"], rh["cause"]["value"]), ("1", "2"))
        self.assertNotIn("`y`", json.dumps(rh))

    def test_guard_lines_say_what_is_checked(self):
        self.run_scenario(self.BODY + """
        @dyn.compile
        def add(x, n):
            return x + n  # CONST
        add(x, 1025)
        """, ["f", "g", "add"])
        self.assertFalse([e for e in self.events if e["fn"] == "g"], "3.25 is served by g's entry")
        (g0,) = self.guards["g"]
        (branch,) = [l for l in g0 if l.startswith("branch:")]
        self.assertEqual(branch.split("  # ")[0], "branch: `scale` = .item() here is read at each call (2.5 when "
                                                  "traced): the ops after it are checked, not its value")
        self.assertEqual(branch.split("  # ")[1].split(" ")[0], self.at("FLOAT"))
        f0 = self.guards["f"][0]
        self.assertIn("branch: `longest` = .item() here is read at each call (25 when traced)", "\n".join(f0))
        (a0,) = self.guards["add"]
        (const,) = [l for l in a0 if l.startswith("constant:")]
        self.assertEqual(const, f"constant: 'n' (argument) == 1025, checked at each call (a number add bakes into "
                                f"the graph)  # {self.at('CONST')} `return x + n  # CONST`")
        # a literal keeps the op's own numbers
        self.assertIn("constant: mul uses 2  #", "\n".join(f0))
        self.assertNotIn("Python observed", self.text)
        self.assertIn("constant: 'n' (argument) == 1025", self.report)


class TestNoFalseBlame(unittest.TestCase):
    """Situations where a plausible explanation would be false."""

    def setUp(self):
        import dyn
        dyn.debug.reset()

    def test_a_read_value_the_entry_serves_is_no_cause(self):
        import dyn

        @dyn.compile
        def f(x, t):
            n = int((t * 1).item())
            return x[:n] * 2

        f(dyn.randn(10), dyn.tensor(3))
        f(dyn.randn(10), dyn.tensor(5))  # the slice's stop becomes dynamic
        f(dyn.randn(10), dyn.tensor(4))  # served
        f(dyn.randn(12), dyn.tensor(4))  # x's size: the cause, not n (which f[1] serves)
        r1, r2 = dyn.debug.events("recompile", f)
        self.assertEqual(r1["cause"]["key"], "`n`")
        self.assertEqual((r2["closest"], r2["cause"]["key"], r2["cause"]["first"], r2["cause"]["value"]),
                         (1, "dim 0 of tensor 'x' (argument)", "10", "12"))

    def test_a_size_that_changes_which_ops_run_is_no_default_dtype_change(self):
        """A roll by 0 records no op: with y's size 3 instead of 2, the op that stands first is the
        roll inside a set_default_dtype block, under another dtype than the traced first op. The
        cause is y's size, not the default dtype (stale-graph fuzzer, seed 9, program 1191)."""
        import dyn

        @dyn.compile(dynamic=False)
        def f(y):
            t1 = y.roll(3, 0)
            prev = dyn.get_default_dtype()
            dyn.set_default_dtype(dyn.float32)
            try:
                t2 = t1.roll(1, 0)
            finally:
                dyn.set_default_dtype(prev)
            return t2

        prev = dyn.get_default_dtype()
        dyn.set_default_dtype(dyn.float64)
        try:
            f(dyn.randn(2, 1))
            f(dyn.randn(3, 1))
        finally:
            dyn.set_default_dtype(prev)
        (r,) = dyn.debug.events("recompile", f)
        self.assertEqual((r["cause"]["key"], r["cause"]["first"], r["cause"]["value"]),
                         ("dim 0 of tensor 'y' (argument)", "2", "3"))
        self.assertNotIn("set_default_dtype", r["hint"] + r["cause"]["hint"])

    def test_a_float_read_at_each_call_is_not_the_branch(self):
        import dyn

        @dyn.compile
        def f(x, t):
            scale = (t * 1).item()
            y = x * scale
            if y.sum() > 0:
                return y
            return -y

        x = dyn.ones(4)
        for v in (0.5, 0.25, -0.5):
            f(x, dyn.tensor(v))
        (r,) = dyn.debug.events("recompile", f)
        self.assertTrue(r["cause"]["key"].startswith("the value of bool() at "), r["cause"])
        self.assertEqual((r["cause"]["first"], r["cause"]["value"]), ("True", "False"))
        self.assertNotIn("scale", json.dumps(r["cause"]))

    def test_swap_names_the_operand_not_the_traced_tensor(self):
        import dyn

        @dyn.compile
        def f(x, w, use_w):
            s = w if use_w else 0.5
            return x * s

        x, w = dyn.randn(3), dyn.randn(3)
        f(x, w, True)
        f(x, w, False)
        (r,) = dyn.debug.events("recompile", f)
        (a,) = r["failures"]
        self.assertEqual(a["what"], "`s` (local) of mul is a Python float where the trace had a tensor")
        self.assertNotIn("`w`", a["what"] + a["hint"])

    def test_guard_lines_name_only_what_they_can(self):
        import dyn

        @dyn.compile
        def f(x, n, hi):
            return dyn.arange(n) + x[:1], x.clamp(min=0, max=hi), x + n

        f(dyn.randn(5), 5, 2)
        (g,) = dyn.debug.guards(f)
        consts = [line.split("  # ")[0] for line in g if line.startswith("constant:")]
        # a call's numbers may be defaults it was not written with (arange's start and step): those
        # keep the op's own numbers; a binary operator's operand is certain
        self.assertEqual(consts, ["constant: arange uses 0, 5, 1, dtype=int64", "constant: clamp uses min=0, max=2",
                                  "constant: 'n' (argument) == 5, checked at each call (a number add bakes into "
                                  "the graph)"])

        @dyn.compile(dynamic=True)
        def h(x):
            return x + x.shape[0]

        h(dyn.randn(4))
        h(dyn.randn(6))
        # the first trace bakes in 4 (and 6 recompiles); the second has the number follow s0: no
        # "== 6" guard, it is checked against its form
        first, second = dyn.debug.guards(h)
        self.assertIn("== 4, checked at each call", "\n".join(first))
        self.assertFalse([l for l in second if "==" in l and l.startswith("constant:")], second)
        self.assertIn("{number1=s0}", "\n".join(second))

    def test_a_recompile_taken_back_made_nothing_dynamic(self):
        import dyn

        @dyn.compile
        def f(x, fail):
            y = x * 2
            v = y.sum().item()
            if fail:
                raise ValueError("boom")
            return y + v

        f(dyn.randn(4), False)
        with self.assertRaises(ValueError):
            f(dyn.randn(8), True)
        self.assertEqual(dyn.debug.counters()["recompiles"], 0)
        (g,) = dyn.debug.events("guard_failure", f)
        self.assertNotIn("made dim 0 dynamic", g["reason"])
        self.assertNotIn("made dim 0 dynamic", g["hint"])


class TestExplainText(unittest.TestCase):
    """Issue case 6: explain()'s text prints the reason and the trigger the break record holds."""

    def test_trigger_printed(self):
        import dyn

        def fn(x):
            if x.sum() > 0:
                x = x * 2
            v = x.sum().item()
            return x + v

        text = str(dyn.debug.explain(fn, dyn.ones(3)))
        lines = text.splitlines()
        i = next(k for k, l in enumerate(lines) if "break 1:" in l)
        self.assertEqual(lines[i + 1].strip(), "Python needed the truth value of a tensor (data-dependent control flow)")
        self.assertEqual(lines[i + 2].strip(), "asked for: bool() [data_dependent_branch]")
        j = next(k for k, l in enumerate(lines) if "break 2:" in l)
        self.assertEqual(lines[j + 2].strip(), "asked for: .item() [item]")


if __name__ == "__main__":
    unittest.main()
