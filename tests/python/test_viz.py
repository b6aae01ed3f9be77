"""Pictures: golden DOT of the example scripts, DOT that graphviz parses back, SVG/PNG files with
consistent dimensions, --dot-dir, :render errors, and the HTML report's content."""
import os
import re
import shutil
import struct
import subprocess
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("DYNREPL") or os.path.join(REPO, "build", "repl", "dynrepl")
GOLDEN = os.path.join(REPO, "tests", "python", "golden_dot")
EXAMPLES = ["branchy", "recompiles"]


def dynrepl(*args, stdin=""):
    return subprocess.run([BIN, *args], cwd=REPO, input=stdin, capture_output=True, text=True, timeout=120)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", head[16:24])


def svg_size_pt(path):
    text = open(path).read()
    m = re.search(r'<svg width="(\d+)pt" height="(\d+)pt"', text)
    assert m, "no width/height in the SVG"
    return int(m.group(1)), int(m.group(2))


class TestDot(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dynrepl_viz_")
        cls.dots = {}
        for ex in EXAMPLES:
            d = os.path.join(cls.tmp, ex)
            p = dynrepl("--batch", "--dot-dir", d, f"scripts/examples/{ex}.py")
            assert p.returncode == 0, p.stderr
            cls.dots[ex] = {f: open(os.path.join(d, f)).read() for f in sorted(os.listdir(d))}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_dot_dir_writes_every_compiled_graph(self):
        self.assertEqual(sorted(self.dots["branchy"]),
                         ["explain(fn)[0].0.dot", "explain(fn)[0].1.dot", "fn[0].0.dot", "fn[1].0.dot", "fn[1].1.dot"])
        self.assertEqual(sorted(self.dots["recompiles"]), ["f[0].0.dot", "f[1].0.dot", "f[2].0.dot"])

    def test_golden_dot(self):
        for ex, files in self.dots.items():
            for name, text in files.items():
                golden = os.path.join(GOLDEN, f"{ex}.{name}")
                if not os.path.exists(golden):
                    continue
                with self.subTest(golden=golden):
                    self.assertEqual(text, open(golden).read())
        self.assertGreaterEqual(len(os.listdir(GOLDEN)), 4)

    def test_graphviz_parses_every_dot(self):
        for ex, files in self.dots.items():
            for name, text in files.items():
                with self.subTest(file=name):
                    p = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True, timeout=60)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertEqual(p.stderr, "")
                    self.assertIn("<svg", p.stdout)


class TestRender(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dynrepl_render_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_svg_and_png_of_an_entry_have_matching_dimensions(self):
        svg, png = os.path.join(self.tmp, "e.svg"), os.path.join(self.tmp, "e.png")
        p = dynrepl("--batch", "-e", f":render fn[1] {svg}", "-e", f":render fn[1] {png}", "scripts/examples/branchy.py")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"wrote {svg}", p.stdout)
        self.assertGreater(os.path.getsize(svg), 500)
        w_pt, h_pt = svg_size_pt(svg)
        w_px, h_px = png_size(png)
        # graphviz renders PNG at 96 dpi: pixels = points * 96 / 72
        self.assertAlmostEqual(w_px, w_pt * 96 / 72, delta=3)
        self.assertAlmostEqual(h_px, h_pt * 96 / 72, delta=3)
        text = open(svg).read()
        for label in ("fn[1].0", "fn[1].1", "graph break", "mul &#45;1.0", "branchy.py:13"):  # SVG escapes "-"
            self.assertIn(label, text)

    def test_diff_picture_colors_the_added_node(self):
        svg = os.path.join(self.tmp, "d.svg")
        p = dynrepl("--batch", "-e", f":render --diff fn[0] fn[1] {svg}", "scripts/examples/branchy.py")
        self.assertEqual(p.returncode, 0, p.stderr)
        text = open(svg).read()
        self.assertIn("(added)", text)
        self.assertIn("#c7e9c0", text)  # the green of added nodes

    def chain_output(self, loops, calls, out_name, *args):
        """Runs a compiled chain of `loops` (mul, relu) pairs over `calls` (`f(dyn.ones(4), n)` lines) with
        dynrepl args naming OUT (the file it writes); returns that file's text."""
        script = os.path.join(self.tmp, f"chain{loops}.py")
        with open(script, "w") as f:
            f.write(f"import dyn\n@dyn.compile\ndef f(x, n):\n    for _ in range({loops}):\n"
                    "        x = (x * 1.5).relu()\n    return x * n\n" + "".join(f"f(dyn.ones(4), {n})\n" for n in calls))
        out = os.path.join(self.tmp, out_name)
        p = dynrepl("--batch", *[a.replace("OUT", out) for a in args], script)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            return f.read()

    def test_a_large_diff_collapses_unchanged_runs(self):
        text = self.chain_output(10, (2, 3), "big.svg", "-e", ":render --diff f[0] f[1] OUT")
        self.assertIn("... 20 unchanged nodes ...", text)
        self.assertIn("(was mul(2) f32[4])", text)
        self.assertEqual(text.count("relu("), 0, "the unchanged nodes are in the one box")

    def test_the_report_names_the_command_for_a_picture_too_big_to_lay_out(self):
        page = self.chain_output(160, (1.0,), "big.html", "--report", "OUT")
        self.assertIn("No picture: 321 nodes would take graphviz minutes to lay out; <code>:render f[0].0", page)
        self.assertNotIn("<svg", page)

    def test_bad_render_requests_are_one_line_errors(self):
        p = dynrepl("--batch", "-e", ":render fn[0].0 out.gif", "-e", ":render nope[3].1 x.svg", "-e", ":render",
                    "-e", "print('alive')", "scripts/examples/branchy.py")
        self.assertEqual(p.returncode, 1, "a failed -e line makes the exit status say so")
        errors = [l for l in p.stderr.splitlines() if l.startswith("error:")]
        self.assertEqual(len(errors), 3, p.stderr)
        self.assertIn(".svg or .png", errors[0])
        self.assertIn("no graph 'nope[3].1'", errors[1])
        self.assertIn("usage: :render", errors[2])
        self.assertIn("alive", p.stdout)

    def test_debug_graph_dot_and_render(self):
        code = ("import dyn\n"
                "f = dyn.compile(lambda a: (a * 2).relu(), name='f')\n"
                "f(dyn.ones(3))\n"
                "g = dyn.debug.graphs(f)[0]\n"
                "print(g.dot().splitlines()[0])\n"
                "print(g.render('png')[1:4], len(g.render('svg')) > 100)\n"
                "try:\n    g.render('gif')\nexcept ValueError as e:\n    print('ValueError', e)\n")
        p = dynrepl("-c", code)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.splitlines(), ['digraph "f[0].0" {', "b'PNG' True",
                                                 "ValueError cannot render 'gif': expected a file ending in .svg or .png"])


class TestReport(unittest.TestCase):
    def test_report_is_self_contained_and_complete(self):
        tmp = tempfile.mkdtemp(prefix="dynrepl_report_")
        try:
            html = os.path.join(tmp, "r.html")
            p = dynrepl("--batch", "--report", html, "scripts/examples/recompiles.py")
            self.assertEqual(p.returncode, 0, p.stderr)
            text = open(html).read()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for section in ('id="summary"', 'id="functions"', 'id="breaks"', 'id="time"', 'id="graphs"', "<nav>"):
            self.assertIn(section, text)
        # The step times of :profile: f's three graphs each ran, each by the line that recorded it.
        time = text.split('id="time"', 1)[1].split("<h2", 1)[0]
        for g in ("f[0].0", "f[1].0", "f[2].0"):
            self.assertIn(g, time)
        self.assertIn("by line:", time)
        self.assertIn("recompiles.py:12  x = (x * scale).relu()", time)
        self.assertEqual(text.count("<svg"), 3)  # f[0].0, f[1].0, f[2].0
        self.assertIn("size mismatch at dim 0: expected 4, actual 6", text)
        self.assertIn("because `steps` changed from 1 to 2", text)
        self.assertNotRegex(text, r'(src|href)="(https?:)?//')  # no network, no external assets
        self.assertNotIn("<script", text)


if __name__ == "__main__":
    unittest.main()
