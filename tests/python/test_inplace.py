"""In-place ops (add_ sub_ mul_ div_ zero_ fill_ copy_, += -= *= /=), also through views."""
import unittest

import numpy as np

import dyn
from dyntest import assert_matches, rand_np, rng

F32, F64, I64 = dyn.float32, dyn.float64, dyn.int64


class TestInPlace(unittest.TestCase):
    def test_inplace_methods(self):
        r = rng(10)
        a = rand_np((3, 4), F32, r)
        b = rand_np((4,), F32, r, "nonzero")
        t = dyn.tensor(a)
        out = t.add_(dyn.tensor(b))
        self.assertIs(out, t)
        ref = a + b
        assert_matches(t, ref, exact=True)
        t.sub_(2.0); ref = ref - np.float32(2)
        assert_matches(t, ref, exact=True)
        t.mul_(dyn.tensor(b)); ref = ref * b
        assert_matches(t, ref, exact=True)
        t.div_(dyn.tensor(b)); ref = ref / b
        assert_matches(t, ref, exact=True)
        t.div_(3); ref = ref / np.float32(3)
        assert_matches(t, ref, exact=True)
        self.assertIs(t.fill_(3.5), t)
        assert_matches(t, np.full((3, 4), 3.5, np.float32))
        self.assertIs(t.zero_(), t)
        assert_matches(t, np.zeros((3, 4), np.float32))
        src = rand_np((4,), I64, r)
        self.assertIs(t.copy_(dyn.tensor(src)), t)  # broadcast + int -> float
        assert_matches(t, np.broadcast_to(src.astype(np.float32), (3, 4)))
        ti = dyn.tensor([1, 2, 3])
        ti.add_(2); ti.mul_(3); ti.sub_(dyn.tensor([1, 1, 1]))
        self.assertEqual(ti.tolist(), [8, 11, 14])
        self.assertTrue(ti.dtype == I64)
        ti.fill_(2.7)  # truncation into an int tensor, like torch
        self.assertEqual(ti.tolist(), [2, 2, 2])

    def test_augmented_assignment_identity_and_values(self):
        t = dyn.tensor([1.0, 2.0, 3.0])
        tid = id(t)
        t += 1
        t *= dyn.tensor([2.0, 2.0, 2.0])
        t -= 0.5
        t /= 2
        self.assertEqual(id(t), tid)
        self.assertEqual(t.tolist(), [1.75, 2.75, 3.75])
        ti = dyn.tensor([5, 6])
        ti += 1
        ti *= 2
        ti -= dyn.tensor([1, 1])
        self.assertEqual(ti.tolist(), [11, 13])
        self.assertTrue(ti.dtype == I64)

    def test_inplace_on_views_writes_base(self):
        base = dyn.zeros(3, 4)
        ref = np.zeros((3, 4), np.float32)
        row = base[1]
        row += 1; ref[1] += 1
        col = base[:, 2]
        col.add_(5); ref[:, 2] += 5
        base[0] += 2; ref[0] += 2
        base[:, 0] *= 3; ref[:, 0] *= 3
        tv = base.T
        tv.mul_(2); ref *= 2
        tv[1:3, 0:2] -= 1; ref[0:2, 1:3] -= 1
        step = base[:, ::2]
        step.sub_(dyn.tensor([10.0, 20.0])); ref[:, ::2] -= np.array([10, 20], np.float32)
        base[2, 3] /= 4; ref[2, 3] /= 4
        assert_matches(base, ref, exact=True)
        assert_matches(row, ref[1], exact=True)
        sl = base.reshape(12)[5:9]
        sl.fill_(-1.0); ref.reshape(12)[5:9] = -1
        sl.zero_(); ref.reshape(12)[5:9] = 0
        assert_matches(base, ref, exact=True)
        v = base[1:, 1:]
        v.copy_(dyn.ones(2, 3)); ref[1:, 1:] = 1
        assert_matches(base, ref, exact=True)

    def test_inplace_with_non_contiguous_source(self):
        r = rng(11)
        a = rand_np((4, 4), F64, r)
        u = dyn.tensor(a)
        u.add_(dyn.tensor(a).T)
        assert_matches(u, a + a.T, exact=True)


if __name__ == "__main__":
    unittest.main()
