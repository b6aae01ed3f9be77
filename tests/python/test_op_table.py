"""The op table (core/ops/ops.def) and what Python makes of it: every name a row promises exists,
and the ops added through the table alone (erf, log1p, expm1, atan2; erfc and the trigonometric
and hyperbolic family) work eagerly, in place, compiled and under autograd, with the values of the
C library's functions.
"""
import math
import unittest

import numpy as np

import _dyn
import dyn
from compiletest import same_bits
from test_autograd_ops import gradcheck, rnd

ROWS = _dyn._op_table()
UNARY = {"erf": math.erf, "log1p": math.log1p, "expm1": math.expm1}
# Values where the functions' cancellation-free forms matter (log1p, expm1 near 0) and edges.
EDGE = [0.0, -0.0, 1e-12, -1e-12, 1e-5, 0.5, -0.5, 2.0, -3.0, 20.0, float("inf"), float("-inf"), float("nan")]


def _math(f, x):
    try:
        return f(x)
    except (ValueError, OverflowError):  # math raises where C returns nan/inf/-inf
        return float("nan") if x < -1 else float("-inf")


class TestPythonSurface(unittest.TestCase):
    def test_every_flagged_name_exists(self):
        self.assertGreater(len(ROWS), 60)
        missing = []
        for r in ROWS:
            flags = r["python"]
            if "F" in flags and not hasattr(dyn, r["name"]):
                missing.append(f"dyn.{r['name']}")
            if "M" in flags and not hasattr(dyn.Tensor, r["name"]):
                missing.append(f"Tensor.{r['name']}")
            if "I" in flags and not hasattr(dyn.Tensor, r["name"] + "_"):
                missing.append(f"Tensor.{r['name']}_")
        self.assertEqual(missing, [], "rows of ops.def promise these names; bind them in python/")

    def test_rows_are_well_formed(self):
        names = [r["name"] for r in ROWS]
        self.assertEqual(len(names), len(set(names)))
        for r in ROWS:
            with self.subTest(op=r["name"]):
                self.assertTrue(set(r["python"]) <= set("FMI|0"), r["python"])
                if r["formula"] == "unary":
                    self.assertEqual((r["inputs"], r["outputs"]), (1, 1))
                if r["formula"] == "binary":
                    self.assertEqual((r["inputs"], r["outputs"]), (2, 1))

    def test_four_new_ops_are_in_the_table(self):
        by = {r["name"]: r for r in ROWS}
        for n in ("erf", "log1p", "expm1", "atan2"):
            self.assertEqual(by[n]["python"], "F|M|I")
            self.assertTrue(by[n]["differentiable"])
            self.assertEqual(by[n]["dtype"], "floating" if n != "atan2" else "to_float")


class TestNewOps(unittest.TestCase):
    def test_float64_values_within_the_vector_librarys_bound(self):
        # SLEEF's functions are within 1 ULP of the true value, as is the C library's that
        # Python's math uses: the two agree to 2 ULP, and exactly on zeros, infinities and NaN.
        x = dyn.tensor(EDGE, dtype=dyn.float64)
        for name, f in UNARY.items():
            with self.subTest(op=name):
                got = getattr(x, name)().tolist()
                for xi, gi in zip(EDGE, got):
                    want = _math(f, xi)
                    if math.isnan(want):
                        self.assertTrue(math.isnan(gi), f"{name}({xi}) = {gi}")
                    else:
                        if math.isinf(want) or want == 0:
                            self.assertEqual(gi, want, f"{name}({xi})")
                        else:
                            self.assertLessEqual(abs(gi - want), 2 * math.ulp(want), f"{name}({xi}) = {gi}, not {want}")
                        self.assertEqual(math.copysign(1, gi), math.copysign(1, want), f"{name}({xi}) sign")

    def test_float32_close_to_float64_truth(self):
        a = np.random.default_rng(0).uniform(-0.99, 4, 1000).astype(np.float32)
        x = dyn.tensor(a)
        for name, f in UNARY.items():
            with self.subTest(op=name):
                got = getattr(dyn, name)(x).numpy()
                self.assertEqual(got.dtype, np.float32)
                want = np.array([f(float(v)) for v in a])
                np.testing.assert_allclose(got, want, rtol=2e-7, atol=1e-37)

    def test_atan2_values_and_broadcasting(self):
        a = np.array([[0.0, -0.0, 1.0, -1.0, 3.0]])
        b = np.array([[0.0], [-0.0], [2.0], [-2.0], [float("inf")]])
        got = dyn.atan2(dyn.tensor(a), dyn.tensor(b)).numpy()
        want = np.array([[math.atan2(x, y) for x in a[0]] for y in b[:, 0]])
        self.assertEqual(got.shape, (5, 5))
        self.assertTrue(np.array_equal(np.signbit(got), np.signbit(want)))
        self.assertTrue(np.array_equal(got, want))
        # Python number on the right, as the other binary ops take it
        self.assertEqual(dyn.tensor([1.0], dtype=dyn.float64).atan2(1.0).item(), math.atan2(1.0, 1.0))

    def test_integers_become_the_default_float(self):
        i = dyn.tensor([0, 1, 2])
        for name in UNARY:
            self.assertEqual(getattr(i, name)().dtype, dyn.float32, name)
        self.assertEqual(dyn.atan2(i, i).dtype, dyn.float32)
        dyn.set_default_dtype(dyn.float64)
        try:
            self.assertEqual(i.erf().dtype, dyn.float64)
        finally:
            dyn.set_default_dtype(dyn.float32)
        with self.assertRaisesRegex(RuntimeError, "result type Float can't be cast to the desired output type Long"):
            dyn.tensor([1, 2]).log1p_()

    def test_in_place_equals_out_of_place(self):
        a = rnd((3, 4), 1, "positive")
        for name in list(UNARY) + ["atan2"]:
            with self.subTest(op=name):
                x = dyn.tensor(a)
                args = (dyn.tensor(a[::-1].copy()),) if name == "atan2" else ()
                want = getattr(x, name)(*args)
                view = x.T  # in place through a strided view writes the base
                r = getattr(view, name + "_")(*(t.T for t in args))
                self.assertIs(r, view)
                self.assertTrue(same_bits(x, want))

    def test_compiled_equals_eager_bitwise(self):
        def f(x, y):
            return x.erf() * 2 + x.log1p() - y.expm1() + dyn.atan2(x, y) + x.clone().expm1_()

        g = dyn.compile(f)
        for seed in range(3):
            x = dyn.tensor(rnd((5, 7), seed, "positive").astype(np.float32))
            y = dyn.tensor(rnd((7,), seed + 10).astype(np.float32))
            self.assertTrue(same_bits(g(x, y), f(x, y)))
        ops = dyn.debug.graphs()[-1].ops
        for name in ("erf", "log1p", "expm1", "atan2", "expm1_"):
            self.assertIn(name, ops)

    def test_derivatives(self):
        gradcheck(self, lambda x: x.erf(), [rnd((3, 4), 2)], ["transposed"], msg="erf")
        gradcheck(self, lambda x: x.log1p(), [rnd((3, 4), 3, "positive")], msg="log1p")
        gradcheck(self, lambda x: x.expm1(), [rnd((3, 4), 4)], msg="expm1")
        gradcheck(self, lambda x, y: dyn.atan2(x, y), [rnd((3, 4), 5), rnd((4,), 6, "away")], msg="atan2")
        gradcheck(self, lambda x: dyn.atan2(x, 2.0), [rnd((3,), 7)], msg="atan2 scalar")
        x = dyn.tensor([0.5], requires_grad=True)
        self.assertEqual(x.expm1().grad_fn.name(), "Expm1Backward0")
        self.assertEqual(dyn.atan2(x, x).grad_fn.name(), "Atan2Backward0")



# The inverse and hyperbolic family and erfc, against numpy's float64 functions (the C library's).
FAMILY = {"tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
          "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
          "erfc": np.vectorize(math.erfc, otypes=[np.float64])}
FAMILY_EDGE = [0.0, -0.0, 1e-300, -1e-12, 1e-5, 0.5, -0.5, 0.999, -1.0, 1.0, 1.5, 2.0, -3.0, 20.0, 700.0,
               float("inf"), float("-inf"), float("nan")]
# Where each is defined, for random values and gradients.
DOMAIN = {"asin": (-0.95, 0.95), "acos": (-0.95, 0.95), "atanh": (-0.95, 0.95), "acosh": (1.05, 6.0),
          "tan": (-1.4, 1.4), "sinh": (-5, 5), "cosh": (-5, 5)}


class TestTrigonometricFamily(unittest.TestCase):
    def values(self, name, n, seed, dtype=np.float64):
        lo, hi = DOMAIN.get(name, (-4.0, 4.0))
        return np.random.default_rng(seed).uniform(lo, hi, n).astype(dtype)

    def test_rows(self):
        by = {r["name"]: r for r in ROWS}
        for n in FAMILY:
            self.assertEqual((by[n]["python"], by[n]["dtype"], by[n]["differentiable"]), ("F|M|I", "floating", True))

    def test_float64_within_three_ulp_of_the_c_library(self):
        # SLEEF within 1 ULP (erfc 1.5), the C library within 1: they agree to 3 ULP, and exactly
        # on zeros (with their sign), infinities and NaN (outside the domain: asin(2), acosh(0.5)).
        with np.errstate(all="ignore"):
            for name, f in FAMILY.items():
                with self.subTest(op=name):
                    got = getattr(dyn, name)(dyn.tensor(FAMILY_EDGE, dtype=dyn.float64)).numpy()
                    want = f(np.array(FAMILY_EDGE))
                    exact = ~np.isfinite(want) | (want == 0)
                    np.testing.assert_array_equal(got[exact], want[exact])
                    np.testing.assert_array_equal(np.signbit(got[exact & ~np.isnan(want)]),
                                                  np.signbit(want[exact & ~np.isnan(want)]))
                    fin = ~exact
                    ulp = np.spacing(np.abs(want[fin]))
                    self.assertTrue((np.abs(got[fin] - want[fin]) <= 3 * ulp).all(),
                                    f"{name}: {got[fin]} vs {want[fin]}")
                    x = self.values(name, 500, 1)
                    got = getattr(dyn.tensor(x), name)().numpy()
                    np.testing.assert_allclose(got, f(x), rtol=4 * np.finfo(np.float64).eps, atol=0)

    def test_large_arguments_stay_finite_where_the_result_is(self):
        # SLEEF's sinh/cosh overflow past |x| = 88.5 (float) / 709 (double) and asinh/acosh past
        # 1.8e19 / 1.3e154, before the results do; PyTorch 2.15 gives the finite values.
        for dtype, npt, xs in ((dyn.float32, np.float32, [88.2, 89.0, -89.0, 1e18, 2e19, -3e25, 1e38]),
                               (dyn.float64, np.float64, [708.0, 710.0, -710.0, 1e150, 2e154, -1e300])):
            for name, f in (("sinh", np.sinh), ("cosh", np.cosh), ("asinh", np.arcsinh), ("acosh", np.arccosh)):
                with self.subTest(op=name, dtype=str(dtype)), np.errstate(all="ignore"):
                    x = np.array(xs, dtype=npt)
                    got = getattr(dyn, name)(dyn.tensor(x, dtype=dtype)).numpy()
                    want = f(x.astype(np.float64)).astype(npt)
                    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want), f"{name}{list(x)}: {got}")
                    fin = np.isfinite(want)
                    self.assertTrue((np.abs(got[fin] - want[fin]) <= 4 * np.spacing(np.abs(want[fin]))).all(),
                                    f"{name}: {got} vs {want}")
                    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))

    def test_float32_close_to_float64_truth(self):
        for name, f in FAMILY.items():
            with self.subTest(op=name):
                x = self.values(name, 1000, 2, np.float32)
                got = getattr(dyn, name)(dyn.tensor(x)).numpy()
                self.assertEqual(got.dtype, np.float32)
                np.testing.assert_allclose(got, f(x.astype(np.float64)), rtol=3e-7, atol=1e-37)

    def test_integers_promote_in_place_and_views(self):
        i = dyn.tensor([1, 2])
        for name in FAMILY:
            with self.subTest(op=name):
                self.assertEqual(getattr(i, name)().dtype, dyn.float32)
                with self.assertRaisesRegex(RuntimeError, "can't be cast to the desired output type Long"):
                    getattr(dyn.tensor([1, 2]), name + "_")()
                a = self.values(name, 12, 3).reshape(3, 4)
                x = dyn.tensor(a)
                want = getattr(x, name)()
                view = x.T
                self.assertIs(getattr(view, name + "_")(), view)
                self.assertTrue(same_bits(x, want))

    def test_compiled_equals_eager_bitwise(self):
        # each alone, and fused into one loop with other elementwise ops
        def f(x, y):
            return (x.tan() + y.atan() * x.sinh() - x.cosh().asinh() + y.erfc() + (x * 0.5).asin().acos()
                    + (y.abs() + 1.5).acosh() + (x * 0.3).atanh())

        g = dyn.compile(f)
        for seed in range(3):
            x = dyn.tensor(np.random.default_rng(seed).uniform(-1, 1, (5, 7)).astype(np.float32))
            y = dyn.tensor(np.random.default_rng(seed + 9).uniform(-3, 3, 7).astype(np.float32))
            self.assertTrue(same_bits(g(x, y), f(x, y)))
        ops = set(dyn.debug.graphs()[-1].ops)
        self.assertLessEqual(set(FAMILY), ops)

    def test_derivatives(self):
        for name in FAMILY:
            with self.subTest(op=name):
                x = self.values(name, 12, 4).reshape(3, 4)
                gradcheck(self, lambda t, n=name: getattr(t, n)(), [x], ["transposed"], msg=name)
                t = dyn.tensor([0.5], requires_grad=True) if name != "acosh" else dyn.tensor([1.5], requires_grad=True)
                self.assertEqual(getattr(t, name)().grad_fn.name(), name.capitalize() + "Backward0")



class TestFmodHypotLogaddexpDiv(unittest.TestCase):
    """Values recorded from PyTorch 2.15 (CPU) on the same inputs."""

    A = [5.5, -5.5, 5.5, -5.5, 0.0, -0.0, 1e30, 3.0]
    B = [2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 7.0, 0.0]

    def test_fmod(self):
        got = dyn.fmod(dyn.tensor(self.A, dtype=dyn.float64), dyn.tensor(self.B, dtype=dyn.float64)).numpy()
        want = np.array([1.5, -1.5, 1.5, -1.5, 0.0, -0.0, 5.0, np.nan])
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got[:-1]), np.signbit(want[:-1]))  # zeros keep the dividend's sign
        i64 = dyn.tensor([5, -5, 5, -5, -9223372036854775808])
        self.assertEqual(dyn.fmod(i64, dyn.tensor([3, 3, -3, -3, -1])).tolist(), [2, -2, 2, -2, 0])
        self.assertEqual(dyn.tensor([5, -5]).fmod(3).tolist(), [2, -2])
        self.assertEqual(dyn.tensor([5.5]).fmod(2).tolist(), [1.5])
        with self.assertRaisesRegex(RuntimeError, "ZeroDivisionError"):
            dyn.fmod(dyn.tensor([1]), 0)
        with self.assertRaisesRegex(RuntimeError, "ZeroDivisionError"):
            dyn.fmod(dyn.tensor([1]), dyn.tensor([0]))
        x = dyn.tensor([7.5, -7.5])
        self.assertIs(x.fmod_(2.0), x)
        self.assertEqual(x.tolist(), [1.5, -1.5])

    def test_hypot_and_logaddexp(self):
        a, b = dyn.tensor(self.A, dtype=dyn.float64), dyn.tensor(self.B, dtype=dyn.float64)
        self.assertEqual(dyn.hypot(a, b).tolist(), [5.852349955359813] * 4 + [3.0, 3.0, 1e30, 3.0])
        x = dyn.tensor([1.0, -1000.0, math.inf, -math.inf, math.inf, 0.5], dtype=dyn.float64)
        y = dyn.tensor([2.0, -1001.0, math.inf, -math.inf, 1.0, math.nan], dtype=dyn.float64)
        got = dyn.logaddexp(x, y).tolist()
        self.assertEqual(got[:5], [2.313261687518223, -999.6867383124818, math.inf, -math.inf, math.inf])
        self.assertTrue(math.isnan(got[5]))
        self.assertEqual(x.logaddexp(y).tolist()[:5], got[:5])
        self.assertEqual(dyn.tensor([1, 2]).hypot(dyn.tensor([1, 2])).dtype, dyn.float32)

    def test_div_rounding_modes(self):
        f = dyn.tensor([7.0, -7.0, 7.5, -7.5])
        g = dyn.tensor([2.0, 2.0, -2.0, 2.0])
        i = dyn.tensor([7, -7, 100000001, -9])
        j = dyn.tensor([2, 2, 1, 4])
        self.assertEqual(dyn.div(f, g, rounding_mode="trunc").tolist(), [3.0, -3.0, -3.0, -3.0])
        self.assertEqual(dyn.div(f, g, rounding_mode="floor").tolist(), [3.0, -4.0, -4.0, -4.0])
        # integers exactly, past float32's 2**24
        self.assertEqual(dyn.div(i, j, rounding_mode="trunc").tolist(), [3, -3, 100000001, -2])
        self.assertEqual(i.div(j, rounding_mode="floor").tolist(), [3, -4, 100000001, -3])
        self.assertEqual(i.divide(j, rounding_mode="trunc").dtype, dyn.int64)
        self.assertTrue(same_bits(f.div(g), f / g))
        self.assertEqual(dyn.div(7, dyn.tensor([2]), rounding_mode="floor").tolist(), [3])
        with self.assertRaisesRegex(RuntimeError, "div expected rounding_mode to be one of None, 'trunc', or "
                                                  "'floor' but found 'x'"):
            dyn.div(f, 2, rounding_mode="x")
        # a rounded quotient is a step function: zero gradients, as PyTorch's
        x = dyn.tensor([7.5, -7.5], requires_grad=True)
        y = dyn.tensor([2.0, 2.0], requires_grad=True)
        r = dyn.div(x, y, rounding_mode="floor")
        self.assertEqual(r.tolist(), [3.0, -4.0])
        r.sum().backward()
        self.assertEqual((x.grad.tolist(), y.grad.tolist()), ([0.0, 0.0], [0.0, 0.0]))
        t = dyn.tensor([7, -7])
        self.assertIs(t.div_(2, rounding_mode="trunc"), t)
        self.assertEqual(t.tolist(), [3, -3])
        with self.assertRaisesRegex(RuntimeError, "result type Float can't be cast to the desired output type Long"):
            dyn.tensor([7]).div_(2.5, rounding_mode="floor")

    def test_compiled_equals_eager_and_derivatives(self):
        def f(x, y):
            return (dyn.fmod(x, y) + dyn.hypot(x, y) * dyn.logaddexp(x, y) + x.div(y, rounding_mode="trunc")
                    + x.fmod(1.5))

        g = dyn.compile(f)
        for seed in range(3):
            x = dyn.tensor(rnd((4, 5), seed).astype(np.float32))
            y = dyn.tensor(rnd((5,), seed + 5, "away").astype(np.float32))
            self.assertTrue(same_bits(g(x, y), f(x, y)))
        self.assertLessEqual({"fmod", "hypot", "logaddexp"}, set(dyn.debug.graphs()[-1].ops))
        gradcheck(self, lambda x, y: dyn.fmod(x, y), [rnd((3, 4), 1), rnd((4,), 2, "away")], msg="fmod")
        gradcheck(self, lambda x, y: dyn.hypot(x, y), [rnd((3, 4), 3, "away"), rnd((4,), 4)], msg="hypot")
        gradcheck(self, lambda x, y: dyn.logaddexp(x, y), [rnd((3, 4), 5), rnd((4,), 6)], msg="logaddexp")
        # PyTorch 2.15: fmod(t, u) * [1, 2] summed: t.grad [1, 2], u.grad [-2, 0]
        t = dyn.tensor([5.5, -3.0], requires_grad=True)
        u = dyn.tensor([2.0, 4.0], requires_grad=True)
        (dyn.fmod(t, u) * dyn.tensor([1.0, 2.0])).sum().backward()
        self.assertEqual((t.grad.tolist(), u.grad.tolist()), ([1.0, 2.0], [-2.0, 0.0]))



class TestBitwise(unittest.TestCase):
    """&, |, ^, ~ and the bitwise_* functions on integers (bools stay logical), as PyTorch 2.15."""

    def test_values_as_pytorch(self):
        a, b = dyn.tensor([12, -7, 5, 0]), dyn.tensor([10, 3, -1, 9])
        self.assertEqual([(a & b).tolist(), (a | b).tolist(), (a ^ b).tolist(), (~a).tolist()],
                         [[8, 1, 5, 0], [14, -5, -1, 9], [6, -6, -6, 9], [-13, 6, -6, -1]])
        self.assertEqual([dyn.bitwise_and(a, b).tolist(), a.bitwise_or(6).tolist(), (a ^ 3).tolist(),
                          (3 & a).tolist(), dyn.bitwise_not(a).tolist()],
                         [[8, 1, 5, 0], [14, -1, 7, 6], [15, -6, 6, 3], [0, 1, 1, 0], [-13, 6, -6, -1]])
        m = dyn.tensor([True, False, True, False])
        self.assertEqual(((m & a).tolist(), (m & a).dtype), ([0, 0, 1, 0], dyn.int64))
        self.assertEqual([(~m).tolist(), (m ^ True).tolist(), dyn.bitwise_not(m).tolist()],
                         [[False, True, False, True]] * 3)
        self.assertEqual(m.bitwise_and(m).dtype, dyn.bool)
        c = a.clone()
        self.assertIs(c.bitwise_and_(b), c)
        self.assertEqual(c.tolist(), [8, 1, 5, 0])

    def test_floats_rejected_as_pytorch(self):
        for call, kind, msg in [(lambda: dyn.ones(2) & dyn.ones(2), NotImplementedError,
                                 "\"bitwise_and_cpu\" not implemented for 'Float'"),
                                (lambda: dyn.ones(2, dtype=dyn.float64) | 1, NotImplementedError,
                                 "\"bitwise_or_cpu\" not implemented for 'Double'"),
                                (lambda: ~dyn.ones(2), TypeError,
                                 "only implemented on integer and Boolean-type tensors")]:
            with self.assertRaises(kind) as cm:
                call()
            self.assertIn(msg, str(cm.exception))

    def test_compiled_equals_eager(self):
        def f(a, b, m):
            return (a & b) | (~a ^ 5), m & (a > 0), ~m

        g = dyn.compile(f)
        for seed in range(2):
            dyn.manual_seed(seed)
            a, b = dyn.randint(-50, 50, (4, 5)), dyn.randint(-50, 50, (5,))
            m = dyn.rand(4, 5) > 0.5
            for x, y in zip(f(a, b, m), g(a, b, m)):
                self.assertTrue(same_bits(x, y))


if __name__ == "__main__":
    unittest.main()
