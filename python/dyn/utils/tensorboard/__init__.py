"""torch.utils.tensorboard: SummaryWriter writes event files TensorBoard reads (scalars,
histograms, text), with no TensorFlow, protobuf or tensorboard package needed to write them."""
import os
import socket
import time
from datetime import datetime

import numpy as np

from . import _events

__all__ = ["SummaryWriter"]

_file_counter = 0


class FileWriter:
    """One event file in one directory: events are queued and written at flush()."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        global _file_counter
        self.log_dir = str(log_dir)
        os.makedirs(self.log_dir, exist_ok=True)
        _file_counter += 1
        name = "events.out.tfevents.%010d.%s.%s.%s%s" % (time.time(), socket.gethostname(), os.getpid(),
                                                         _file_counter, filename_suffix)
        self.path = os.path.join(self.log_dir, name)
        self._file = open(self.path, "wb")  # noqa: SIM115 - kept open until close()
        self.max_queue, self.flush_secs = max_queue, flush_secs
        self._queue, self._last_flush = [], time.time()
        self.add_event(_events.event(time.time(), file_version="brain.Event:2"))
        self.flush()

    def get_logdir(self):
        return self.log_dir

    def add_event(self, data):
        if self._file is None:
            raise RuntimeError(f"the event file {self.path} is closed")
        self._queue.append(_events.record(data))
        if len(self._queue) >= self.max_queue or time.time() - self._last_flush >= self.flush_secs:
            self.flush()

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(_events.event(time.time() if walltime is None else walltime,
                                     step=None if global_step is None else int(global_step), summary=summary))

    def flush(self):
        if self._file is None:
            return
        if self._queue:
            self._file.write(b"".join(self._queue))
            self._queue.clear()
        self._file.flush()
        self._last_flush = time.time()

    def close(self):
        if self._file is not None:
            self.flush()
            self._file.close()
            self._file = None

    def __del__(self):  # a writer the program never closed still leaves its events in the file
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit the file may be gone already
            pass


def _numpy(x):
    import dyn
    if isinstance(x, dyn.Tensor):
        return x.detach().numpy()
    return np.asarray(x)


def _scalar(value, fn):
    v = _numpy(value)
    if v.size != 1:
        raise AssertionError(f"{fn}: scalar_value should contain one element (0 dimensions). Was given size: "
                             f"{v.size} and {v.ndim} dimensions.")
    return float(v.reshape(()))


def _default_bins():
    # TensorBoard's default histogram buckets (as PyTorch's SummaryWriter makes them)
    v, buckets = 1e-12, []
    while v < 1e20:
        buckets.append(v)
        v *= 1.1
    return [-b for b in reversed(buckets)] + [0] + buckets


def _histogram(values, bins, max_bins=None):
    """HistogramProto's fields for values, binned as PyTorch's make_histogram does."""
    values = _numpy(values).reshape(-1).astype(np.float64)
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, limits = np.histogram(values, bins=bins)
    n = len(counts)
    if max_bins is not None and n > max_bins:
        sub = n // max_bins
        if n % sub:
            counts = np.pad(counts, [[0, sub - n % sub]], mode="constant", constant_values=0)
        counts = counts.reshape(-1, sub).sum(axis=-1)
        new_limits = np.empty((counts.size + 1,), limits.dtype)
        new_limits[:-1] = limits[:-1:sub]
        new_limits[-1] = limits[-1]
        limits = new_limits
    # TensorBoard keeps only right bin limits: an empty bin on the left keeps the leftmost one
    cum = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cum, [0, cum[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty")
    return {"min": values.min(), "max": values.max(), "num": len(values), "sum": values.sum(),
            "sum_squares": values.dot(values), "bucket_limit": limits.tolist(), "bucket": counts.tolist()}


class SummaryWriter:
    """torch.utils.tensorboard.SummaryWriter: writes scalars, histograms and text to an event file
    under log_dir (default runs/<date>_<host><comment>) that TensorBoard reads."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120, filename_suffix=""):
        if not log_dir:
            log_dir = os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname() +
                                   comment)
        self.log_dir = str(log_dir)
        self.purge_step, self.max_queue, self.flush_secs = purge_step, max_queue, flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _default_bins()

    def _get_file_writer(self):
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # SessionLog.START at purge_step: TensorBoard drops the events of later steps
                self.file_writer.add_event(_events.event(time.time(), step=self.purge_step) +
                                           _events.f_bytes(6, _events.f_varint(1, 1)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """One point of the curve `tag`."""
        value = _scalar(scalar_value, "add_scalar")
        self._get_file_writer().add_summary(_events.summary(_events.scalar_value(tag, value)), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Several curves in one chart: each in its own run directory log_dir/<main_tag>_<tag>."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            fw_tag = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = self.all_writers[fw_tag] = FileWriter(fw_tag, self.max_queue, self.flush_secs,
                                                           self.filename_suffix)
            fw.add_summary(_events.summary(_events.scalar_value(main_tag, _scalar(value, "add_scalars"))),
                           global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        """The distribution of values (a tensor or array) at this step."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        h = _histogram(values, bins, max_bins=max_bins)
        self._get_file_writer().add_summary(_events.summary(_events.histogram_value(tag, h)), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """A piece of text (markdown) at this step."""
        self._get_file_writer().add_summary(_events.summary(_events.text_value(tag, text_string)), global_step,
                                            walltime)

    def flush(self):
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()

    def close(self):
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()
            w.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _unsupported(what):
    def method(self, *args, **kwargs):
        raise NotImplementedError(f"SummaryWriter.{what}() is not supported by dyn (scalars, histograms and text "
                                  "are); skip it, or run the script with dynrepl --real-torch")
    method.__name__ = what
    return method


for _name in ("add_image", "add_images", "add_figure", "add_graph", "add_embedding", "add_hparams", "add_audio",
              "add_video", "add_pr_curve", "add_mesh"):
    setattr(SummaryWriter, _name, _unsupported(_name))
del _name
