"""Records what PyTorch 2.15 returns for the calls of cases.py (into functional.json), of
dtype_cases.py (into dtypes.json), of autograd_cases.py (into autograd.json), of linalg_cases.py
(into linalg.json), of special_cases.py (into special.json) and of distributions_cases.py (into
distributions.json) (and, with torchvision,
vision_cases.py into vision.json), so that the tests compare dyn with it without PyTorch installed. Run with PyTorch's own interpreter:

    /opt/torch-ref/bin/python tests/python/torch_reference/record.py
"""
import importlib
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

assert torch.__version__.startswith("2.15"), torch.__version__
for module, out in (("cases", "functional.json"), ("dtype_cases", "dtypes.json"),
                    ("autograd_cases", "autograd.json"), ("linalg_cases", "linalg.json"),
                    ("api_cases", "api.json"), ("optim_cases", "optim.json"), ("special_cases", "special.json"),
                    ("distributions_cases", "distributions.json")):
    m = importlib.import_module(module)
    recorded = {k: m.encode(torch, v) for k, v in m.cases(torch).items()}
    with open(os.path.join(HERE, out), "w") as f:
        # one case a line, so that a change reads as a diff of cases
        f.write('{"torch": "%s", "cases": {\n' % torch.__version__.split("+")[0])
        f.write(",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(recorded.items())))
        f.write("\n}}\n")

# torchvision's cases: with torchvision on the path (tests/corpus/run.py --setup puts 0.29.2 there)
sys.path.append("/opt/corpus-refdeps")
try:
    import torchvision
except ImportError:
    print("record.py: no torchvision (run tests/corpus/run.py --setup): vision.json not recorded", file=sys.stderr)
else:
    m = importlib.import_module("vision_cases")
    recorded = {k: m.encode(torch, v) for k, v in m.cases(torch, torchvision).items()}
    with open(os.path.join(HERE, "vision.json"), "w") as f:
        f.write('{"torch": "%s", "torchvision": "%s", "cases": {\n' % (torch.__version__.split("+")[0],
                                                                      torchvision.__version__.split("+")[0]))
        f.write(",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(recorded.items())))
        f.write("\n}}\n")
