"""End-to-end tests of the dynrepl binary: it behaves like `python script.py`."""
import json
import os
import subprocess
import tempfile
import textwrap
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("DYNREPL") or os.path.join(REPO, "build", "repl", "dynrepl")


def run(args, stdin=None, cwd=None, timeout=60):
    """Run the binary; stdin is never a TTY here (a pipe or /dev/null)."""
    p = subprocess.run([BIN] + list(args), input=stdin if stdin is not None else "",
                       capture_output=True, text=True, cwd=cwd, timeout=timeout,
                       env=dict(os.environ, NO_COLOR="1"))
    return p.returncode, p.stdout, p.stderr


class CliCase(unittest.TestCase):
    def setUp(self):
        self.assertTrue(os.access(BIN, os.X_OK), f"no dynrepl binary at {BIN}")
        self._tmp = tempfile.TemporaryDirectory(prefix="dynrepl_cli_")
        self.dir = os.path.realpath(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path

    def run_script(self, name, text, want_rc):
        """Writes and runs a script, checks its exit status; returns (path, stdout, stderr)."""
        script = self.write(name, text)
        rc, out, err = run([script])
        self.assertEqual(rc, want_rc, err)
        return script, out, err


class TestScripts(CliCase):
    PROBE = """\
        import json, os, sys
        print(json.dumps({"argv": sys.argv, "name": __name__, "path0": sys.path[0],
                          "file": __file__}))
        """

    def test_argv_name_path(self):
        script = self.write("probe.py", self.PROBE)
        rc, out, err = run([script, "a", "--flag", "b", "-c", "x y"])
        self.assertEqual(rc, 0, err)
        info = json.loads(out.strip().splitlines()[-1])
        self.assertEqual(info["argv"], [script, "a", "--flag", "b", "-c", "x y"])
        self.assertEqual(info["name"], "__main__")
        self.assertEqual(os.path.realpath(info["path0"]), self.dir)
        self.assertEqual(os.path.realpath(info["file"]), script)

    def test_relative_script_path(self):
        self.write("probe.py", self.PROBE)
        rc, out, err = run(["probe.py", "1"], cwd=self.dir)
        self.assertEqual(rc, 0, err)
        info = json.loads(out.strip().splitlines()[-1])
        self.assertEqual(info["argv"], ["probe.py", "1"])
        self.assertEqual(os.path.realpath(info["path0"]), self.dir)
        # from another folder, the script's folder (not the cwd) is sys.path[0]
        sub = os.path.join(self.dir, "sub")
        os.mkdir(sub)
        self.write("sub/probe2.py", self.PROBE)
        rc, out, err = run([os.path.join("sub", "probe2.py")], cwd=self.dir)
        self.assertEqual(rc, 0, err)
        self.assertEqual(os.path.realpath(json.loads(out.strip().splitlines()[-1])["path0"]), sub)

    def test_sibling_import_and_dyn(self):
        self.write("helper_mod_xyz.py", "VALUE = 42\ndef twice(x):\n    return x * 2\n")
        script = self.write("main.py", """\
            import helper_mod_xyz
            import dyn
            import numpy as np
            t = helper_mod_xyz.twice(dyn.ones(3))
            print(helper_mod_xyz.VALUE, t.sum().item(), np.__name__)
            """)
        rc, out, err = run([script], cwd="/")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.strip(), "42 6.0 numpy")

    def test_uncaught_exception(self):
        script, out, err = self.run_script("boom.py", """\
            print("before", flush=False)
            def f():
                raise ValueError("boom here")
            f()
            print("after")
            """, 1)
        self.assertIn("before", out)
        self.assertNotIn("after", out)
        self.assertIn("Traceback (most recent call last)", err)
        self.assertIn(f'File "{script}", line 3', err)
        self.assertIn(f'File "{script}", line 4', err)
        self.assertIn("ValueError: boom here", err)

    def test_uncaught_dyn_error(self):
        script, _, err = self.run_script("dynerr.py", "import dyn\nx = dyn.ones(2, 3)\ny = x + dyn.ones(2, 4)\n", 1)
        self.assertIn("Traceback (most recent call last)", err)
        self.assertIn(f'File "{script}", line 3', err)
        self.assertIn("RuntimeError: The size of tensor a (3) must match the size of tensor b (4)", err)

    def test_syntax_error(self):
        _, _, err = self.run_script("bad.py", "x = 1\ndef f(:\n    pass\n", 1)
        self.assertIn("SyntaxError", err)
        self.assertIn("bad.py", err)
        self.assertIn("line 2", err)

    def test_exit_status(self):
        for code, want_rc in (("import sys; sys.exit(3)", 3), ("import sys; sys.exit(0)", 0),
                              ("import sys; sys.exit()", 0), ("raise SystemExit(7)", 7),
                              ("pass", 0)):
            with self.subTest(code=code):
                self.run_script("exit.py", code + "\n", want_rc)
        _, _, err = self.run_script("exitmsg.py", "import sys\nsys.exit('fatal: no data')\n", 1)
        self.assertIn("fatal: no data", err)

    def test_failing_unittest_script_exits_nonzero(self):
        _, _, err = self.run_script("ut.py", """\
            import unittest
            class T(unittest.TestCase):
                def test_fail(self):
                    self.assertEqual(1, 2)
            if __name__ == "__main__":
                unittest.main()
            """, 1)
        self.assertIn("FAILED", err)

    def test_no_repl_after_script_without_tty(self):
        script = self.write("quiet.py", "print('script ran')\n")
        rc, out, err = run([script], stdin="print('EXTRA LINE')\n")
        self.assertEqual(rc, 0, err)
        self.assertIn("script ran", out)
        self.assertNotIn("EXTRA LINE", out)

    def test_missing_script(self):
        missing = os.path.join(self.dir, "does_not_exist.py")
        rc, out, err = run([missing])
        self.assertNotEqual(rc, 0)
        self.assertIn("does_not_exist.py", err)

    def test_a_folder_is_not_a_script(self):
        folder = os.path.join(self.dir, "adir")
        os.mkdir(folder)
        rc, out, err = run([folder])
        self.assertEqual(rc, 1)
        self.assertEqual(err, f"dynrepl: error: cannot run '{folder}': it is a folder, not a script; "
                              "name the .py file to run\n")
        rc, out, err = run(["--batch", "-e", "print('exec line')", folder])  # -e lines run, the status stays 1
        self.assertEqual(rc, 1)
        self.assertEqual(out, "exec line\n")

    def test_a_file_with_a_nul_byte_is_not_run(self):
        # Python compiles a C string: before the check, a NUL ended the script there, silently.
        path = os.path.join(self.dir, "binary.py")
        with open(path, "wb") as f:
            f.write(bytes(range(256)))
        rc, out, err = run(["--batch", path])
        self.assertEqual(rc, 1)
        self.assertIn(f"cannot run '{path}': line 1 contains a NUL byte (source code cannot contain null bytes)", err)
        with open(path, "wb") as f:
            f.write(b"print('half')\nx = 1\x00\n")
        rc, out, err = run(["--batch", path])
        self.assertEqual(rc, 1)
        self.assertEqual(out, "")
        self.assertIn("line 2 contains a NUL byte", err)

    def test_example_first_steps(self):
        example = os.path.join(REPO, "scripts", "examples", "first_steps.py")
        self.assertTrue(os.path.exists(example), example)
        rc, out, err = run([example], cwd=self.dir)
        self.assertEqual(rc, 0, err)
        self.assertIn("tensor(", out)


class TestOptions(CliCase):
    def test_dash_c(self):
        rc, out, err = run(["-c", "import dyn; print(dyn.ones(2))"])
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, "tensor([1., 1.])\n")
        rc, out, err = run(["-c", "import sys; print(sys.argv); print(__name__)", "x", "--y"])
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.splitlines(), ["['-c', 'x', '--y']", "__main__"])

    def test_dash_c_errors(self):
        rc, out, err = run(["-c", "import dyn\ndyn.ones(3)[7]"])
        self.assertEqual(rc, 1)
        self.assertIn("Traceback (most recent call last)", err)
        self.assertIn("IndexError", err)
        rc, out, err = run(["-c", "import sys; sys.exit(5)"])
        self.assertEqual(rc, 5)

    def test_unknown_option(self):
        rc, out, err = run(["--bogus"])
        self.assertEqual(rc, 2)
        self.assertTrue(err.strip(), "expected a message on stderr")
        self.assertIn("bogus", err)

    def test_missing_option_argument(self):
        rc, out, err = run(["-c"])
        self.assertEqual(rc, 2)
        self.assertTrue(err.strip())

    def test_version_and_help(self):
        rc, out, err = run(["--version"])
        self.assertEqual(rc, 0, err)
        self.assertRegex(out + err, r"\d+\.\d+")
        rc, out, err = run(["--help"])
        self.assertEqual(rc, 0, err)
        self.assertIn("-c", out + err)

    def test_stdin_not_a_tty(self):
        rc, out, err = run([], stdin="print(1+1)\n")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.split(), ["2"])
        code = "import dyn\nt = dyn.arange(3)\nfor i in range(3):\n    print(i * 10)\n\nprint(t.sum().item())\n"
        rc, out, err = run([], stdin=code)
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.split(), ["0", "10", "20", "3"])
        rc, out, err = run([], stdin="")
        self.assertEqual(rc, 0, err)


class TestBoundedEventHistory(CliCase):
    """The event history keeps the newest N events (issue 15): a program that keeps compiling does
    not grow the log without end, and :events says when old events went."""

    RECOMPILING = """
        import dyn
        def f(x):
            return x * 2.0
        for i in range(12):
            dyn.compile(f, name="f")(dyn.ones(3))   # compiled anew each time: a compile event each
        c = dyn.debug.counters()
        ev = dyn.debug.events()
        print("kept", len(ev), "dropped", c["events_dropped"], "compiles", c["compiles"])
    """

    def test_the_newest_events_are_kept_and_counted(self):
        path = self.write("loop.py", self.RECOMPILING)
        rc, out, err = run(["--event-limit", "5", "-e", ":events", "-e", ":stats", path])
        self.assertEqual(rc, 0, err)
        kept, dropped = map(int, out.split("kept ")[1].split()[0:3:2])
        self.assertEqual(kept, 5)
        self.assertGreater(dropped, 0)
        self.assertIn(f"({dropped} older events were dropped: the history keeps the newest 5;", out)
        self.assertIn(f"events dropped {dropped} (the history keeps the newest 5)", out)
        # the numbers :events shows count every event, so the kept ones are the last five numbers
        rows = [line.split()[0] for line in out.splitlines() if line.strip()[:1].isdigit() and " s " not in line]
        numbers = [int(r) for r in rows if r.isdigit()]
        self.assertEqual(numbers[-5:], list(range(dropped + 1, dropped + 6)))
        # without the option nothing this small is dropped
        rc, out, err = run([path])
        self.assertEqual(rc, 0, err)
        self.assertIn("dropped 0", out)

    def test_the_python_api(self):
        rc, out, err = run(["-c", textwrap.dedent("""
            import dyn
            assert dyn.debug.event_limit() == 10000
            dyn.debug.set_event_limit(3)
            def f(x):
                return x + 1.0
            for i in range(6):
                dyn.compile(f, name="g")(dyn.ones(2))
            ev = dyn.debug.events()
            assert len(ev) == 3, ev
            dropped = dyn.debug.counters()["events_dropped"]
            assert dropped > 0
            assert dyn.debug.counters()["recompiles"] >= 5   # counters count dropped events too
            dyn.debug.set_event_limit(0)                  # 0 keeps every event from now on
            for i in range(4):
                dyn.compile(f, name="g")(dyn.ones(2))
            assert len(dyn.debug.events()) > 3
            assert dyn.debug.counters()["events_dropped"] == dropped
            dyn.debug.reset()
            assert dyn.debug.counters()["events_dropped"] == 0 and dyn.debug.event_limit() == 0
            for bad, kind in ((-1, ValueError), ("3", TypeError), (True, TypeError), (2.0, TypeError)):
                try:
                    dyn.debug.set_event_limit(bad)
                except kind as e:
                    assert "set_event_limit(n)" in str(e), e
                else:
                    raise AssertionError(f"set_event_limit({bad!r}) did not raise")
            print("ok")
        """)])
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.strip(), "ok")

    def test_recompile_counts_do_not_depend_on_the_history(self):
        # six shapes, six entries, five recompiles: :stats and the report count them all, though
        # the history keeps only the newest three events
        path = self.write("shapes.py", """
            import dyn
            f = dyn.compile(lambda x: x * 2.0, name="f", dynamic=False)
            for n in range(1, 7):
                f(dyn.ones(n))
            """)
        report = os.path.join(self.dir, "r.html")
        rc, out, err = run(["--event-limit", "3", "--report", report, "-e", ":stats", path])
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"\nf +6 +6 +0 +5 +5 recompiles, one cause: dim 0 of tensor 'x'")
        with open(report) as fh:
            self.assertIn('<a href="#fn-f">f</a></td><td>6</td><td>6</td><td>0</td><td>5</td>', fh.read())
        # a call that raises while it records makes no entry, and its recompile is taken back
        path = self.write("raises.py", """
            import dyn
            def g(x):
                y = x * 2.0
                if x.shape[0] == 3:
                    raise ValueError("boom")
                return y
            f = dyn.compile(g, name="f", dynamic=False)
            f(dyn.ones(2))
            try:
                f(dyn.ones(3))
            except ValueError:
                pass
            f(dyn.ones(4))
            """)
        rc, out, err = run(["-e", ":stats", path])
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"\nf +3 +2 +0 +1\b")
        # two causes, the first one's events long dropped: :stats still counts both
        path = self.write("causes.py", """
            import dyn
            f = dyn.compile(lambda x: x * 2.0, name="f", dynamic=False)
            f(dyn.ones(1))
            f(dyn.ones(1, dtype=dyn.float64))   # the dtype of x changed
            for n in (2, 3, 4):
                f(dyn.ones(n))                  # dim 0 of x changed
            """)
        rc, out, err = run(["--event-limit", "3", "-e", ":stats", path])
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"\nf +5 +5 +0 +4 +4 recompiles from 2 causes")

    def test_graphs_of_functions_that_are_gone_are_bounded(self):
        # dyn.compile in a loop: each function dies after its call; the log keeps the newest 1000
        # of their graphs (and every graph of a function still alive), all with a limit of 0
        rc, out, err = run(["-c", textwrap.dedent("""
            import dyn
            keep = dyn.compile(lambda x: x - 1.0, name="kept")
            keep(dyn.ones(2))
            def f(x):
                return x * 2.0
            for i in range(1100):
                dyn.compile(f)(dyn.ones(2))
            ids = [g.id for g in dyn.debug.graphs()]
            print("graphs", len(ids), "kept" , "kept[0].0" in ids, "newest", "f#1100[0].0" in ids, "oldest", "f[0].0" in ids)
            dyn.debug.reset()
            dyn.debug.set_event_limit(0)
            for i in range(1100):
                dyn.compile(f)(dyn.ones(2))
            print("unbounded", len(dyn.debug.graphs()))
        """)])
        self.assertEqual(rc, 0, err)
        # 1000 of the dead functions' graphs, those of the 16 newest that died (kept for the views:
        # CompiledFunction::kRetired), the newest function's (alive when it was stored: the log
        # trims as it stores) and the kept function's
        self.assertIn("graphs 1018 kept True newest True oldest False", out)
        self.assertIn("unbounded 1100", out)

    def test_a_recompile_dropped_before_its_amendment(self):
        # A recompile that makes sizes dynamic amends its event after later events were logged;
        # with a history of one event it is gone by then, and nothing breaks.
        rc, out, err = run(["--event-limit", "1", "-c", textwrap.dedent("""
            import dyn
            @dyn.compile
            def f(x):
                return (x * 2.0).sum()
            for n in (4, 6, 8, 9):
                assert dyn.equal(f(dyn.ones(n)), (dyn.ones(n) * 2.0).sum())
            print(len(dyn.debug.events()), dyn.debug.counters()["recompiles"])
        """)])
        self.assertEqual(rc, 0, err)
        kept, recompiles = map(int, out.split())
        self.assertEqual(kept, 1)
        self.assertGreaterEqual(recompiles, 1)

    def test_a_placeholder_in_an_option_is_a_usage_error(self):
        # Boost's message filling looped forever on these (found by tests/fuzz/libfuzzer)
        for arg in ("--x%canonical_option%", "--%value%", "--batch=%canonical_option%%"):
            rc, out, err = run([arg, "-c", "pass"], timeout=20)
            self.assertEqual(rc, 2, err)
            self.assertIn(arg.split("=")[0], err)

    def test_bad_values_are_usage_errors(self):
        for bad in ("-3", "abc", "", "1.5", "+2", "99999999999999999999999"):
            rc, out, err = run(["--event-limit", bad, "-c", "pass"])
            self.assertEqual(rc, 2, f"--event-limit {bad!r}: {err}")
            self.assertIn("--event-limit takes a whole number of events", err)


class TestExitStatusTellsWhatHappened(CliCase):
    RECOMPILES = os.path.join(REPO, "scripts", "examples", "recompiles.py")

    def test_a_failed_exec_line_makes_the_status_1(self):
        for line in (":nosuch", ":graph nope[3].0", "1 / 0"):
            rc, out, err = run(["--batch", "-e", line, "-e", "print('after')", self.RECOMPILES])
            self.assertEqual(rc, 1, (line, err))
            self.assertIn("after", out, "the lines after a failed one still run")
        rc, out, err = run(["--batch", "-e", ":stats", self.RECOMPILES])
        self.assertEqual(rc, 0, err)

    def test_a_breakpoint_under_batch_prints_and_goes_on(self):
        rc, out, err = run(["--batch", "--break", "recompile", self.RECOMPILES])
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.count("stopped at breakpoint 1: recompile in f"), 2)
        self.assertEqual(out.count("(--batch: no prompt to stop at; the script goes on)"), 2)
        self.assertIn("calls 5, cache hits 2, compiles 3, recompiles 2", out, "the script ran to its end")

    def test_ending_a_stopped_script_is_status_1(self):
        for stdin in (":quit\n", ""):  # :quit, and end of input, while stopped
            rc, out, err = run(["-i", "--break", "recompile", self.RECOMPILES], stdin=stdin)
            self.assertEqual(rc, 1, (stdin, err))
            self.assertNotIn("calls 5", out, "the script did not go on")

    def test_a_bare_session_has_dyn_and_torch(self):
        rc, out, err = run([], stdin="print(torch.ones(2).sum().item(), dyn.__name__, torch is dyn)\n")
        self.assertEqual(rc, 0, err)
        self.assertIn("2.0 dyn True", out)

    def test_delete_takes_a_whole_number_only(self):
        # '1abc' and '1.5' are not breakpoint 1: an error, and the breakpoint stays
        rc, out, err = run([], stdin=":break compile\n:delete 1abc\n:delete 1.5\n:breakpoints\n:delete 1\n:breakpoints\n")
        self.assertIn("error: expected a breakpoint number, got '1abc'", err)
        self.assertIn("error: expected a breakpoint number, got '1.5'", err)
        self.assertIn("deleted breakpoint 1", out)
        before, after = out.split("deleted breakpoint 1")
        self.assertRegex(before, r"\n\s*1\s+compile")
        self.assertNotRegex(after, r"\n\s*1\s+compile")

    def graphs_of_a_branch(self, name, cond):
        """:graphs of f called with 2 then 8 elements, breaking at .item() where `cond` holds."""
        script = self.write(name, f"""\
            import dyn
            def f(x):
                y = x * 2
                if {cond}:
                    if y.sum().item() > 0:
                        y = y + 1
                return y
            cf = dyn.compile(f)
            cf(dyn.ones(2)); cf(dyn.ones(8))
            """)
        rc, out, err = run(["-i", script], stdin=":graphs f\n")
        self.assertEqual(rc, 0, err)
        return out

    def test_a_graph_ends_with_its_own_entrys_break(self):
        # f[0].0 returns; the recompiled f[1].0 breaks at .item(). The break is f[1]'s only: an
        # older entry's graph never shows a newer entry's break.
        out = self.graphs_of_a_branch("ends.py", "x.shape[0] > 4")
        self.assertRegex(out, r"f\[0\]\.0 .* return\n")
        self.assertRegex(out, r"f\[1\]\.0 .* graph break \(item\) at ends\.py:5\n")
        self.assertRegex(out, r"f\[1\]\.1 .* return\n")
        # the other way round: the older entry breaks, the newer one returns
        out = self.graphs_of_a_branch("ends2.py", "x.shape[0] <= 4")
        self.assertRegex(out, r"f\[0\]\.0 .* graph break \(item\) at ends2\.py:5\n")
        self.assertRegex(out, r"f\[1\]\.0 .* return\n")

    def test_a_breakpoint_on_a_function_not_compiled_yet_says_so(self):
        rc, out, err = run(["--batch", "-e", ":break recompile nosuch", self.RECOMPILES])
        self.assertEqual(rc, 0, err)
        self.assertIn("no compiled function is named 'nosuch' yet; the breakpoint waits for one (compiled now: f)",
                      out)

    def test_time_stopped_is_not_trace_time(self):
        stdin = "import time; time.sleep(0.4)\n:continue\n:continue\nc = dyn.debug.counters()\n" \
                "print('paused', c['paused_s'] >= 0.4, 'trace', c['trace_s'] < 0.3)\n"
        rc, out, err = run(["-i", "--break", "recompile", self.RECOMPILES], stdin=stdin)
        self.assertEqual(rc, 0, err)
        self.assertIn("paused True trace True", out)


class TestDebuggerConveniences(CliCase):
    def test_a_command_takes_the_variable_holding_a_compiled_function(self):
        script = self.write("var.py", """
            import dyn
            def train_step(x):
                return (x * 2.0).sum()
            step = dyn.compile(train_step)
            step(dyn.ones(3))
        """)
        rc, out, err = run(["--batch", "-e", ":graph step", "-e", ":guards step", "-e", ":graph step[0].0", script])
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.count("graph train_step[0].0"), 2)
        self.assertIn("train_step[0]: 5 guards", out)

    def test_tracebacks_leave_dyns_frames_out(self):
        script = self.write("bad.py", """
            import dyn
            @dyn.compile
            def f(x):
                return x.view(3, 5)  # BAD
            f(dyn.ones(4))
        """)
        rc, out, err = run([script])
        self.assertEqual(rc, 1)
        self.assertIn("return x.view(3, 5)  # BAD", err)
        self.assertNotIn("_compile.py", err)
        self.assertIn("inside dyn left out; DYNREPL_TRACEBACK=full shows them", err)
        p = subprocess.run([BIN, script], capture_output=True, text=True,
                           env=dict(os.environ, NO_COLOR="1", DYNREPL_TRACEBACK="full"))
        self.assertIn("_compile.py", p.stderr)


class TestPostMortem(CliCase):
    SCRIPT = """
        import dyn
        def helper(t, n):
            scale = n * 2
            return t.view(scale, 5)
        @dyn.compile
        def f(x):
            return helper(x * 3.0, 2)
        f(dyn.ones(4))
    """

    def test_pm_after_the_script_raised(self):
        script = self.write("pm.py", self.SCRIPT)
        rc, out, err = run(["-i", script], stdin=":pm\nprint('scale is', scale)\n:up\n:quit\n")
        self.assertEqual(rc, 1)
        self.assertIn("post-mortem: the script raised", out)
        self.assertIn("scale is 4", out)
        self.assertIn("frame 2 of 3: pm.py:8 in f", out)

    def test_pm_without_an_exception_and_with_batch(self):
        rc, out, err = run([], stdin=":pm\n")
        self.assertIn("no uncaught exception to look into", err)
        rc, out, err = run(["--pm", "--batch", self.write("ok.py", "print(1)\n")])
        self.assertEqual(rc, 2)
        self.assertIn("--pm and --batch contradict each other", err)


class TestObservedValues(CliCase):
    def test_an_int_item_prints_as_an_int(self):
        script = self.write("it.py", """
            import dyn
            @dyn.compile
            def f(x):
                n = x.sum().item()
                return x * n
            f(dyn.tensor([1, 2]))
            f(dyn.tensor([1, 3]))
            f(dyn.tensor([0.5, 2.0]))
            for e in dyn.debug.events("recompile"):
                print(e["failures"][0]["expected"], e["failures"][0]["actual"])
        """)
        rc, out, err = run([script])
        self.assertEqual(rc, 0, err)
        self.assertIn("3 4\n", out)  # Python's own ints, not 3.0 and 4.0


class TestReviewFindings(CliCase):
    def test_a_failed_exec_line_before_quit_is_status_1(self):
        rc, out, err = run(["-e", "nope", "-e", ":quit"])
        self.assertEqual(rc, 1, err)

    def test_leaving_pm_returns_to_the_prompt(self):
        rc, out, err = run([], stdin="1/0\n:pm\n:quit\nprint('back at the prompt')\n")
        self.assertEqual(rc, 0, err)
        self.assertIn("back at the prompt", out)

    def test_no_breakpoint_stops_inside_pm_and_run_is_refused(self):
        script = self.write("bad.py", "import dyn\n1/0\n")
        rc, out, err = run(["--batch", "--break", "compile", "-e", ":pm", script])
        self.assertEqual(rc, 1)
        rc, out, err = run(["-i", script],
                           stdin=":pm\n:run " + script + "\ng = dyn.compile(lambda x: x * 2)\n"
                                 ":break compile\ng(dyn.ones(2))\n:quit\n")
        self.assertIn("is not possible in post-mortem", err)
        self.assertNotIn("stopped at breakpoint", out)

    def test_list_shows_blank_lines_and_says_when_there_is_no_file(self):
        script = self.write("gap.py", "import dyn\n\n\ndef f(n):\n    x = n + 1\n\n    return 1 / (x - x)\n\n\nf(2)\n")
        rc, out, err = run(["--pm", script], stdin=":list 2\n")
        self.assertIn("    7 ->     return 1 / (x - x)", out)
        self.assertIn("    8    ", out)
        rc, out, err = run([], stdin="1/0\n:pm\n:list\n")
        self.assertIn("the source of <stdin> is not available", err)



class TestFileWriteErrors(CliCase):
    def test_report_says_why_it_cannot_be_written(self):
        # The reason is the failed open's, not what errno held after building the report.
        branchy = os.path.join(REPO, "scripts", "examples", "branchy.py")
        rc, out, err = run(["--batch", "--report", "/nonexistent-dir/r.html", branchy])
        self.assertEqual(rc, 1)
        self.assertIn("dynrepl: error: cannot write the report '/nonexistent-dir/r.html': No such file or directory; "
                      "create the folder '/nonexistent-dir' first", err)
        rc, out, err = run(["--batch", "--report", self.dir, "-c", "pass"])
        self.assertEqual(rc, 1)
        self.assertIn("Is a directory; name a file, not a folder", err)

    def test_report_that_does_not_fit_is_an_error(self):
        # A small report fits in a stdio buffer: the failure only shows when it is flushed.
        rc, out, err = run(["--batch", "--report", "/dev/full", "-c", "pass"])
        self.assertEqual(rc, 1)
        self.assertIn("cannot write the report '/dev/full': No space left on device", err)

    def test_a_script_is_never_overwritten(self):
        # `--report script.py` (the report's name left out) took the script for the report's path
        # and replaced it with HTML at exit (the REPL fuzzer did this to an example).
        script = os.path.join(self.dir, "keep.py")
        with open(script, "w") as fh:
            fh.write("x = 1\n")
        for option in ("--report", "--events"):
            rc, out, err = run(["--batch", option, script])
            self.assertEqual(rc, 2, err)
            self.assertIn("is a Python script, and writing there would replace it", err)
        with open(script, "w") as fh:
            fh.write("import dyn\nf = dyn.compile(lambda x: x * 2.0)\nf(dyn.ones(2))\n")
        kept = open(script).read()
        rc, out, err = run(["-i", script], stdin=f":report {script}\n:dot f {script}\n")
        self.assertEqual(err.count("is a Python script, and writing there would replace it"), 2, err)
        with open(script) as fh:
            self.assertEqual(fh.read(), kept)


if __name__ == "__main__":
    unittest.main()
