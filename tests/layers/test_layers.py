"""The include-direction check: it finds an upward include in a made-up tree, and the real tree
has none."""
import os
import tempfile
import unittest

import check_includes


def _tree(files):
    root = tempfile.mkdtemp()
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    return root


class TestChecker(unittest.TestCase):
    def test_finds_upward_and_front_end_includes(self):
        root = _tree({
            "core/ops/run.cpp": '#include "core/tensor.h"\n#include "core/capture/capture.h"\n',
            "core/capture/capture.h": '#include "core/ops/run.h"\n#include <vector>\n',
            "viz/dot.cpp": '#include "core/query/query.h"\n#include "core/capture/capture.h"\n',
            "repl/main.cpp": '#include "python/py_common.h"\n#include "viz/dot.h"\n',
        })
        _, problems = check_includes.check(root)
        self.assertEqual(len(problems), 2, problems)
        self.assertIn("core/ops/run.cpp:2: includes core/capture/capture.h (capture), above its own layer (ops)",
                      problems)
        self.assertTrue(any(p.startswith("viz/dot.cpp:2:") and "core/query only" in p for p in problems))

    def test_folder_outside_the_layers_is_reported(self):
        _, problems = check_includes.check(_tree({"core/newthing/x.cpp": "\n"}))
        self.assertEqual(len(problems), 1)
        self.assertIn("in no layer", problems[0])

    def test_the_tree_has_no_upward_include(self):
        checked, problems = check_includes.check()
        self.assertGreater(checked, 50)
        self.assertEqual(problems, [])


if __name__ == "__main__":
    unittest.main()
