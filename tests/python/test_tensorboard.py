"""torch.utils.tensorboard.SummaryWriter writes event files TensorBoard reads. The files are read
back here by a reader of the format written independently of dyn's writer (TFRecord frames with
their CRC-32C checked bit by bit, protocol buffers decoded generically); the same files were
checked with TensorBoard 2.20's EventAccumulator, and the histogram against PyTorch 2.15's."""
import os
import shutil
import struct
import tempfile
import unittest

import numpy as np

import dyn
from dyn.utils.tensorboard import SummaryWriter


def crc32c_bitwise(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def unmask(m):
    rot = (m - 0xA282EAD8) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


def records(path):
    with open(path, "rb") as f:
        data = f.read()
    i, out = 0, []
    while i < len(data):
        head = data[i:i + 8]
        (n,) = struct.unpack("<Q", head)
        assert unmask(struct.unpack("<I", data[i + 8:i + 12])[0]) == crc32c_bitwise(head), "length crc"
        body = data[i + 12:i + 12 + n]
        assert unmask(struct.unpack("<I", data[i + 12 + n:i + 16 + n])[0]) == crc32c_bitwise(body), "data crc"
        out.append(body)
        i += 16 + n
    return out


def fields(buf):
    """A protocol buffer message as [(field, wire type, value)]."""
    i, out = 0, []
    while i < len(buf):
        key, i = varint(buf, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = varint(buf, i)
        elif w == 1:
            v, i = struct.unpack("<d", buf[i:i + 8])[0], i + 8
        elif w == 5:
            v, i = struct.unpack("<f", buf[i:i + 4])[0], i + 4
        elif w == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
        else:
            raise AssertionError(f"wire type {w}")
        out.append((f, w, v))
    return out


def varint(buf, i):
    shift = n = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def get(msg, field):
    return [v for f, _, v in fields(msg) if f == field]


def events(path):
    """[(step, wall_time, file_version, [summary values])]"""
    out = []
    for r in records(path):
        step = get(r, 2)
        summary = get(r, 5)
        out.append((step[0] if step else None, get(r, 1)[0], (get(r, 3) or [None])[0],
                    [v for s in summary for v in get(s, 1)]))
    return out


def event_file(d):
    (name,) = [n for n in os.listdir(d) if n.startswith("events.out.tfevents.")]
    return os.path.join(d, name)


class TestSummaryWriter(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_scalars_read_back(self):
        with SummaryWriter(self.dir) as w:
            for i in range(5):
                w.add_scalar("train/loss", 1.0 / (i + 1), i)
            w.add_scalar("lr", dyn.tensor(0.25), global_step=7, walltime=123.5)
        ev = events(event_file(self.dir))
        self.assertEqual(ev[0][2], b"brain.Event:2")  # the file's first event names its version
        points = [(step, get(v, 1)[0], get(v, 2)[0]) for step, _, _, vals in ev[1:] for v in vals]
        want = [(i, b"train/loss", np.float32(1.0 / (i + 1))) for i in range(5)] + [(7, b"lr", 0.25)]
        self.assertEqual(points, want)
        self.assertEqual(ev[-1][1], 123.5)
        with SummaryWriter(os.path.join(self.dir, "other")) as w, self.assertRaises(AssertionError):
            w.add_scalar("x", dyn.ones(2), 0)

    def test_scalars_of_one_chart_go_to_run_directories(self):
        with SummaryWriter(self.dir) as w:
            w.add_scalars("run/lr", {"a": 0.5, "b": dyn.tensor(2.0)}, 3)
        self.assertEqual(sorted(n for n in os.listdir(self.dir) if not n.startswith("events")),
                         ["run_lr_a", "run_lr_b"])
        (step, _, _, (v,)), = events(event_file(os.path.join(self.dir, "run_lr_b")))[1:]
        self.assertEqual((step, get(v, 1)[0], get(v, 2)[0]), (3, b"run/lr", 2.0))

    def test_histogram_as_pytorch_bins_it(self):
        vals = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
        with SummaryWriter(self.dir) as w:
            w.add_histogram("w", dyn.from_numpy(vals), 2)
        ((step, _, _, (v,)),) = events(event_file(self.dir))[1:]
        (h,) = get(v, 5)
        doubles = lambda b: list(struct.unpack(f"<{len(b) // 8}d", b))  # noqa: E731
        limits, counts = doubles(get(h, 6)[0]), doubles(get(h, 7)[0])
        # PyTorch 2.15's SummaryWriter (with TensorBoard's default buckets) gives these for vals
        self.assertEqual(step, 2)
        self.assertEqual([get(h, k)[0] for k in (1, 2, 3, 4, 5)],
                         [-3.8994216918945312, 3.0660367012023926, 1000.0, -48.02827719011111, 956.3530672251113])
        self.assertEqual(len(limits), 610)
        self.assertEqual(counts[:5], [0.0, 1.0, 1.0, 0.0, 4.0])
        self.assertEqual(limits[:3], [-4.214722379471477, -3.8315657995195243, -3.48324163592684])
        self.assertEqual(sum(counts), 1000.0)

    def test_text(self):
        with SummaryWriter(self.dir) as w:
            w.add_text("note", "hello **world**", 1)
        ((step, _, _, (v,)),) = events(event_file(self.dir))[1:]
        self.assertEqual(get(v, 1), [b"note/text_summary"])
        (meta,) = get(v, 9)
        self.assertEqual(get(get(meta, 1)[0], 1), [b"text"])  # the text plugin shows it
        (tensor,) = get(v, 8)
        self.assertEqual((get(tensor, 1), get(tensor, 8)), ([7], [b"hello **world**"]))  # DT_STRING

    def test_default_directory_and_unsupported(self):
        cwd = os.getcwd()
        os.chdir(self.dir)
        try:
            w = SummaryWriter(comment="_exp")
            self.assertTrue(w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_exp"))
            with self.assertRaisesRegex(NotImplementedError, "add_image.*scalars, histograms and text"):
                w.add_image("img", dyn.zeros(3, 4, 4))
            w.close()
            w.close()  # twice is fine
        finally:
            os.chdir(cwd)

    def test_import_paths(self):
        import torch.utils.tensorboard as tb  # what programs write under dynrepl
        self.assertIs(tb.SummaryWriter, SummaryWriter)


if __name__ == "__main__":
    unittest.main()
