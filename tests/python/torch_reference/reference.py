"""Comparing dyn's results with a file record.py wrote from PyTorch 2.15."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def assert_as_recorded(tc, json_name, cases, encode, torch_like, known_differences=None):
    """Every case of cases(torch_like), encoded, equals the recorded one: the same values, or the
    same exception with PyTorch's message, which dyn may follow with what to do.
    known_differences: case -> what dyn gives instead, where it differs on purpose."""
    with open(os.path.join(HERE, json_name)) as f:
        reference = json.load(f)
    tc.assertEqual(reference["torch"], "2.15.0")
    got = {k: encode(torch_like, v) for k, v in cases(torch_like).items()}
    tc.assertEqual(sorted(got), sorted(reference["cases"]))
    for name, want in reference["cases"].items():
        want = (known_differences or {}).get(name, want)
        with tc.subTest(case=name):
            if isinstance(want, list) and want[:1] == ["error"]:
                tc.assertEqual(got[name][:2], want[:2])
                tc.assertTrue(got[name][2].startswith(want[2]), got[name][2])
            else:
                tc.assertEqual(got[name], want)
