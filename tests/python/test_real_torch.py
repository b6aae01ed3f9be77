"""dynrepl --real-torch: PyTorch 2.15's own torch.compile (Dynamo) in dynrepl's views
(python/dyn/_real_torch.py). Each test runs scripts/examples/real_torch/ragged_batches.py, or a
small program, in a dynrepl child with --real-torch and reads what the views print: the graph
breaks at `loss.backward()` and `.item()`, the recompile for the ragged last batch with Dynamo's
expected and actual sizes, the guards of each cache entry with their source and user line, the FX
graph with its user lines, the events, a stop at the recompile in the caller's frame, and the
cache-limit fallback.

They need PyTorch 2.15 installed by `scripts/setup.sh --with-torch` ($DYNREPL_TORCH, else
/opt/torch-ref); without it each test is skipped and says so.
"""
import json
import os
import re
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("DYNREPL") or os.path.join(REPO, "build", "repl", "dynrepl")
EXAMPLE = os.path.join(REPO, "scripts", "examples", "real_torch", "ragged_batches.py")


def torch_site():
    """The site-packages of the PyTorch 2.15 venv dynrepl would use, or None."""
    base = os.environ.get("DYNREPL_TORCH") or "/opt/torch-ref"
    for site in (base, os.path.join(base, "lib", "python3.11", "site-packages")):
        version = os.path.join(site, "torch", "version.py")
        if os.path.isfile(version):
            with open(version) as fh:
                if re.search(r"__version__ = '2\.15\.", fh.read()):
                    return site
    return None


SITE = torch_site()
# Under the sanitizer build (scripts/test.sh --sanitize) PyTorch's own native libraries, which are not
# built for AddressSanitizer, would run inside an instrumented process: the release run covers
# these tests, and TestForeignEvents below covers dyn's side under the sanitizers too.
NEEDS_TORCH = unittest.skipIf(SITE is None or "ASAN_OPTIONS" in os.environ,
                              "no PyTorch 2.15 venv (scripts/setup.sh --with-torch installs one), or a sanitizer run")


def run(*args, stdin=None, env=None):
    """(exit status, output with PyTorch's own warning lines left out) of a dynrepl child."""
    e = dict(os.environ, NO_COLOR="1")
    e.pop("PYTHONPATH", None)  # the venv must come from --real-torch itself
    e.update(env or {})
    p = subprocess.run([BIN, "--no-color", *args], input=stdin, capture_output=True, text=True, timeout=300,
                       env=e, cwd=tempfile.gettempdir())
    out = "\n".join(ln for ln in (p.stdout + p.stderr).splitlines() if not re.match(r"^[WI]\d{4} ", ln))
    return p.returncode, out


@NEEDS_TORCH
class TestDynamoViews(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.events = os.path.join(tempfile.mkdtemp(), "events.jsonl")
        cls.status, cls.out = run("--real-torch", "--batch", "--events", cls.events, "-e", ":graphs", "-e", ":breaks",
                                  "-e", ":why-recompile", "-e", ":guards step", "-e", ":graph step[1]", "-e", ":stats",
                                  "-e", ":dot step[0].0", EXAMPLE)

    def test_the_program_ran_on_pytorch(self):
        self.assertEqual(self.status, 1, self.out)  # the :dot line fails (below), the script does not
        self.assertIn("epoch 1: loss 0.3767", self.out)  # PyTorch's generator, not dyn's (0.0000, 1.2494)

    def test_graphs_and_how_each_ends(self):
        self.assertIn("id         function  entry  segment  ops  calls  ends with\n"
                      "step[0].0  step      0      0        2    -      graph break (unsupported_op) at "
                      "ragged_batches.py:25\n"
                      "step[1].0  step      1      0        2    -      graph break (unsupported_op) at "
                      "ragged_batches.py:25\n", self.out)

    def test_breaks_name_the_user_line_and_dynamo_reason(self):
        self.assertIn("1. step[0] after segment 0  ragged_batches.py:25  loss.backward()\n"
                      "   asked for: Unsupported Tensor.backward() call\n", self.out)
        self.assertIn("3. report[0] after segment 0  ragged_batches.py:31  if loss.item() > 1.0:", self.out)
        self.assertIn("reason:    Unsupported Tensor.item() call with capture_scalar_outputs=False [item]", self.out)

    def test_recompile_names_the_size_with_expected_and_actual(self):
        self.assertIn("step: 1 recompile, because tensor 'L['x']' size mismatch at index 0 took the value 2 "
                      "(first traced with 4)\n", self.out)
        self.assertIn("step: a call of 'step' no cache entry served: Dynamo compiles entry step[1]\n"
                      "  step[0] failed tensor_input: tensor 'L['x']' size mismatch at index 0: expected 4, actual 2\n",
                      self.out)

    def test_guards_per_entry_with_source_and_user_line(self):
        self.assertRegex(self.out, r"step\[0\]: \d+ guards \(PyTorch Dynamo's entry; it counts no hits\)")
        self.assertIn("L['y']  TENSOR_MATCH: check_tensor(L['y'], Tensor, ", self.out)
        # Dynamo prints a user file outside torch's tree two characters short: the views name it whole.
        self.assertIn("size=[4, 2], stride=[2, 1])  # ragged_batches.py:24 in step\n", self.out)
        self.assertIn("size=[None, 2], stride=[2, 1])  # ragged_batches.py:24 in step\n", self.out)  # entry 1: dynamic
        self.assertIn("epilogue  LAMBDA_GUARD: L['y'].size()[0] == L['x'].size()[0]", self.out)
        self.assertNotIn("mp/", self.out)

    def test_graph_nodes_carry_the_user_line(self):
        self.assertIn("graph step[1].0  (2 ops, PyTorch Dynamo's, ends with graph break (unsupported_op) at "
                      "ragged_batches.py:25)\n", self.out)
        self.assertRegex(self.out, r"%loss = call_function mse_loss\(linear, l_y_\)  float32\[\]  # "
                                   r"ragged_batches.py:24  `loss = torch.nn.functional.mse_loss\(model\(x\), y\)`")

    def test_stats_count_dynamo_events(self):
        self.assertRegex(self.out, r"compiles 5  recompiles 1  graph breaks 3  guard failures 0  fallbacks 0  graphs 2")

    def test_pictures_say_they_are_for_dyn_graphs(self):
        self.assertIn("error: 'step[0].0' is a graph of PyTorch's torch.compile (Dynamo): :graph prints it", self.out)

    def test_events_file(self):
        with open(self.events) as fh:
            events = [json.loads(ln) for ln in fh]
        kinds = [e["kind"] for e in events]
        self.assertEqual(kinds.count("recompile"), 1, kinds)
        rec = next(e for e in events if e["kind"] == "recompile")
        self.assertEqual((rec["fn"], rec["entry"]), ("step", 1))
        self.assertEqual(rec["failures"][0]["expected"], "4")
        self.assertEqual(rec["failures"][0]["actual"], "2")


@NEEDS_TORCH
class TestDynamoStops(unittest.TestCase):
    def test_stop_at_the_recompile_in_the_callers_frame(self):
        status, out = run("--real-torch", "--break", "recompile", EXAMPLE, stdin=":where\ni\ndata[i:i + 4].shape\n"
                                                                                    ":continue\n")
        self.assertEqual(status, 0, out)
        self.assertIn("stopped at breakpoint 1: recompile in step\n", out)
        self.assertIn("step[0] failed tensor_input: tensor 'L['x']' size mismatch at index 0, expected 4, actual 2", out)
        self.assertIn("> ragged_batches.py:40 in <module>\n      loss = step(data[i:i + 4], target[i:i + 4])", out)
        self.assertIn("\n8\ntorch.Size([2, 8])\n", out)  # the caller's locals: the ragged batch
        self.assertIn("epoch 1: loss 0.3767", out)  # :continue finished the run

    def test_stop_at_a_graph_break(self):
        # Dynamo logs a break while it handles its own Unsupported: a line typed at the stop must
        # not chain that exception (its traceback is Dynamo's, not the user's)
        status, out = run("--real-torch", "--break", "graph-break:report", EXAMPLE,
                          stdin="epoch\nundefined_name\n:continue\n")
        self.assertEqual(status, 0, out)
        self.assertIn("stopped at breakpoint 1: graph-break in report\n"
                      "  Unsupported Tensor.item() call with capture_scalar_outputs=False\n", out)
        self.assertIn("  at ragged_batches.py:31  if loss.item() > 1.0:", out)
        self.assertIn("\n0\n", out)  # the caller's frame: epoch 0
        self.assertIn("NameError: name 'undefined_name' is not defined", out)
        self.assertNotIn("symbolic_convert.py", out)
        self.assertNotIn("During handling of the above exception", out)

    def test_quit_at_the_stop_ends_the_script(self):
        status, out = run("--real-torch", "--break", "recompile", EXAMPLE, stdin=":quit\n")
        self.assertIn("stopped at breakpoint 1: recompile in step", out)
        self.assertNotIn("epoch 0", out.split("stopped at")[1])
        self.assertEqual(status, 1, out)  # as with dyn's capture: the script did not finish

    def test_int_argument_and_cache_limit_fallback(self):
        prog = ("import torch\n"
                "torch._dynamo.config.recompile_limit = 2\n"
                "torch._dynamo.config.automatic_dynamic_shapes = False\n"
                "f = torch.compile(lambda x, n: x * n, backend='eager')\n"
                "for n in range(4):\n"
                "    f(torch.ones(2), n)\n")
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
            fh.write(prog)
        self.addCleanup(os.unlink, fh.name)
        status, out = run("--real-torch", "--batch", "-e", ":why-recompile", "-e", ":events fallback", fh.name)
        self.assertEqual(status, 0, out)
        self.assertIn("<lambda>[0] failed constant: L['n'] == 0: expected 0, actual 1", out)
        self.assertRegex(out, r"fallback .*recompile limit")


REVIEW_PROG = """import importlib.util
import torch

print("probe:", importlib.util.find_spec("torch_xla"))
print("scaler:", torch.amp.GradScaler("cuda").is_enabled())


class A(torch.nn.Module):
    def forward(self, x):
        return torch.sin(x) + 1


class B(torch.nn.Module):
    def forward(self, x):
        return torch.cos(x) * 2 - x


a, b = torch.compile(A(), backend="eager"), torch.compile(B(), backend="eager")
a(torch.ones(3))
b(torch.ones(3))


@torch.compile(backend="eager")
def f(x, xs):
    return x * len(xs)


f(torch.ones(2), [1, 2, 3])
f(torch.ones(2), list(range(50)))
"""


@NEEDS_TORCH
class TestDynamoPrograms(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
            fh.write(REVIEW_PROG)
        cls.path = fh.name
        cls.status, cls.out = run("--real-torch", "--batch", "-e", ":graphs", "-e", ":why-recompile f", "-e", ":reset",
                                  "-e", "a(torch.ones(3))", "-e", ":events compile", cls.path)

    @classmethod
    def tearDownClass(cls):
        os.unlink(cls.path)

    def test_probes_for_missing_modules_see_none(self):
        # PyTorch itself probes for torch_xla (GradScaler, autocast on a machine without CUDA)
        self.assertEqual(self.status, 0, self.out)
        self.assertIn("probe: None\n", self.out)
        self.assertIn("scaler: False\n", self.out)

    def test_two_modules_forward_stay_apart(self):
        self.assertRegex(self.out, r"A\.forward\[0\]\.0  A\.forward  0      0        2 ")
        self.assertRegex(self.out, r"B\.forward\[0\]\.0  B\.forward  0      0        3 ")

    def test_a_length_guard_shows_the_length(self):
        self.assertIn("f[0] failed constant: len(L['xs']) == 3: expected 3, actual 50\n", self.out)

    def test_reset_forgets_dynamo_caches_too(self):
        # after :reset the next call compiles again (as the views, now empty, say it must)
        after = self.out.split("forgot every graph, event, counter and cache entry")[1]
        self.assertRegex(after, r"1  [0-9.]+s  compile  \S+:9  2 ops")


class TestForeignEvents(unittest.TestCase):
    """dyn's side alone: what _real_torch.py hands the engine, shown by the views; bad input refused."""

    PROG = ("from dyn import _dyn\n"
            "_dyn._log_event({'kind': 'compile', 'fn': 'g', 'entry': 0, 'details': '3 ops, 5 guards'})\n"
            "_dyn._log_event({'kind': 'recompile', 'fn': 'g', 'entry': 1, 'segment': 0, 'closest': 0,\n"
            "                 'reason': 'Dynamo compiles entry g[1]', 'failures': [{'entry': 0, 'kind': 'constant',\n"
            "                 'what': \"L['n'] == 2\", 'expected': '2', 'actual': '3'}]})\n"
            "_dyn._add_foreign_graph({'fn': 'g', 'entry': 0, 'segment': 0, 'ops': 1, 'ends': 'return',\n"
            "                         'lines': ['%mul = call_function mul(l_x_, 2)']})\n"
            "_dyn._add_foreign_entry({'fn': 'g', 'entry': 0, 'guards': [\"L['n']  EQUALS_MATCH: L['n'] == 2\"]})\n")

    def test_views_show_foreign_events(self):
        status, out = run("--batch", "-e", ":stats", "-e", ":why-recompile", "-e", ":graph g", "-e", ":guards g",
                          "-e", ":graphs", "-c", self.PROG)
        self.assertEqual(status, 0, out)
        self.assertIn("compiles 1  recompiles 1  graph breaks 0  guard failures 0  fallbacks 0  graphs 1", out)
        self.assertIn("g: Dynamo compiles entry g[1]\n  g[0] failed constant: L['n'] == 2: expected 2, actual 3\n", out)
        self.assertIn("graph g[0].0  (1 ops, PyTorch Dynamo's, ends with return)\n"
                      "  %mul = call_function mul(l_x_, 2)\n", out)
        self.assertIn("g[0]: 1 guards (PyTorch Dynamo's entry; it counts no hits)\n  L['n']  EQUALS_MATCH: L['n'] == 2\n",
                      out)
        self.assertIn("g[0].0  g         0      0        1    -      return", out)

    def test_bad_input_is_a_clear_error(self):
        cases = [("_dyn._log_event({'kind': 'nope', 'fn': 'g'})", "ValueError: _log_event: unknown event kind 'nope'"),
                 ("_dyn._log_event({'kind': 'compile'})", "ValueError: _log_event: the event needs 'fn'"),
                 ("_dyn._log_event([1])", "TypeError: _log_event: expected a dict, got list"),
                 ("_dyn._log_event({'kind': 'compile', 'fn': 'g', 'reason': 3})",
                  "TypeError: _log_event: 'reason' must be a str, not int"),
                 ("_dyn._log_event({'kind': 'recompile', 'fn': 'g', 'failures': [{'kind': 'odd'}]})",
                  "ValueError: _log_event: unknown guard kind 'odd'"),
                 ("_dyn._add_foreign_graph({'fn': 'g', 'lines': 'x'})", "TypeError: 'lines' must be a list of str"),
                 ("_dyn._add_library_dir('')", "ValueError: _add_library_dir: expected a folder, got ''")]
        for code, message in cases:
            with self.subTest(code):
                status, out = run("--batch", "-e", ":stats", "-c",
                                  "from dyn import _dyn\n" + code + "\nprint('not reached')")
                self.assertEqual(status, 1, out)
                self.assertIn(message, out)
                self.assertNotIn("not reached", out)
                self.assertIn("calls 0  cache hits 0  compiles 0  recompiles 0", out)  # nothing half-logged


class TestWithoutPyTorch(unittest.TestCase):
    def test_import_torch_says_how_to_install(self):
        empty = tempfile.mkdtemp()
        status, out = run("--real-torch", "--batch", "-c", "import torch", env={"DYNREPL_TORCH": empty})
        self.assertEqual(status, 1, out)
        self.assertIn("ModuleNotFoundError: No module named 'torch'\nPyTorch 2.15 for dynrepl --real-torch is "
                      "installed by `scripts/setup.sh --with-torch`", out)
        self.assertIn(f"DYNREPL_TORCH={empty!r} is not a venv or site-packages folder", out)


if __name__ == "__main__":
    unittest.main()
