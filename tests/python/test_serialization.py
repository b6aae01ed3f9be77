"""dyn.serialization.save / load against PyTorch's zip format (torch.save / torch.load): round trips of
every dtype and layout, shared storages, Parameters and state dicts; the archive byte by byte; files
laid out as PyTorch writes them (hand-assembled pickle opcodes); weights_only, map_location, bad files."""
import collections
import io
import os
import pathlib
import pickle
import pickletools
import struct
import tempfile
import unittest
import zipfile

import numpy as np

import dyn
from dyn import serialization

save, load = serialization.save, serialization.load


def roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf, **load_kwargs)


def saved_bytes(obj):
    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


class Box:  # a user class: refused by weights_only=True
    def __init__(self, v):
        self.v = v


# ---- files as PyTorch writes them, assembled from pickle opcodes (no dyn code involved) ----


def op_global(module, name):
    return b"c" + f"{module}\n{name}\n".encode()


def op_str(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def op_int(i):
    return b"J" + struct.pack("<i", i)


def op_tuple(*items):
    return b"(" + b"".join(items) + b"t"


def op_storage(cls, key, numel, location="cpu"):
    return op_tuple(op_str("storage"), op_global("torch", cls), op_str(key), op_str(location), op_int(numel)) + b"Q"


def op_ordered_dict(*pairs):
    body = b"".join(op_str(k) + v for k, v in pairs)
    return op_global("collections", "OrderedDict") + b")R" + (b"(" + body + b"u" if pairs else b"")


def op_tensor(storage, offset, size, stride, requires_grad=False):
    args = op_tuple(storage, op_int(offset), op_tuple(*map(op_int, size)), op_tuple(*map(op_int, stride)),
                    b"\x88" if requires_grad else b"\x89", op_ordered_dict())
    return op_global("torch._utils", "_rebuild_tensor_v2") + args + b"R"


def torch_file(program, storages, name="archive", byteorder="little", extra=()):
    """A zip laid out as PyTorch 2.x writes it: data.pkl, .format_version, .storage_alignment, byteorder,
    data/<key>..., version, .data/serialization_id."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{name}/data.pkl", b"\x80\x02" + program + b".")
        z.writestr(f"{name}/.format_version", "1")
        z.writestr(f"{name}/.storage_alignment", "64")
        if byteorder is not None:
            z.writestr(f"{name}/byteorder", byteorder)
        for key, data in storages.items():
            z.writestr(f"{name}/data/{key}", data)
        z.writestr(f"{name}/version", "3\n")
        z.writestr(f"{name}/.data/serialization_id", "0123456789")
        for record, data in extra:
            z.writestr(f"{name}/{record}", data)
    buf.seek(0)
    return buf


class TestRoundTrip(unittest.TestCase):
    def check_same(self, a, b):
        self.assertIsInstance(b, dyn.Tensor)
        self.assertEqual(b.dtype, a.dtype)
        self.assertEqual(b.shape, a.shape)
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy())

    def test_each_dtype(self):
        for t in (dyn.tensor([1.5, -2.25, 3.0]), dyn.tensor([0.1, 1e300], dtype=dyn.float64),
                  dyn.tensor([-(2**62), 0, 2**62 + 7]), dyn.tensor([True, False, True])):
            with self.subTest(dtype=t.dtype):
                self.check_same(t, roundtrip(t))

    def test_zero_dim_and_empty(self):
        for t in (dyn.tensor(3.5), dyn.tensor(7), dyn.tensor(False), dyn.zeros(0), dyn.zeros(2, 0, 3),
                  dyn.zeros(0, dtype=dyn.int64)):
            with self.subTest(shape=tuple(t.shape), dtype=t.dtype):
                self.check_same(t, roundtrip(t))

    def test_non_contiguous(self):
        base = dyn.arange(24, dtype=dyn.float32).reshape(2, 3, 4)
        views = {
            "transposed": base.transpose(0, 2),
            "sliced": base[1, 1:, ::2],
            "permuted": base.permute(2, 0, 1),
            "expanded": dyn.tensor([[1.0], [2.0]]).expand(2, 5),
            "negative stride": dyn.from_numpy(np.arange(6.0)[::-1]),
        }
        for name, v in views.items():
            with self.subTest(name):
                self.check_same(v, roundtrip(v))

    def test_nested_containers(self):
        t = dyn.tensor([1.0, 2.0])
        obj = {
            "list": [t, 1, 2.5, "s", None, True, b"bytes"],
            "tuple": (dyn.tensor([3]), ("deep", [dyn.tensor(True)])),
            "ordered": collections.OrderedDict([("z", 1), ("a", 2)]),
            "size": dyn.Size([2, 3]),
            "dtype": dyn.int64,
            "set": {1, 2},
            "complex": 1 + 2j,
        }
        out = roundtrip(obj)
        self.assertEqual(list(out), list(obj))
        self.check_same(t, out["list"][0])
        self.assertEqual(out["list"][1:], [1, 2.5, "s", None, True, b"bytes"])
        self.assertEqual(out["tuple"][0].tolist(), [3])
        self.assertEqual(out["tuple"][1][0], "deep")
        self.assertEqual(out["tuple"][1][1][0].item(), True)
        self.assertIsInstance(out["ordered"], collections.OrderedDict)
        self.assertEqual(list(out["ordered"].items()), [("z", 1), ("a", 2)])
        self.assertIsInstance(out["size"], dyn.Size)
        self.assertEqual(out["size"], dyn.Size([2, 3]))
        self.assertIs(out["dtype"], dyn.int64)
        self.assertEqual((out["set"], out["complex"]), ({1, 2}, 1 + 2j))

    def test_paths_and_file_objects(self):
        t = dyn.tensor([1.0, 2.0, 3.0])
        with tempfile.TemporaryDirectory() as d:
            for target in (os.path.join(d, "a.pt"), pathlib.Path(d) / "b.pth"):
                save({"t": t}, target)
                self.check_same(t, load(target)["t"])
            with open(os.path.join(d, "c.pt"), "wb") as f:
                save(t, f)
            with open(os.path.join(d, "c.pt"), "rb") as f:
                self.check_same(t, load(f))
            with self.assertRaisesRegex(RuntimeError, "Parent directory .*missing does not exist"):
                save(t, os.path.join(d, "missing", "x.pt"))

    def test_requires_grad_and_parameters(self):
        p = dyn.nn.Parameter(dyn.tensor([1.0, 2.0]))
        frozen = dyn.nn.Parameter(dyn.tensor([3.0]), requires_grad=False)
        leaf = dyn.tensor([4.0], requires_grad=True)
        out = roundtrip({"p": p, "frozen": frozen, "leaf": leaf, "plain": dyn.tensor([5.0])})
        self.assertTrue(dyn.nn.is_parameter(out["p"]) and out["p"].requires_grad)
        self.assertTrue(dyn.nn.is_parameter(out["frozen"]) and not out["frozen"].requires_grad)
        self.assertFalse(dyn.nn.is_parameter(out["leaf"]))
        self.assertTrue(out["leaf"].requires_grad and out["leaf"].is_leaf)
        self.assertFalse(out["plain"].requires_grad)
        self.assertEqual(out["p"].tolist(), [1.0, 2.0])
        pkl = zipfile.ZipFile(io.BytesIO(saved_bytes(p))).read("archive/data.pkl")
        self.assertIn(b"ctorch._utils\n_rebuild_parameter\n", pkl)

    def test_state_dict(self):
        dyn.manual_seed(0)
        model = dyn.nn.Sequential(dyn.nn.Linear(3, 4), dyn.nn.ReLU(), dyn.nn.Linear(4, 2))
        sd = model.state_dict()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "model.pt")
            save(sd, path)
            loaded = load(path)
        self.assertIsInstance(loaded, collections.OrderedDict)
        self.assertEqual(list(loaded), ["0.weight", "0.bias", "2.weight", "2.bias"])
        dyn.manual_seed(1)
        fresh = dyn.nn.Sequential(dyn.nn.Linear(3, 4), dyn.nn.ReLU(), dyn.nn.Linear(4, 2))
        x = dyn.randn(5, 3)
        self.assertFalse(dyn.equal(fresh(x), model(x)))
        fresh.load_state_dict(loaded)
        self.assertTrue(dyn.equal(fresh(x), model(x)))


class TestSharing(unittest.TestCase):
    def test_views_of_one_storage_are_saved_once(self):
        base = dyn.arange(12, dtype=dyn.float32).reshape(3, 4)
        obj = {"base": base, "t": base.t(), "row": base[1], "corner": base[1:, 2:]}
        data = saved_bytes(obj)
        names = zipfile.ZipFile(io.BytesIO(data)).namelist()
        self.assertEqual([n for n in names if "/data/" in n], ["archive/data/0"])
        out = load(io.BytesIO(data))
        for k in obj:
            np.testing.assert_array_equal(out[k].numpy(), obj[k].numpy())
        out["base"].mul_(-1)  # the loaded views share one storage, as they did when saved
        self.assertEqual(out["row"].tolist(), [-4.0, -5.0, -6.0, -7.0])
        self.assertEqual(out["corner"].tolist(), [[-6.0, -7.0], [-10.0, -11.0]])
        self.assertEqual(out["t"][3].tolist(), [-3.0, -7.0, -11.0])

    def test_record_covers_only_what_the_views_reach(self):
        base = dyn.arange(10, dtype=dyn.int64)
        z = zipfile.ZipFile(io.BytesIO(saved_bytes([base[2:4], base[5]])))
        self.assertEqual(np.frombuffer(z.read("archive/data/0"), np.int64).tolist(), [0, 1, 2, 3, 4, 5])
        out = roundtrip([base[2:4], base[5]])
        self.assertEqual((out[0].tolist(), out[1].item()), ([2, 3], 5))

    def test_same_tensor_twice_is_one_object(self):
        t = dyn.tensor([1.0])
        out = roundtrip([t, t, {"again": t}])
        self.assertIs(out[0], out[1])
        self.assertIs(out[0], out[2]["again"])

    def test_separate_storages_stay_separate(self):
        a, b = dyn.tensor([1.0]), dyn.tensor([1.0])
        out = roundtrip([a, b])
        out[0].add_(1)
        self.assertEqual(out[1].item(), 1.0)


# data.pkl for torch.save(torch.arange(3.)): assembled from PyTorch's format (C pickler, protocol 2,
# memoizing every object), not captured from a PyTorch run.
GOLDEN_ARANGE3 = (
    b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\nq\x00((X\x07\x00\x00\x00storageq\x01ctorch\nFloatStorage\nq\x02"
    b"X\x01\x00\x00\x000q\x03X\x03\x00\x00\x00cpuq\x04K\x03tq\x05QK\x00K\x03\x85q\x06K\x01\x85q\x07\x89"
    b"ccollections\nOrderedDict\nq\x08)Rq\ttq\nRq\x0b."
)


class TestFileLayout(unittest.TestCase):
    def test_entries_and_records(self):
        t = dyn.tensor([1.0, 2.0, 3.0])
        z = zipfile.ZipFile(io.BytesIO(saved_bytes({"t": t, "i": dyn.tensor([7])})))
        self.assertEqual(z.namelist(), [
            "archive/data.pkl", "archive/.format_version", "archive/.storage_alignment", "archive/byteorder",
            "archive/data/0", "archive/data/1", "archive/version",
        ])
        self.assertEqual(z.read("archive/version"), b"3\n")
        self.assertEqual(z.read("archive/byteorder"), b"little")
        self.assertEqual(z.read("archive/.format_version"), b"1")
        self.assertEqual(z.read("archive/.storage_alignment"), b"64")
        self.assertEqual(z.read("archive/data/0"), np.array([1, 2, 3], "<f4").tobytes())
        self.assertEqual(z.read("archive/data/1"), np.array([7], "<i8").tobytes())
        self.assertTrue(all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist()))

    def test_data_pkl_matches_pytorch_bytes(self):
        pkl = zipfile.ZipFile(io.BytesIO(saved_bytes(dyn.arange(3, dtype=dyn.float32)))).read("archive/data.pkl")
        self.assertEqual(pkl, GOLDEN_ARANGE3)
        ops = [op.name for op, _, _ in pickletools.genops(pkl)]
        self.assertEqual(ops[0], "PROTO")
        self.assertEqual(pkl[:2], b"\x80\x02")  # protocol 2, as PyTorch's DEFAULT_PROTOCOL

    def test_persistent_ids(self):
        base = dyn.arange(6, dtype=dyn.float64)
        obj = {"a": dyn.tensor([True]), "b": base[1:3], "c": dyn.tensor([1, 2]), "d": base, "e": dyn.tensor([1.0])}
        pkl = zipfile.ZipFile(io.BytesIO(saved_bytes(obj))).read("archive/data.pkl")
        seen, names = [], []

        class Reader(pickle.Unpickler):
            def find_class(self, module, name):
                names.append(f"{module}.{name}")
                if name == "OrderedDict":
                    return collections.OrderedDict
                return f"{module}.{name}" if name.endswith("Storage") else (lambda *args: args)

            def persistent_load(self, pid):
                seen.append(pid)
                return pid[2]

        out = Reader(io.BytesIO(pkl)).load()
        self.assertEqual(seen, [
            ("storage", "torch.BoolStorage", "0", "cpu", 1),
            ("storage", "torch.DoubleStorage", "1", "cpu", 6),  # the storage up to the furthest view (d)
            ("storage", "torch.LongStorage", "2", "cpu", 2),
            ("storage", "torch.DoubleStorage", "1", "cpu", 6),
            ("storage", "torch.FloatStorage", "3", "cpu", 1),
        ])
        self.assertEqual(sorted(set(names)), [
            "collections.OrderedDict", "torch.BoolStorage", "torch.DoubleStorage", "torch.FloatStorage",
            "torch.LongStorage", "torch._utils._rebuild_tensor_v2",
        ])
        # b = _rebuild_tensor_v2(storage 1, offset 1, size (2,), stride (1,), False, OrderedDict())
        self.assertEqual(out["b"][1:5], (1, (2,), (1,), False))

    def test_data_is_64_byte_aligned(self):
        data = saved_bytes({"x": dyn.tensor([1.0, 2.0]), "name_that_moves_offsets": dyn.tensor([3] * 17)})
        z = zipfile.ZipFile(io.BytesIO(data))
        for info in z.infolist():
            name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
            start = info.header_offset + 30 + name_len + extra_len
            self.assertEqual(start % 64, 0, info.filename)
            extra = data[info.header_offset + 30 + name_len:start]
            self.assertEqual(extra[:2], b"FB")  # PyTorch's padding field
            self.assertEqual(data[start:start + info.file_size], z.read(info.filename))

    def test_archive_name_is_the_file_stem(self):
        with tempfile.TemporaryDirectory() as d:
            save(dyn.tensor([1.0]), os.path.join(d, "my.model.pt"))
            self.assertEqual(zipfile.ZipFile(os.path.join(d, "my.model.pt")).namelist()[0], "my.model/data.pkl")

    def test_same_object_same_bytes(self):
        obj = {"w": dyn.tensor([1.0, 2.0])}
        self.assertEqual(saved_bytes(obj), saved_bytes(obj))  # fixed timestamps


class TestPyTorchFiles(unittest.TestCase):
    """Files laid out as PyTorch writes them, assembled from pickle opcodes."""

    def test_state_dict_with_views_parameter_and_metadata(self):
        storage = np.arange(7, dtype="<f4")
        w = op_tensor(op_storage("FloatStorage", "0", 7), 1, (3, 2), (1, 3))  # a transposed view at offset 1
        p = op_global("torch._utils", "_rebuild_parameter") + op_tuple(
            op_tensor(op_storage("FloatStorage", "0", 7), 0, (2,), (1,)), b"\x88", op_ordered_dict()) + b"R"
        n = op_tensor(op_storage("LongStorage", "1", 1), 0, (), ())
        meta = b"}" + op_str("_metadata") + op_ordered_dict(("", b"}" + op_str("version") + op_int(1) + b"s")) + b"sb"
        program = op_ordered_dict(("w", w), ("p", p), ("n", n)) + meta
        f = torch_file(program, {"0": storage.tobytes(), "1": np.array([42], "<i8").tobytes()})
        sd = load(f)
        self.assertIsInstance(sd, collections.OrderedDict)
        self.assertEqual(list(sd), ["w", "p", "n"])
        self.assertEqual(sd["w"].tolist(), [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]])
        self.assertEqual(sd["w"].stride(), (1, 3))
        self.assertTrue(dyn.nn.is_parameter(sd["p"]) and sd["p"].requires_grad)
        self.assertEqual(sd["p"].tolist(), [0.0, 1.0])
        self.assertEqual((sd["n"].dtype, sd["n"].shape, sd["n"].item()), (dyn.int64, dyn.Size([]), 42))
        self.assertEqual(sd._metadata, {"": {"version": 1}})
        with dyn.no_grad():
            sd["p"].fill_(9.0)
        self.assertEqual(sd["w"][0].tolist(), [9.0, 4.0])  # p and w view one storage

    def test_other_archive_name_and_big_endian(self):
        program = op_tensor(op_storage("DoubleStorage", "0", 2), 0, (2,), (1,))
        f = torch_file(program, {"0": np.array([1.5, -2.0], ">f8").tobytes()}, name="resnet", byteorder="big")
        self.assertEqual(load(f).tolist(), [1.5, -2.0])

    def test_unsupported_dtype_is_named(self):
        f = torch_file(op_tensor(op_storage("ComplexFloatStorage", "0", 1), 0, (1,), (1,)), {"0": bytes(8)})
        with self.assertRaisesRegex(RuntimeError, r"torch.complex64 tensor \(storage torch.ComplexFloatStorage\).*"
                                                  r"int32, int64, float16, bfloat16, float32 and float64"):
            load(f)
        f = torch_file(op_global("torch", "uint16"), {})
        with self.assertRaisesRegex(RuntimeError, "dtype torch.uint16"):
            load(f)

    def test_every_dtype_as_pytorch_writes_it(self):
        # float16 1.0 is 0x3c00 and bfloat16 1.0 is 0x3f80, little-endian in the record
        for storage, data, dtype in (("HalfStorage", b"\x00\x3c", dyn.float16), ("BFloat16Storage", b"\x80\x3f", dyn.bfloat16),
                                     ("IntStorage", b"\x07\x00\x00\x00", dyn.int32), ("ByteStorage", b"\xff", dyn.uint8),
                                     ("CharStorage", b"\xff", dyn.int8), ("ShortStorage", b"\x07\x00", dyn.int16)):
            with self.subTest(storage=storage):
                t = load(torch_file(op_tensor(op_storage(storage, "0", 1), 0, (1,), (1,)), {"0": data}))
                self.assertEqual(t.dtype, dtype)
                self.assertEqual(t.item(), {"HalfStorage": 1.0, "BFloat16Storage": 1.0, "IntStorage": 7, "ByteStorage": 255,
                                            "CharStorage": -1, "ShortStorage": 7}[storage])

    def test_every_dtype_round_trips(self):
        import io
        for d in (dyn.float16, dyn.bfloat16, dyn.int32, dyn.int16, dyn.int8, dyn.uint8):
            with self.subTest(dtype=d):
                t = dyn.tensor([[1.5, -2.0], [3.0, 0.25]]).to(d)
                buf = io.BytesIO()
                dyn.save({"t": t, "v": t[:, 1]}, buf)
                buf.seek(0)
                back = dyn.load(buf)
                self.assertEqual(back["t"].dtype, d)
                self.assertEqual(back["t"].tolist(), t.tolist())
                self.assertEqual(back["v"].tolist(), t[:, 1].tolist())

    def test_out_of_bounds_view_is_refused(self):
        f = torch_file(op_tensor(op_storage("FloatStorage", "0", 2), 1, (4,), (1,)), {"0": bytes(8)})
        with self.assertRaisesRegex(RuntimeError, "requiring a storage size of 20 are out of bounds for storage of size 8"):
            load(f)

    def test_record_size_mismatch(self):
        f = torch_file(op_tensor(op_storage("FloatStorage", "0", 4), 0, (4,), (1,)), {"0": bytes(12)})
        with self.assertRaisesRegex(RuntimeError, r"holds 12 bytes, but data.pkl gives storage 0 4 elements of float32 \(16 bytes\)"):
            load(f)


class TestWeightsOnly(unittest.TestCase):
    def test_user_classes_refused_by_default(self):
        data = saved_bytes({"box": Box(3)})
        with self.assertRaisesRegex(pickle.UnpicklingError, r"Weights only load failed: the file pickles the global \S+\.Box, which weights_only=True does not allow"):
            load(io.BytesIO(data))
        with self.assertRaisesRegex(pickle.UnpicklingError, "weights_only=False"):
            load(io.BytesIO(data), weights_only=True)
        self.assertEqual(load(io.BytesIO(data), weights_only=False)["box"].v, 3)

    def test_add_safe_globals(self):
        data = saved_bytes([Box(5)])
        serialization.add_safe_globals([Box])
        try:
            self.assertEqual(serialization.get_safe_globals(), [Box])
            self.assertEqual(load(io.BytesIO(data))[0].v, 5)
        finally:
            serialization.clear_safe_globals()
        with self.assertRaisesRegex(pickle.UnpicklingError, "Weights only load failed"):
            load(io.BytesIO(data))

    def test_torch_objects_dyn_cannot_rebuild(self):
        f = torch_file(op_global("torch.nn.modules.linear", "Linear") + b")R", {})
        with self.assertRaisesRegex(RuntimeError, "torch.nn.modules.linear.Linear.*state_dict"):
            load(f, weights_only=False)


class TestMapLocation(unittest.TestCase):
    def cuda_file(self):
        return torch_file(op_tensor(op_storage("FloatStorage", "0", 1, "cuda:0"), 0, (1,), (1,)),
                          {"0": np.array([2.5], "<f4").tobytes()})

    def test_cuda_storage_needs_map_location(self):
        with self.assertRaisesRegex(RuntimeError, r"CUDA device \(cuda:0\).*map_location='cpu'"):
            load(self.cuda_file())
        for ml in ("cpu", {"cuda:0": "cpu"}, lambda storage, loc: storage, lambda storage, loc: storage.cpu()):
            with self.subTest(map_location=ml):
                self.assertEqual(load(self.cuda_file(), map_location=ml).tolist(), [2.5])
        with self.assertRaisesRegex(RuntimeError, "CUDA"):
            load(self.cuda_file(), map_location=lambda storage, loc: None)  # None: the default, which fails
        if hasattr(dyn, "device"):
            self.assertEqual(load(self.cuda_file(), map_location=dyn.device("cpu")).tolist(), [2.5])

    def test_callable_sees_location(self):
        seen = []
        load(self.cuda_file(), map_location=lambda s, loc: seen.append((loc, s.dtype, s.size())) or s)
        self.assertEqual(seen, [("cuda:0", dyn.float32, 1)])

    def test_bad_map_location(self):
        t = saved_bytes(dyn.tensor([1.0]))
        with self.assertRaisesRegex(RuntimeError, "CUDA"):
            load(io.BytesIO(t), map_location="cuda")
        with self.assertRaisesRegex(RuntimeError, "device 'mps'"):
            load(io.BytesIO(t), map_location="mps")
        with self.assertRaisesRegex(TypeError, "map_location should be"):
            load(io.BytesIO(t), map_location=3)


class TestBadFiles(unittest.TestCase):
    def check(self, data, *patterns):
        with self.assertRaises(RuntimeError) as cm:
            load(io.BytesIO(data))
        for p in patterns:
            self.assertRegex(str(cm.exception), p)

    def test_not_a_zip(self):
        self.check(b"hello world, not a checkpoint", "not a zip archive written by torch.save", "starts with b'hello wo'")
        self.check(b"", "is empty")

    def test_legacy_and_pickles(self):
        self.check(b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19." + bytes(40),
                   "legacy format", "before PyTorch 1.6", "save it again")
        self.check(pickle.dumps([1, 2], protocol=2), "plain pickle")

    def test_truncated(self):
        data = saved_bytes({"w": dyn.ones(100)})
        self.check(data[: len(data) // 2], "starts like a zip archive but cannot be read", "truncated or corrupted")

    def test_zip_without_data_pkl(self):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("stuff/readme.txt", "hi")
        self.check(buf.getvalue(), r"without stuff/data.pkl", "stuff/readme.txt", "expected a file written by torch.save")
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("readme.txt", "hi")
        self.check(buf.getvalue(), "not in a folder")

    def test_torchscript_archive(self):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("m/constants.pkl", b"")
            z.writestr("m/code/__torch__.py", "")
        self.check(buf.getvalue(), "TorchScript archive")

    def test_corrupted_record(self):
        data = bytearray(saved_bytes(dyn.tensor([1.0, 2.0, 3.0, 4.0])))
        start = data.index(np.array([1.0, 2.0, 3.0, 4.0], "<f4").tobytes())
        data[start] ^= 0xFF  # the CRC no longer matches
        self.check(bytes(data), "truncated or corrupted")

    def test_missing_storage_record(self):
        f = torch_file(op_tensor(op_storage("FloatStorage", "5", 1), 0, (1,), (1,)), {})
        with self.assertRaisesRegex(RuntimeError, "has no record archive/data/5"):
            load(f)


@unittest.skipUnless(hasattr(dyn, "save"), "dyn/__init__.py does not export save and load yet")
class TestExported(unittest.TestCase):
    def test_dyn_save_load(self):
        self.assertIs(dyn.save, save)
        self.assertIs(dyn.load, load)


if __name__ == "__main__":
    unittest.main()
