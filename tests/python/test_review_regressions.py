"""Regressions found in review: each test is a repro that crashed, computed a wrong result, or
left the engine stuck, before it was fixed."""
import gc
import os
import subprocess
import sys
import tempfile
import unittest
import weakref

import numpy as np

import _dyn
import dyn

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("DYNREPL") or os.path.join(REPO, "build", "repl", "dynrepl")


def run(code, *args, stdin=""):
    return subprocess.run([BIN, "--batch", *args, "-c", code], input=stdin, capture_output=True, text=True,
                          timeout=120, cwd=REPO)


class TestRegressions(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def test_reset_is_refused_while_a_compiled_call_runs(self):
        @dyn.compile
        def f(x):
            dyn.debug.reset()
            return x + 1

        with self.assertRaisesRegex(RuntimeError, "while a compiled function is running"):
            f(dyn.ones(2))
        self.assertEqual(dyn.compile(lambda x: x * 2)(dyn.ones(2)).tolist(), [2.0, 2.0])  # still usable

    def test_read_only_numpy_memory_is_never_written(self):
        b = bytes(16)
        t = dyn.from_numpy(np.frombuffer(b, np.float32))
        with self.assertRaisesRegex(RuntimeError, "read-only"):
            t.add_(1)
        self.assertEqual(b, bytes(16))
        self.assertEqual((t + 1).tolist(), [1.0] * 4)  # out-of-place ops still read it
        with tempfile.TemporaryDirectory() as d:
            np.save(os.path.join(d, "a.npy"), np.zeros(4, np.float32))
            a = np.load(os.path.join(d, "a.npy"), mmap_mode="r")
            with self.assertRaisesRegex(RuntimeError, "read-only"):
                dyn.from_numpy(a).fill_(3.0)
            self.assertEqual(a.tolist(), [0.0] * 4)

    def test_read_only_memory_written_through_a_view_inside_a_region(self):
        # the view is lazy inside the region: it has no storage of its own to check
        a = np.arange(8, dtype=np.float32).reshape(2, 4)
        a.setflags(write=False)

        def f(x):
            v = x[0]
            v.mul_(2.0)
            return v

        compiled = dyn.compile(f, name="read_only_view")
        for _ in range(2):
            with self.assertRaisesRegex(RuntimeError, "read-only"):
                compiled(dyn.from_numpy(a))
        self.assertEqual(a.tolist(), [[0, 1, 2, 3], [4, 5, 6, 7]])
        self.assertEqual(compiled(dyn.from_numpy(a.copy())).tolist(), [0, 2, 4, 6])  # the function still works

    def test_write_through_a_view_of_an_argument_is_seen_inside_the_region(self):
        def f(x):
            x[0] = 5.0
            return x.tolist()

        self.assertEqual(dyn.compile(f)(dyn.zeros(3)), f(dyn.zeros(3)))

    def test_copy_from_a_transposed_view_of_itself(self):
        def f(x):
            x.copy_(x.t())
            return x

        want = f(dyn.arange(9.0).view(3, 3)).tolist()
        self.assertEqual(dyn.compile(f)(dyn.arange(9.0).view(3, 3)).tolist(), want)

    def test_a_segment_that_failed_is_not_run_again(self):
        def f(x, z):
            x.add_(1)
            y = dyn.tensor([5, 5]) // z
            if y.sum() > 0:
                return y

        for fn in (f, dyn.compile(f)):
            x = dyn.zeros(2)
            with self.assertRaises(RuntimeError):
                fn(x, dyn.tensor([0, 1]))
            self.assertEqual(x.tolist(), [1.0, 1.0], fn)

    def test_a_failed_in_place_op_does_not_count_as_a_modification(self):
        w = dyn.ones(4, requires_grad=True)
        x = dyn.ones(4)
        y = (w * x).sum()
        with self.assertRaises(RuntimeError):
            x.add_(dyn.ones(3))
        y.backward()
        self.assertEqual(w.grad.tolist(), [1.0] * 4)

    def test_saved_value_modified_in_place_is_caught_inside_a_region_too(self):
        def step(a, x):
            b = x * 2
            c = a * b
            b.add_(1)
            c.sum().backward()
            return a.grad

        for fn in (step, dyn.compile(step)):
            with self.assertRaisesRegex(RuntimeError, "modified by an inplace operation"):
                fn(dyn.ones(3, requires_grad=True), dyn.ones(3))

    def test_view_offsets_on_replay_come_from_the_call(self):
        @dyn.compile
        def f(x):
            v = x[1:]
            return v * (2.0 if v.storage_offset() == 1 else 3.0)

        self.assertEqual(f(dyn.ones(4)).tolist(), [2.0] * 3)
        self.assertEqual(f(dyn.ones(8)[3:7]).tolist(), [3.0] * 3)

    def test_a_failing_argument_repr_does_not_leave_a_region_open(self):
        class K:
            def __repr__(self):
                raise ValueError("no repr")

            def __hash__(self):
                return 1

        f = dyn.compile(lambda d: sum(d.values(), dyn.zeros(2)))
        self.assertEqual(f({K(): dyn.ones(2)}).tolist(), [1.0, 1.0])
        self.assertFalse(_dyn._capture_active())

    def test_data_dependent_op_first_in_a_segment_is_a_cache_hit(self):
        @dyn.compile
        def f(x, m):
            return x[m].sum()

        x, m = dyn.arange(4.0), dyn.tensor([True, False, True, True])
        for _ in range(5):
            self.assertEqual(f(x, m).item(), 5.0)
        c = dyn.debug.counters()
        self.assertEqual((c["recompiles"], c["fallbacks"], c["cache_hits"]), (0, 0, 4))

    def test_leaves_are_freed(self):
        w = dyn.randn(10, requires_grad=True)
        (w * 2).sum()
        ref = weakref.ref(w)
        del w
        gc.collect()
        self.assertIsNone(ref())

    def test_explain_does_not_take_over_lookups(self):
        def g(x):
            return x + 1

        cg = dyn.compile(g)
        cg(dyn.ones(2))
        dyn.debug.explain(g, dyn.ones(2))
        self.assertEqual([gr.id for gr in dyn.debug.graphs(g)], ["g[0].0"])

    def test_expand_rejects_negative_sizes(self):
        with self.assertRaisesRegex(RuntimeError, "non-negative"):
            dyn.ones(1).expand(-5)

    def test_partially_overlapping_in_place_is_refused(self):
        x = dyn.arange(5.0)
        with self.assertRaisesRegex(RuntimeError, "single memory location"):
            x[1:].add_(x[:-1])
        self.assertEqual(x.tolist(), [0.0, 1.0, 2.0, 3.0, 4.0])
        x.add_(x)  # the same view is fine
        self.assertEqual(x.tolist(), [0.0, 2.0, 4.0, 6.0, 8.0])

    def test_report_path_with_spaces_and_unwritable_report(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "my report.html")
            p = run("import dyn; dyn.compile(lambda x: x + 1)(dyn.ones(2))", "--report", path)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(path) as f:
                self.assertIn("<h1>dynrepl report</h1>", f.read())
            p = run("print(1)", "--report", os.path.join(d, "missing", "r.html"))
            self.assertEqual(p.returncode, 1)
            self.assertIn("cannot write the report", p.stderr)

    def test_compiled_call_at_a_breakpoint_prompt_runs_eagerly(self):
        script = os.path.join(REPO, "scripts", "examples", "recompiles.py")
        p = subprocess.run([BIN, "--break", "recompile:f", "-i", "--no-color", script],
                           input="r = f(dyn.ones(7, 8), 0.5)\nr.shape\n:continue\n:continue\n:graphs f\n",
                           capture_output=True, text=True, timeout=120, cwd=REPO)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("dyn.Size([7, 8])", p.stdout)
        table = p.stdout[p.stdout.index("id "):]
        self.assertIn("f[1].0", table)
        self.assertIn("f[2].0", table)
        self.assertNotIn("f[3]", table)  # the prompt's call took no cache entry


if __name__ == "__main__":
    unittest.main()
