"""Comparing dyn's results with a file record.py wrote from PyTorch 2.15, and what the case files
share: recording each call's result or error, encoding it as JSON, and comparing floats to a
relative tolerance where the two libraries compute in another order (each test says why)."""
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


def recorder(r):
    """rec(name, f): r[name] = f(), or the error f raised: ("error", type name, first line)."""
    def rec(k, f):
        try:
            r[k] = f()
        except Exception as e:  # noqa: BLE001 - the error is the recorded result
            r[k] = ("error", type(e).__name__, str(e).split("\n")[0])
    return rec


def _finite(o):
    if isinstance(o, list):
        return [_finite(e) for e in o]
    return str(o) if isinstance(o, float) and (o != o or o in (float("inf"), -float("inf"))) else o


def encode_value(torch, v):
    """A result as JSON: [dtype, shape, values] for a tensor (NaN and infinities as strings), a
    dtype's name, lists for tuples and sizes, the error's type and first line with "torch." and
    "dyn." taken out of it (dtypes print as torch.float32 in one and dyn.float32 in the other)."""
    if isinstance(v, torch.Tensor):
        return [str(v.dtype).split(".")[-1], list(v.shape), _finite(v.tolist())]
    if isinstance(v, torch.dtype):
        return "dtype:" + str(v).split(".")[-1]
    if isinstance(v, tuple) and v and v[0] == "error":
        return [v[0], v[1], v[2].replace("torch.", "").replace("dyn.", "")]
    if isinstance(v, (tuple, list)) or type(v).__name__ == "Size":
        return [encode_value(torch, e) for e in v]
    if isinstance(v, str):
        return v.replace("torch.", "").replace("dyn.", "")
    return v


def close(got, want, rel, floor=1e-12):
    """Encoded results equal but for floats within rel of the larger magnitude (or of floor, for
    values smaller than it)."""
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(close(a, b, rel, floor) for a, b in zip(got, want))
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(close(got[k], want[k], rel, floor) for k in got)
    if isinstance(got, float) and isinstance(want, float):
        return abs(got - want) <= rel * max(abs(got), abs(want), floor)
    return got == want


def assert_like_recorded(tc, json_name, cases, encode, torch_like, same):
    """Every case of cases(torch_like), encoded, as recorded in json_name: an error of the same type
    whose message starts with PyTorch's, or values for which same(got, want, case name) holds."""
    with open(os.path.join(HERE, json_name)) as f:
        reference = json.load(f)
    tc.assertEqual(reference["torch"], "2.15.0")
    got = {k: encode(torch_like, v) for k, v in cases(torch_like).items()}
    tc.assertEqual(sorted(got), sorted(reference["cases"]))
    for name, want in reference["cases"].items():
        with tc.subTest(case=name):
            if isinstance(want, list) and want[:1] == ["error"]:
                tc.assertEqual(got[name][:2], want[:2])
                tc.assertTrue(got[name][2].startswith(want[2]), got[name][2])
            else:
                tc.assertTrue(same(got[name], want, name), (got[name], want))


def assert_compiled_equals_eager(tc, dyn, cases, encode):
    """Every case run with its functions compiled (cases' wrap) gives eager's results, bit for bit."""
    eager = {k: encode(dyn, v) for k, v in cases(dyn).items()}
    dyn.debug.reset()
    compiled = {k: encode(dyn, v) for k, v in cases(dyn, wrap=dyn.compile).items()}
    for k in eager:
        with tc.subTest(case=k):
            tc.assertEqual(compiled[k], eager[k])
