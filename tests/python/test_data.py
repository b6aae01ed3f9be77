"""dyn.utils.data against torch.utils.data's documented behaviour: datasets, random_split, samplers,
default_collate / default_convert, and the DataLoader (map-style and iterable, batching, shuffling,
argument errors with PyTorch's messages, num_workers run in-process)."""
import collections
import unittest
import warnings

import numpy as np

import dyn
from dyn.utils import data as D


def rows(n, width=2):
    return dyn.arange(n * width, dtype=dyn.float32).reshape(n, width)


class Squares(D.Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * i

    def __len__(self):
        return self.n


class Stream(D.IterableDataset):
    def __init__(self, n, with_len=True):
        self.n, self.with_len = n, with_len

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        if not self.with_len:
            raise TypeError("no len")
        return self.n


class TestDatasets(unittest.TestCase):
    def test_tensor_dataset(self):
        x, y = rows(4), dyn.arange(4)
        ds = D.TensorDataset(x, y)
        self.assertEqual(len(ds), 4)
        xi, yi = ds[2]
        self.assertEqual(xi.tolist(), [4.0, 5.0])
        self.assertEqual(yi.item(), 2)
        with self.assertRaisesRegex(AssertionError, "Size mismatch between tensors"):
            D.TensorDataset(rows(4), dyn.arange(3))

    def test_concat(self):
        ds = Squares(3) + Squares(2)
        self.assertIsInstance(ds, D.ConcatDataset)
        self.assertEqual(len(ds), 5)
        self.assertEqual(ds.cumulative_sizes, [3, 5])
        self.assertEqual([ds[i] for i in range(5)], [0, 1, 4, 0, 1])
        self.assertEqual(ds[-1], 1)
        self.assertEqual(ds[-5], 0)
        with self.assertRaisesRegex(ValueError, "absolute value of index should not exceed dataset length"):
            ds[-6]
        with self.assertRaisesRegex(AssertionError, "datasets should not be an empty iterable"):
            D.ConcatDataset([])
        with self.assertRaisesRegex(AssertionError, "ConcatDataset does not support IterableDataset"):
            D.ConcatDataset([Squares(1), Stream(2)])

    def test_chain(self):
        ds = Stream(2) + Stream(3)
        self.assertIsInstance(ds, D.ChainDataset)
        self.assertEqual(list(ds), [0, 1, 0, 1, 2])
        self.assertEqual(len(ds), 5)

    def test_subset(self):
        s = D.Subset(Squares(6), [5, 0, 3])
        self.assertEqual(len(s), 3)
        self.assertEqual([s[i] for i in range(3)], [25, 0, 9])
        self.assertEqual(s.__getitems__([2, 0]), [9, 25])

    def test_base_classes_raise(self):
        with self.assertRaises(NotImplementedError):
            D.Dataset()[0]
        with self.assertRaises(NotImplementedError):
            iter(D.IterableDataset())
        with self.assertRaises(NotImplementedError):
            iter(D.Sampler())

    def test_get_worker_info(self):
        self.assertIsNone(D.get_worker_info())


class TestRandomSplit(unittest.TestCase):
    def check_partition(self, parts, n):
        got = sorted(i for p in parts for i in p.indices)
        self.assertEqual(got, list(range(n)))

    def test_lengths(self):
        parts = D.random_split(Squares(10), [3, 7])
        self.assertEqual([len(p) for p in parts], [3, 7])
        self.check_partition(parts, 10)
        self.assertEqual(parts[0][0], parts[0].indices[0] ** 2)

    def test_fractions(self):
        # floor(5 * 0.5) = 2 each; the remainder 1 goes round-robin from the first split.
        self.assertEqual([len(p) for p in D.random_split(Squares(5), [0.5, 0.5])], [3, 2])
        parts = D.random_split(Squares(10), [0.1, 0.2, 0.7])
        self.assertEqual([len(p) for p in parts], [1, 2, 7])
        self.check_partition(parts, 10)
        with self.assertWarnsRegex(UserWarning, "Length of split at index 0 is 0"):
            self.assertEqual([len(p) for p in D.random_split(Squares(3), [0.0, 1.0])], [0, 3])

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "Sum of input lengths does not equal the length of the input dataset!"):
            D.random_split(Squares(10), [3, 3])
        with self.assertRaisesRegex(ValueError, "Fraction at index 2 is not between 0 and 1"):
            D.random_split(Squares(10), [0.5, 0.7, -0.2])

    def test_reproducible(self):
        dyn.manual_seed(7)
        a = [p.indices for p in D.random_split(Squares(20), [5, 15])]
        dyn.manual_seed(7)
        b = [p.indices for p in D.random_split(Squares(20), [5, 15])]
        self.assertEqual(a, b)
        g = dyn.Generator().manual_seed(42)
        c = [p.indices for p in D.random_split(Squares(20), [5, 15], generator=g)]
        d = [p.indices for p in D.random_split(Squares(20), [5, 15], generator=dyn.Generator().manual_seed(42))]
        self.assertEqual(c, d)
        self.assertNotEqual(c[0] + c[1], list(range(20)))  # shuffled (1 in 20! it is not)


class TestSamplers(unittest.TestCase):
    def test_sequential(self):
        s = D.SequentialSampler(Squares(4))
        self.assertEqual((list(s), len(s)), ([0, 1, 2, 3], 4))

    def test_random_is_a_fresh_permutation_each_epoch(self):
        dyn.manual_seed(0)
        s = D.RandomSampler(Squares(30))
        first, second = list(s), list(s)
        self.assertEqual(sorted(first), list(range(30)))
        self.assertEqual(sorted(second), list(range(30)))
        self.assertNotEqual(first, second)
        self.assertEqual(len(s), 30)
        dyn.manual_seed(0)
        self.assertEqual(list(D.RandomSampler(Squares(30))), first)

    def test_random_with_generator(self):
        g = dyn.Generator().manual_seed(3)
        s = D.RandomSampler(Squares(30), generator=g)
        first, second = list(s), list(s)
        self.assertNotEqual(first, second)
        g.manual_seed(3)
        self.assertEqual([list(s), list(s)], [first, second])

    def test_random_num_samples(self):
        dyn.manual_seed(1)
        s = D.RandomSampler(Squares(3), num_samples=7)
        out = list(s)
        self.assertEqual(len(out), 7)
        # Two full permutations, then one more index.
        self.assertEqual(sorted(out[:3]), [0, 1, 2])
        self.assertEqual(sorted(out[3:6]), [0, 1, 2])
        self.assertIn(out[6], (0, 1, 2))

    def test_random_replacement(self):
        dyn.manual_seed(2)
        out = list(D.RandomSampler(Squares(4), replacement=True, num_samples=100))
        self.assertEqual(len(out), 100)
        self.assertTrue(set(out) <= {0, 1, 2, 3})
        self.assertEqual(set(out), {0, 1, 2, 3})  # 100 draws of 4 miss one with p < 1e-12

    def test_random_errors(self):
        with self.assertRaisesRegex(TypeError, "replacement should be a boolean value, but got replacement=1"):
            D.RandomSampler(Squares(3), replacement=1)
        with self.assertRaisesRegex(ValueError, "num_samples should be a positive integer value, but got num_samples=0"):
            D.RandomSampler(Squares(0))
        with self.assertRaisesRegex(ValueError, "num_samples should be a positive integer value, but got num_samples=-2"):
            D.RandomSampler(Squares(3), num_samples=-2)

    def test_subset_random(self):
        dyn.manual_seed(0)
        s = D.SubsetRandomSampler([10, 20, 30, 40])
        out = list(s)
        self.assertEqual(sorted(out), [10, 20, 30, 40])
        self.assertEqual(len(s), 4)

    def test_weighted(self):
        dyn.manual_seed(0)
        s = D.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 50)
        out = list(s)
        self.assertEqual(len(out), 50)
        self.assertEqual(set(out), {1, 3})  # zero weights are never drawn
        self.assertEqual(s.weights.dtype, dyn.float64)
        no_repl = list(D.WeightedRandomSampler([1.0, 2.0, 0.5, 4.0], 4, replacement=False))
        self.assertEqual(sorted(no_repl), [0, 1, 2, 3])

    def test_weighted_errors(self):
        with self.assertRaisesRegex(ValueError, "num_samples should be a positive integer value, but got num_samples=0"):
            D.WeightedRandomSampler([1.0], 0)
        with self.assertRaisesRegex(ValueError, "replacement should be a boolean value, but got replacement=0"):
            D.WeightedRandomSampler([1.0], 1, replacement=0)
        with self.assertRaisesRegex(ValueError, r"weights should be a 1d sequence but given weights have shape \(1, 2\)"):
            D.WeightedRandomSampler([[1.0, 2.0]], 1)
        with self.assertRaisesRegex(RuntimeError, "cannot sample n_sample > prob_dist.size"):
            list(D.WeightedRandomSampler([1.0, 2.0], 3, replacement=False))
        with self.assertRaisesRegex(RuntimeError, "not enough non-negative category"):
            list(D.WeightedRandomSampler([1.0, 0.0], 2, replacement=False))
        with self.assertRaisesRegex(RuntimeError, "element < 0"):
            list(D.WeightedRandomSampler([1.0, -1.0], 2))
        with self.assertRaisesRegex(RuntimeError, r"sum of probabilities <= 0"):
            list(D.WeightedRandomSampler([0.0, 0.0], 2))

    def test_batch_sampler(self):
        seq = D.SequentialSampler(Squares(7))
        b = D.BatchSampler(seq, 3, drop_last=False)
        self.assertEqual((list(b), len(b)), ([[0, 1, 2], [3, 4, 5], [6]], 3))
        b = D.BatchSampler(seq, 3, drop_last=True)
        self.assertEqual((list(b), len(b)), ([[0, 1, 2], [3, 4, 5]], 2))
        for bad in (0, -1, True, 2.0):
            with self.assertRaisesRegex(ValueError, f"batch_size should be a positive integer value, but got batch_size={bad}"):
                D.BatchSampler(seq, bad, False)
        with self.assertRaisesRegex(ValueError, "drop_last should be a boolean value, but got drop_last=1"):
            D.BatchSampler(seq, 2, 1)


Point = collections.namedtuple("Point", "x y")


class TestCollate(unittest.TestCase):
    def test_tensors_are_stacked(self):
        out = D.default_collate([dyn.tensor([1.0, 2.0]), dyn.tensor([3.0, 4.0])])
        self.assertEqual(out.shape, dyn.Size([2, 2]))
        self.assertEqual(out.tolist(), [[1.0, 2.0], [3.0, 4.0]])

    def test_numbers(self):
        ints = D.default_collate([1, 2, 3])
        self.assertEqual((ints.dtype, ints.tolist()), (dyn.int64, [1, 2, 3]))
        floats = D.default_collate([1.5, 2.0])
        self.assertEqual((floats.dtype, floats.tolist()), (dyn.float64, [1.5, 2.0]))
        bools = D.default_collate([True, False])
        self.assertEqual((bools.dtype, bools.tolist()), (dyn.bool, [True, False]))

    def test_numpy(self):
        out = D.default_collate([np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)])
        self.assertEqual((out.dtype, out.tolist()), (dyn.float32, [[1.0, 2.0], [3.0, 4.0]]))
        out = D.default_collate([np.array([1, 2], np.int32), np.array([3, 4], np.int32)])
        self.assertEqual((out.dtype, out.tolist()), (dyn.int32, [[1, 2], [3, 4]]))  # PyTorch keeps the dtype
        out = D.default_collate([np.array([1, 255], np.uint8), np.float16(1.5) * np.ones(2, np.float16)])
        self.assertEqual((out.dtype, out.tolist()), (dyn.float16, [[1.0, 255.0], [1.5, 1.5]]))
        out = D.default_collate([np.array([7], np.uint8)] * 2)
        self.assertEqual(out.dtype, dyn.uint8)
        out = D.default_collate([np.float64(0.5), np.float64(1.5)])
        self.assertEqual((out.dtype, out.tolist()), (dyn.float64, [0.5, 1.5]))
        with self.assertRaisesRegex(TypeError, "default_collate: batch must contain tensors, numpy arrays, numbers"):
            D.default_collate([np.array(["a"]), np.array(["b"])])

    def test_strings_stay_lists(self):
        self.assertEqual(D.default_collate(["a", "b"]), ["a", "b"])

    def test_containers(self):
        batch = [{"x": dyn.tensor([1.0]), "label": 0, "name": "a"}, {"x": dyn.tensor([2.0]), "label": 1, "name": "b"}]
        out = D.default_collate(batch)
        self.assertEqual(list(out), ["x", "label", "name"])
        self.assertEqual(out["x"].tolist(), [[1.0], [2.0]])
        self.assertEqual(out["label"].tolist(), [0, 1])
        self.assertEqual(out["name"], ["a", "b"])
        od = D.default_collate([collections.OrderedDict(a=1), collections.OrderedDict(a=2)])
        self.assertIsInstance(od, collections.OrderedDict)
        self.assertEqual(od["a"].tolist(), [1, 2])

    def test_tuples_become_lists_namedtuples_stay(self):
        out = D.default_collate([(1, 2.0), (3, 4.0)])
        self.assertIsInstance(out, list)
        self.assertEqual([out[0].tolist(), out[1].tolist()], [[1, 3], [2.0, 4.0]])
        p = D.default_collate([Point(1, 2), Point(3, 4)])
        self.assertIsInstance(p, Point)
        self.assertEqual((p.x.tolist(), p.y.tolist()), ([1, 3], [2, 4]))
        nested = D.default_collate([[(1, "u")], [(2, "v")]])
        self.assertEqual((nested[0][0].tolist(), nested[0][1]), ([1, 2], ["u", "v"]))

    def test_errors(self):
        with self.assertRaisesRegex(RuntimeError, "each element in list of batch should be of equal size"):
            D.default_collate([[1, 2], [3]])
        with self.assertRaisesRegex(TypeError, "batch must contain tensors, numpy arrays, numbers, dicts or lists; found <class 'NoneType'>"):
            D.default_collate([None, None])

    def test_default_convert(self):
        out = D.default_convert({"a": np.array([1.0, 2.0]), "b": 3, "c": (np.int64(4), "s")})
        self.assertEqual((out["a"].dtype, out["a"].tolist()), (dyn.float64, [1.0, 2.0]))
        self.assertEqual(out["b"], 3)  # Python numbers are left alone
        self.assertEqual((out["c"][0].item(), out["c"][1]), (4, "s"))
        arr = np.array([1.0, 2.0])
        t = D.default_convert(arr)
        arr[0] = 9.0
        self.assertEqual(t.tolist(), [9.0, 2.0])  # shares memory, as torch.as_tensor


class TestDataLoader(unittest.TestCase):
    def setUp(self):
        self.ds = D.TensorDataset(rows(5), dyn.arange(5))

    def test_batches(self):
        loader = D.DataLoader(self.ds, batch_size=2)
        batches = list(loader)
        self.assertEqual(len(loader), 3)
        self.assertEqual([b[1].tolist() for b in batches], [[0, 1], [2, 3], [4]])
        self.assertEqual(batches[0][0].shape, dyn.Size([2, 2]))
        self.assertEqual(batches[2][0].tolist(), [[8.0, 9.0]])
        it = iter(loader)
        self.assertEqual(len(it), 3)

    def test_drop_last(self):
        loader = D.DataLoader(self.ds, batch_size=2, drop_last=True)
        self.assertEqual(len(loader), 2)
        self.assertEqual([b[1].tolist() for b in loader], [[0, 1], [2, 3]])

    def test_default_batch_size_is_one(self):
        out = [b for b in D.DataLoader(Squares(3))]
        self.assertEqual([(b.dtype, b.tolist()) for b in out], [(dyn.int64, [0]), (dyn.int64, [1]), (dyn.int64, [4])])

    def test_shuffle(self):
        dyn.manual_seed(5)
        loader = D.DataLoader(Squares(10), batch_size=4, shuffle=True)
        epoch1 = [i for b in loader for i in b.tolist()]
        epoch2 = [i for b in loader for i in b.tolist()]
        self.assertEqual(sorted(epoch1), sorted(i * i for i in range(10)))
        self.assertNotEqual(epoch1, epoch2)
        dyn.manual_seed(5)
        self.assertEqual([i for b in loader for i in b.tolist()], epoch1)
        self.assertIsInstance(loader.sampler, D.RandomSampler)

    def test_shuffle_with_generator(self):
        g = dyn.Generator().manual_seed(11)
        loader = D.DataLoader(Squares(10), batch_size=3, shuffle=True, generator=g)
        a = [b.tolist() for b in loader]
        g.manual_seed(11)
        self.assertEqual([b.tolist() for b in loader], a)

    def test_no_batching(self):
        loader = D.DataLoader([np.array([1.0, 2.0]), np.array([3.0, 4.0])], batch_size=None)
        out = list(loader)
        self.assertEqual(len(loader), 2)
        self.assertIsInstance(out[0], dyn.Tensor)  # default_convert: numpy arrays become tensors
        self.assertEqual([o.tolist() for o in out], [[1.0, 2.0], [3.0, 4.0]])

    def test_sampler_batch_sampler_collate_fn(self):
        loader = D.DataLoader(Squares(5), sampler=[4, 0, 2], batch_size=2)
        self.assertEqual([b.tolist() for b in loader], [[16, 0], [4]])
        loader = D.DataLoader(Squares(5), batch_sampler=[[1, 2], [4]])
        self.assertEqual([b.tolist() for b in loader], [[1, 4], [16]])
        self.assertIsNone(loader.batch_size)
        loader = D.DataLoader(Squares(4), batch_size=2, collate_fn=lambda b: sum(b))
        self.assertEqual(list(loader), [1, 13])

    def test_dataset_getitems_is_used(self):
        class Batched(Squares):
            def __getitems__(self, indices):
                return [-i for i in indices]

        self.assertEqual([b.tolist() for b in D.DataLoader(Batched(3), batch_size=2)], [[0, -1], [-2]])

    def test_iterable_dataset(self):
        loader = D.DataLoader(Stream(5), batch_size=2)
        self.assertEqual([b.tolist() for b in loader], [[0, 1], [2, 3], [4]])
        self.assertEqual(len(loader), 3)
        loader = D.DataLoader(Stream(5), batch_size=2, drop_last=True)
        self.assertEqual([b.tolist() for b in loader], [[0, 1], [2, 3]])
        self.assertEqual(len(loader), 2)
        self.assertEqual(list(D.DataLoader(Stream(3), batch_size=None)), [0, 1, 2])
        self.assertEqual([b.tolist() for b in D.DataLoader(Stream(4, with_len=False), batch_size=4)], [[0, 1, 2, 3]])
        with self.assertRaises(TypeError):
            len(D.DataLoader(Stream(4, with_len=False)))

    def test_errors(self):
        cases = [
            (dict(batch_size=0), "batch_size should be a positive integer value, but got batch_size=0"),
            (dict(sampler=[0, 1], shuffle=True), "sampler option is mutually exclusive with shuffle"),
            (dict(batch_sampler=[[0]], batch_size=2),
             "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"),
            (dict(batch_sampler=[[0]], drop_last=True), "batch_sampler option is mutually exclusive"),
            (dict(batch_size=None, drop_last=True),
             "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"),
            (dict(num_workers=-1), "num_workers option should be non-negative"),
            (dict(timeout=-1), "timeout option should be non-negative"),
            (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
            (dict(prefetch_factor=2), "prefetch_factor option could only be specified in multiprocessing"),
        ]
        for kwargs, msg in cases:
            with self.subTest(kwargs=kwargs):
                with self.assertRaisesRegex(ValueError, msg):
                    D.DataLoader(self.ds, **kwargs)
        for name, value in (("shuffle", True), ("sampler", [0]), ("batch_sampler", [[0]])):
            with self.assertRaisesRegex(
                ValueError, f"DataLoader with IterableDataset: expected unspecified {name} option, but got {name}="
            ):
                D.DataLoader(Stream(3), **{name: value})

    def test_attributes_frozen_after_init(self):
        loader = D.DataLoader(self.ds, batch_size=2)
        with self.assertRaisesRegex(ValueError, "batch_size attribute should not be set after DataLoader is initialized"):
            loader.batch_size = 3
        loader.num_workers = 0  # not one of the frozen attributes

    def test_num_workers_runs_in_process_and_warns_once(self):
        D._warned_about_workers = False
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            a = D.DataLoader(self.ds, batch_size=2, num_workers=2, pin_memory=True, persistent_workers=True,
                             worker_init_fn=lambda i: None, prefetch_factor=2)
            D.DataLoader(self.ds, batch_size=2, num_workers=4)
        msgs = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        self.assertEqual(len(msgs), 1)
        self.assertIn("num_workers=2", msgs[0])
        self.assertIn("main process", msgs[0])
        self.assertEqual([b[1].tolist() for b in a], [[0, 1], [2, 3], [4]])

    def test_training_loop_sees_every_sample_once_per_epoch(self):
        x = dyn.arange(12, dtype=dyn.float64).reshape(6, 2)
        y = dyn.arange(6, dtype=dyn.float64)
        loader = D.DataLoader(D.TensorDataset(x, y), batch_size=4, shuffle=True)
        for _ in range(2):
            seen = []
            for xb, yb in loader:
                self.assertEqual(xb.shape[1], 2)
                self.assertEqual((xb[:, 0] / 2).tolist(), yb.tolist())  # rows stay paired with their labels
                seen += yb.tolist()
            self.assertEqual(sorted(seen), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])


if __name__ == "__main__":
    unittest.main()
