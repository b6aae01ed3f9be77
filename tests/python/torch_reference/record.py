"""Records what PyTorch 2.15 returns for the calls of cases.py into functional.json, so that the
tests compare dyn with it without PyTorch installed. Run with PyTorch's own interpreter:

    /opt/torch-ref/bin/python tests/python/torch_reference/record.py
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import cases, encode  # noqa: E402

assert torch.__version__.startswith("2.15"), torch.__version__
recorded = {k: encode(torch, v) for k, v in cases(torch).items()}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "functional.json"), "w") as f:
    # one case a line, so that a change reads as a diff of cases
    f.write('{"torch": "%s", "cases": {\n' % torch.__version__.split("+")[0])
    f.write(",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(recorded.items())))
    f.write("\n}}\n")
