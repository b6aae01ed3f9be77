"""The HTML report in a real browser: headless Chromium renders it, takes a screenshot, and the
rendered page has its sections, its table of contents and one picture per graph."""
import os
import shutil
import struct
import subprocess
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("DYNREPL") or os.path.join(REPO, "build", "repl", "dynrepl")
# Where a developer can look at the screenshot after the test.
SHOT = os.environ.get("DYN_REPORT_SCREENSHOT", os.path.join(tempfile.gettempdir(), "dynrepl_report.png"))


def chromium():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise AssertionError("chromium is not installed; scripts/setup.sh installs it")
    return path


def browser(url, *extra, profile):
    # The flags keep Chromium off the network (this machine has none) and out of the user's profile.
    args = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-dev-shm-usage", "--hide-scrollbars", f"--user-data-dir={profile}", *extra, url]
    return subprocess.run(args, capture_output=True, text=True, timeout=180)


class TestReportInBrowser(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dynrepl_browser_")
        cls.html = os.path.join(cls.tmp, "report.html")
        p = subprocess.run([BIN, "--batch", "--report", cls.html, "scripts/examples/branchy.py"], cwd=REPO,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        cls.url = "file://" + cls.html

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_screenshot(self):
        p = browser(self.url, f"--screenshot={SHOT}", "--window-size=1280,2400", profile=os.path.join(self.tmp, "p1"))
        self.assertTrue(os.path.exists(SHOT), p.stderr[-2000:])
        with open(SHOT, "rb") as f:
            head = f.read(24)
        self.assertEqual(head[:8], b"\x89PNG\r\n\x1a\n")
        self.assertEqual(struct.unpack(">II", head[16:24]), (1280, 2400))
        self.assertGreater(os.path.getsize(SHOT), 30_000, "the page rendered almost nothing")

    def test_rendered_dom_has_the_sections(self):
        p = browser(self.url, "--dump-dom", profile=os.path.join(self.tmp, "p2"))
        dom = p.stdout
        self.assertIn("<h1>dynrepl report</h1>", dom, p.stderr[-2000:])
        for section in ("summary", "why", "functions", "trie", "breaks", "time", "graphs"):
            self.assertIn(f'id="{section}"', dom)
            self.assertIn(f'href="#{section}"', dom)
        self.assertEqual(dom.count("<svg"), 5)  # fn[0].0, fn[1].0, fn[1].1 and explain's two graphs
        self.assertIn("Python needed the truth value of a tensor", dom)
        self.assertIn('class="hit"', dom)  # the source excerpt marks the break's line

    def test_first_screen_says_why_and_every_link_resolves(self):
        import collections
        import re

        dom = browser(self.url, "--dump-dom", profile=os.path.join(self.tmp, "p3")).stdout
        # the table of contents leads with the answer: why each function recompiled
        toc = dom[dom.index("<nav>"):dom.index("</nav>")]
        self.assertLess(toc.index('href="#why"'), toc.index('href="#functions"'))
        why = dom[dom.index('id="why"'):dom.index('id="functions"')]
        self.assertIn("fn: 1 recompile, because", why)
        self.assertIn("<th>cause</th>", why)
        ids = re.findall(r'\sid="([^"]+)"', dom)
        self.assertEqual([k for k, n in collections.Counter(ids).items() if n > 1], [], "ids are unique")
        links = set(re.findall(r'href="#([^"]+)"', dom))
        self.assertEqual(sorted(links - set(ids)), [], "every link lands somewhere")
        # the stack trie links the graphs compiled under each user frame
        trie = dom[dom.index('id="trie"'):dom.index('id="breaks"')]
        self.assertIn("branchy.py", trie)
        self.assertIn('href="#g-fn-0--0"', trie)

    def test_identical_graph_breaks_are_one_card(self):
        script = os.path.join(self.tmp, "breaks.py")
        with open(script, "w") as f:
            f.write("import dyn\n@dyn.compile\ndef f(x, n):\n    y = x * n\n    if y.sum() > 0:  # BREAK\n"
                    "        y = y + 1\n    return y\nfor n in (1, 2, 3):\n    f(dyn.ones(2), n)\n")
        html = os.path.join(self.tmp, "breaks.html")
        p = subprocess.run([BIN, "--batch", "--report", html, script], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(html) as f:
            page = f.read()
        breaks = page[page.index('id="breaks"'):page.index('id="graphs"')]
        self.assertEqual(breaks.count("<h3>"), 1, breaks)
        self.assertIn("breaks.py:5 &mdash; 3 times", breaks)


if __name__ == "__main__":
    unittest.main()
