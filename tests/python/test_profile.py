"""Plan-step times (dyn.debug.profile, :profile): every step a compiled call runs is counted once
per run and timed, under the graph id, step number, kind and user line the plan shows; clearing
keeps the graphs. No test asserts how long anything took, only what was counted and where."""
import os
import subprocess
import tempfile
import textwrap
import unittest

import dyn

HERE = os.path.abspath(__file__)


def plan_steps(graph):
    """(step number, kind) of each step line of a graph's plan text."""
    out = []
    for line in graph.plan().splitlines():
        if line.startswith("step "):
            parts = line.split()
            out.append((int(parts[1]), parts[2]))
    return out


def line_of(text):
    with open(HERE) as f:
        for i, line in enumerate(f, 1):
            if text in line and "line_of(" not in line:
                return i
    raise AssertionError(text)


class StepTimes(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def test_every_step_of_the_plan_is_counted_once_per_call(self):
        w = dyn.randn(16, 32)

        @dyn.compile
        def f(x):
            h = x @ w
            h = (h * 0.5 + 1.0).tanh()
            return h.sum(dim=1)

        x = dyn.randn(8, 16)
        for _ in range(5):
            f(x)
        rows = dyn.debug.profile(f)
        [g] = dyn.debug.graphs(f)
        steps = plan_steps(g)
        self.assertEqual([(r["step"], r["kind"]) for r in rows], steps)
        self.assertTrue(all(r["graph"] == g.id and r["plan"] == 0 for r in rows))
        # The traced call runs the plan too: five calls, five runs of every step.
        self.assertEqual({r["runs"] for r in rows}, {5})
        kinds = {r["kind"] for r in rows}
        self.assertIn("kernel", kinds)
        self.assertIn("fused", kinds)
        matmul = [r for r in rows if "matmul" in r["what"]]
        self.assertEqual(len(matmul), 1)
        self.assertEqual(matmul[0]["line"], line_of("h = x @ w"))
        self.assertEqual(matmul[0]["source"], "h = x @ w")
        self.assertTrue(all(r["seconds"] >= 0 for r in rows))
        self.assertGreater(matmul[0]["seconds"], 0)
        # The steps' times are parts of the time the capture spent executing.
        self.assertLessEqual(sum(r["seconds"] for r in rows), dyn.debug.counters()["execute_s"] + 1e-9)

    def test_a_fused_step_lists_every_line_it_covers(self):
        @dyn.compile
        def f(x):
            a = x * 2.0  # first fused line
            b = a + 1.0  # second fused line
            return b.exp()  # third fused line

        f(dyn.randn(64))
        [fused] = [r for r in dyn.debug.profile(f) if r["kind"] == "fused"]
        self.assertEqual(os.path.abspath(fused["file"]), HERE)
        self.assertEqual(fused["lines"], [line_of("# first fused"), line_of("# second fused"), line_of("# third fused")])
        self.assertEqual(fused["line"], fused["lines"][0])
        self.assertIn("mul", fused["what"])
        self.assertIn("exp", fused["what"])

    def test_reset_profile_zeroes_the_times_and_keeps_the_graphs(self):
        f = dyn.compile(lambda x: (x + 1).relu() * 3)
        x = dyn.randn(10)
        f(x)
        f(x)
        compiles = dyn.debug.counters()["compiles"]
        dyn.debug.reset_profile()
        self.assertEqual(dyn.debug.profile(f), [])
        self.assertEqual(len(dyn.debug.graphs(f)), 1)
        f(x)
        f(x)
        f(x)
        rows = dyn.debug.profile(f)
        self.assertTrue(rows)
        self.assertEqual({r["runs"] for r in rows}, {3})
        self.assertEqual(dyn.debug.counters()["compiles"], compiles)  # nothing was compiled again

    def test_the_eager_backend_times_each_node(self):
        f = dyn.compile(lambda x: (x * 2).sum() + 1, backend="eager")
        for _ in range(4):
            f(dyn.randn(6))
        rows = dyn.debug.profile(f)
        [g] = dyn.debug.graphs(f)
        self.assertEqual([r["step"] for r in rows], list(range(len(g.nodes))))
        self.assertEqual({r["kind"] for r in rows}, {"node"})
        self.assertEqual({r["runs"] for r in rows}, {4})
        self.assertEqual([r["what"].split(" = ")[1].split("(")[0] for r in rows], [n.op for n in g.nodes])

    def test_each_segment_of_a_graph_break_is_timed_under_its_own_id(self):
        @dyn.compile
        def f(x):
            y = x * 2
            if y.sum().item() > 0:  # graph break
                return y + 1
            return y - 1

        x = dyn.ones(4)
        for _ in range(3):
            f(x)
        by_graph = {}
        for r in dyn.debug.profile(f):
            by_graph.setdefault(r["graph"], set()).add(r["runs"])
        self.assertEqual(sorted(by_graph), ["f[0].0", "f[0].1"])
        self.assertEqual(by_graph["f[0].0"], {3})
        self.assertEqual(by_graph["f[0].1"], {3})
        # A target narrows the rows to one graph.
        self.assertEqual({r["graph"] for r in dyn.debug.profile("f[0].1")}, {"f[0].1"})

    def test_a_segment_two_entries_share_is_listed_once(self):
        @dyn.compile
        def f(x):
            y = x * 2
            if y.sum().item() > 0:  # graph break; the entries diverge after it
                return y + 1
            return (y - 1).abs()

        f(dyn.ones(4))
        f(-dyn.ones(4))  # a recompile: entry 1 shares segment 0 with entry 0
        ids = [g.id for g in dyn.debug.graphs(f)]
        self.assertIn("f[1].0", ids)
        rows = dyn.debug.profile()
        seg0 = [r for r in rows if r["graph"] in ("f[0].0", "f[1].0")]
        self.assertEqual({r["graph"] for r in seg0}, {"f[0].0"})
        self.assertEqual({r["runs"] for r in seg0}, {2})
        # Asked for by the other entry's id, the shared segment shows the same counts.
        self.assertEqual([(r["step"], r["runs"]) for r in dyn.debug.profile("f[1].0")],
                         [(r["step"], r["runs"]) for r in seg0])

    def test_a_call_keeping_more_values_alive_runs_and_times_a_plan_of_its_own(self):
        kept = []
        keep = [False]

        @dyn.compile
        def f(x):
            t = x * 2
            if keep[0]:
                kept.append(t)  # t outlives the call: the plan must compute it as well
            return t + 1

        x = dyn.randn(5)
        f(x)
        keep[0] = True
        f(x)
        f(x)
        rows = dyn.debug.profile(f)
        plans = {}
        for r in rows:
            plans.setdefault(r["plan"], set()).add(r["runs"])
        self.assertEqual(plans, {0: {1}, 1: {2}})
        self.assertEqual(kept[0].tolist(), (x * 2).tolist())

    def test_a_step_that_raises_counts_its_run_and_its_time(self):
        @dyn.compile
        def f(x, i):
            y = (x * 2).exp()
            return y[i * 3] + 1  # the index is only checked when the graph runs

        x = dyn.randn(5)
        f(x, dyn.tensor([0, 1]))
        f(x, dyn.tensor([0, 1]))
        with self.assertRaisesRegex(IndexError, "raised by index"):
            f(x, dyn.tensor([0, 2]))
        rows = dyn.debug.profile(f)
        runs = [r["runs"] for r in rows]
        failing = next(i for i, r in enumerate(rows) if r["what"].split(" = ")[-1].startswith("index("))
        # Steps up to the one that raised ran three times; the steps after it twice.
        self.assertEqual(runs[:failing + 1], [3] * (failing + 1))
        self.assertEqual(runs[failing + 1:], [2] * (len(rows) - failing - 1))
        self.assertTrue(runs[failing + 1:], "a step runs after the index")

    def test_two_live_functions_of_one_name_after_a_reset_keep_their_own_graphs(self):
        x = dyn.randn(8, 8)
        small = dyn.compile(lambda x: x + 1, backend="eager")
        small(x)
        dyn.debug.reset()
        big = dyn.compile(lambda x: ((x * 2).exp() @ x).relu().sum(dim=0).tanh(), backend="eager")
        small(x)
        big(x)
        self.assertNotEqual(small.name, big.name)  # the live small keeps its name: big is <lambda>#2
        for fn, ops in ((small, ["add"]), (big, ["mul", "exp", "matmul", "relu", "sum", "tanh"])):
            [g] = dyn.debug.graphs(fn)
            self.assertEqual(g.ops, ops)
            rows = dyn.debug.profile(fn)
            self.assertEqual([r["what"].split(" = ")[1].split("(")[0] for r in rows], ops)
        self.assertEqual(len(dyn.debug.profile()), 7)

    def test_a_compiled_function_not_called_yet_has_no_steps(self):
        f = dyn.compile(lambda x: x - 1)
        self.assertEqual(dyn.debug.profile(f), [])
        f(dyn.ones(3))
        self.assertTrue(dyn.debug.profile(f))

    def test_bad_targets_are_errors(self):
        f = dyn.compile(lambda x: x + 1)
        f(dyn.ones(2))
        with self.assertRaisesRegex(ValueError, "no graph 'nosuch'"):
            dyn.debug.profile("nosuch")
        with self.assertRaises(TypeError):
            dyn.debug.profile(3)
        self.assertTrue(dyn.debug.profile(f))  # nothing was lost


class ProfileCommand(unittest.TestCase):
    """:profile in a dynrepl session (the layout is pinned by the golden transcript profile)."""

    def run_session(self, script, *commands):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.py")
            with open(path, "w") as f:
                f.write(textwrap.dedent(script))
            args = [os.environ.get("DYNREPL", "dynrepl"), "--batch"]
            for c in commands:
                args += ["-e", c]
            p = subprocess.run(args + [path], capture_output=True, text=True, timeout=120,
                               env=dict(os.environ, NO_COLOR="1"))
            return p.stdout + p.stderr

    def test_the_hottest_steps_across_graphs_come_first(self):
        out = self.run_session("""
            import dyn
            big = dyn.compile(lambda a, b: a @ b)
            small = dyn.compile(lambda x: x + 1)
            a = dyn.randn(300, 300)
            for _ in range(5):
                big(a, a)
                small(dyn.ones(3))
            """, ":profile")
        lines = out.splitlines()
        first = next(i for i, l in enumerate(lines) if l.startswith("share"))
        self.assertIn("matmul", lines[first + 1])
        self.assertIn("<lambda>[0].0", lines[first + 1])
        self.assertIn("by graph:", out)

    def test_by_line_sums_a_training_steps_backward_and_optimizer_lines(self):
        out = self.run_session("""
            import dyn
            model = dyn.nn.Linear(16, 4)
            opt = dyn.optim.SGD(model.parameters(), lr=0.1)

            @dyn.compile
            def step(x):
                loss = model(x).square().mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                return loss

            for _ in range(3):
                step(dyn.randn(8, 16))
            """, ":profile")
        section = out.split("by line:\n", 1)[1].splitlines()
        self.assertTrue(section[0].startswith("share"))
        places = [l.split("  ")[-1] for l in section[1:]]
        for line in ("loss.backward()", "opt.step()", "loss = model(x).square().mean()"):
            self.assertIn(line, places, out)
        # Each line's steps: backward issues several, and all of them are summed into its row.
        backward = next(l for l in section[1:] if l.endswith("loss.backward()"))
        self.assertGreater(int(backward.split()[3]), 1, backward)

    def test_reset_then_a_graph_with_no_runs(self):
        out = self.run_session("""
            import dyn
            f = dyn.compile(lambda x: x * 3)
            f(dyn.ones(2))
            """, ":profile --reset", ":profile <lambda>", ":profile")
        self.assertIn("step times cleared", out)
        self.assertIn("no plan steps of '<lambda>' have run yet (or since :profile --reset cleared the times)", out)
        self.assertIn("no plan steps have run yet (or since :profile --reset cleared the times)", out)


if __name__ == "__main__":
    unittest.main()
