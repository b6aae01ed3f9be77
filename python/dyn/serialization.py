"""dyn.save / dyn.load: PyTorch's zip checkpoint format (torch.save / torch.load), in both directions."""
import codecs
import io
import os
import pickle
import struct
import sys
import zipfile
import zlib
from collections import OrderedDict

import numpy as np

import dyn

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]
DEFAULT_PROTOCOL = 2

# Note [file layout]
# torch.save writes a zip archive (stored, not compressed) whose entries all sit in one folder:
#   <name>/data.pkl             the object, pickled with protocol 2; storages as persistent ids
#   <name>/.format_version      "1": storage keys are numbered in order of first reference
#   <name>/.storage_alignment   "64": every record's data starts at a multiple of 64 bytes
#   <name>/byteorder            "little" (sys.byteorder)
#   <name>/data/<key>           one storage's raw bytes
#   <name>/version              "3\n"
# <name> is the file's stem when saving to a path ("model.pt" -> "model"), "archive" for a file
# object; readers take it from the first entry. In data.pkl a tensor is the call
#   torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, OrderedDict())
# a Parameter wraps it in torch._utils._rebuild_parameter(tensor, requires_grad, OrderedDict()),
# and a storage is the persistent id ('storage', torch.FloatStorage, key, 'cpu', numel).

# One row per dtype dyn has: dyn dtype, PyTorch storage class, PyTorch dtype name, numpy dtype of
# its bytes (bfloat16, which numpy lacks, is read and written as int16 through Tensor.view).
_DTYPES = (
    (dyn.float32, "FloatStorage", "float32", np.dtype(np.float32)),
    (dyn.float64, "DoubleStorage", "float64", np.dtype(np.float64)),
    (dyn.float16, "HalfStorage", "float16", np.dtype(np.float16)),
    (dyn.bfloat16, "BFloat16Storage", "bfloat16", np.dtype(np.int16)),
    (dyn.int64, "LongStorage", "int64", np.dtype(np.int64)),
    (dyn.int32, "IntStorage", "int32", np.dtype(np.int32)),
    (dyn.int16, "ShortStorage", "int16", np.dtype(np.int16)),
    (dyn.int8, "CharStorage", "int8", np.dtype(np.int8)),
    (dyn.uint8, "ByteStorage", "uint8", np.dtype(np.uint8)),
    (dyn.bool, "BoolStorage", "bool", np.dtype(np.bool_)),
)
# PyTorch storage classes of dtypes dyn lacks, for the error that names the dtype.
_OTHER_STORAGES = {
    "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128", "UntypedStorage": "untyped bytes",
    "QInt8Storage": "qint8", "QUInt8Storage": "quint8", "QInt32Storage": "qint32", "QUInt4x2Storage": "quint4x2",
    "QUInt2x4Storage": "quint2x4",
}
_SUPPORTED = "bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32 and float64"


def _numpy_of(t):
    """t's memory as a numpy array (bfloat16 as int16: its bytes)."""
    t = t.detach()
    return (t.view(dyn.int16) if t.dtype == dyn.bfloat16 else t).numpy()


_ALIGNMENT = 64


class _TorchGlobal:
    """A PyTorch global (torch._utils._rebuild_tensor_v2, torch.FloatStorage...) as data.pkl names it."""

    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's save_reduce wants a callable; only its name is ever written
        raise TypeError(f"{self!r} stands in for PyTorch's global while pickling; it cannot be called")

    def __repr__(self):
        return f"{self.module}.{self.name}"


_REBUILD_TENSOR = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _TorchGlobal("torch._utils", "_rebuild_parameter")
_TORCH_SIZE = _TorchGlobal("torch", "Size")
_STORAGE_CLASS = {dt: _TorchGlobal("torch", storage) for dt, storage, _, _ in _DTYPES}
_DTYPE_GLOBAL = {dt: _TorchGlobal("torch", name) for dt, _, name, _ in _DTYPES}


# ---- saving ----


class _SavedStorage:
    """One data/<key> record: numel elements of dtype, starting at address in a live storage (or a copy)."""

    def __init__(self, dtype, owner, address=None):
        self.key = None  # given when data.pkl first references it
        self.dtype = dtype
        self.owner = owner  # the numpy array that keeps the memory alive (and is the data for a copy)
        self.address = address  # None: owner itself is the record's data
        self.numel = 0 if address is not None else owner.size

    def data(self):
        """The record's bytes as a uint8 array, read in place from the storage."""
        if self.address is None:
            return self.owner.reshape(-1).view(np.uint8)
        return np.asarray(_Memory(self.owner, self.address, self.numel * self.owner.itemsize))


class _Memory:
    """numpy's view of [address, address + nbytes) inside a live storage (numpy's array interface)."""

    def __init__(self, owner, address, nbytes):
        self.owner = owner
        self.__array_interface__ = {"version": 3, "shape": (nbytes,), "typestr": "|u1", "data": (address, True)}


def _contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class _Storages:
    """The storages of the tensors in one object: tensors viewing one dyn storage share one record.

    Note [shared storages]: dyn does not expose a tensor's storage, but .numpy() shares the
    tensor's memory, so the address of element 0 of its storage is the array's data pointer
    minus storage_offset() elements: tensors with the same such address and dtype view the same
    storage. A record holds that storage from element 0 up to the furthest element any saved view
    reaches, read in place (a prefix of the storage where PyTorch writes all of it). The persistent
    id must give the record's numel the first time the storage is pickled, so save() pickles
    twice: the first pass only measures (measure=True), the second writes. Tensors with a
    negative stride (possible through dyn.from_numpy; PyTorch has none) and empty tensors are saved
    as their own contiguous copy."""

    def __init__(self):
        self.shared = {}  # (address of element 0, dtype) -> _SavedStorage
        self.records = []  # the referenced records, in key order
        self.measure = True

    def key(self, record):
        if record.key is None:
            record.key = str(len(self.records))
            self.records.append(record)
        return record.key

    def place(self, t):
        """(record, storage_offset, stride) to save tensor t with."""
        a = _numpy_of(t)
        shape, stride, offset = tuple(t.shape), tuple(t.stride()), t.storage_offset()
        if a.size == 0 or min(stride, default=0) < 0:
            copy = None if self.measure else _SavedStorage(t.dtype, np.ascontiguousarray(a))
            return copy, 0, stride if a.size == 0 else _contiguous_strides(shape)
        address = a.__array_interface__["data"][0] - offset * a.itemsize
        end = offset + sum((n - 1) * s for n, s in zip(shape, stride)) + 1
        record = self.shared.get((address, t.dtype))
        if self.measure:
            if record is None:
                record = self.shared[(address, t.dtype)] = _SavedStorage(t.dtype, a, address)
            record.numel = max(record.numel, end)
        elif record is None or end > record.numel:  # only if a __reduce__ gave other tensors this pass
            return _SavedStorage(t.dtype, np.ascontiguousarray(a)), 0, _contiguous_strides(shape)
        return record, offset, stride

    def reduce(self, t):
        if dyn.nn.is_parameter(t):
            return _REBUILD_PARAMETER, (t.detach(), t.requires_grad, OrderedDict())
        record, offset, stride = self.place(t)
        return _REBUILD_TENSOR, (record, offset, tuple(t.shape), stride, t.requires_grad, OrderedDict())


# Note [torch globals]
# data.pkl must name torch._utils._rebuild_tensor_v2, torch.FloatStorage, torch.float32... as
# GLOBAL opcodes, but pickle only writes a global after importing its module and finding the
# object there, and there is no torch to import. So the pickler is the pure-Python
# pickle._Pickler (CPython's reference implementation, with the same output), and its save()
# writes the GLOBAL opcode itself for the _TorchGlobal stand-ins and dyn dtypes, memoized as
# the C pickler does. Everything else (tensors through reducer_override, storages through
# persistent_id) uses pickle's documented hooks.
class _Pickler(pickle._Pickler):
    def __init__(self, file, protocol, storages):
        super().__init__(file, protocol)
        self.storages = storages

    def save(self, obj, save_persistent_id=True):
        glob = obj if type(obj) is _TorchGlobal else _DTYPE_GLOBAL.get(obj) if isinstance(obj, dyn.dtype) else None
        if glob is None:
            return super().save(obj, save_persistent_id)
        memo = self.memo.get(id(obj))
        if memo is not None:
            self.write(self.get(memo[0]))
            return
        self.write(pickle.GLOBAL + f"{glob.module}\n{glob.name}\n".encode("ascii"))
        self.memoize(obj)

    def persistent_id(self, obj):
        if type(obj) is _SavedStorage:
            return ("storage", _STORAGE_CLASS[obj.dtype], self.storages.key(obj), "cpu", obj.numel)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, dyn.Tensor):
            return self.storages.reduce(obj)
        if isinstance(obj, dyn.Size):
            return _TORCH_SIZE, (tuple(obj),)
        return NotImplemented


class _Discard:
    def write(self, data):
        return len(data)


class _ZipWriter:
    """Writes stored records under <name>/, each one's data starting at a multiple of 64 bytes."""

    def __init__(self, fileobj, name):
        self.fileobj, self.name = fileobj, name
        try:
            self.start = fileobj.tell()
        except (AttributeError, OSError):
            self.start = None  # a stream: no alignment
        self.zip = zipfile.ZipFile(fileobj, "w", zipfile.ZIP_STORED, allowZip64=True)

    def write(self, record, data):
        data = memoryview(data).cast("B") if not isinstance(data, (bytes, str)) else data
        data = data.encode("ascii") if isinstance(data, str) else data
        info = zipfile.ZipInfo(f"{self.name}/{record}", date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        info.file_size = len(data)
        # zipfile adds a 20-byte zip64 field to the local header of large records; decide it here
        # (force_zip64) so that the data's offset is known.
        zip64 = len(data) > zipfile.ZIP64_LIMIT * 0.9
        pad = 0
        if self.start is not None:
            header = self.fileobj.tell() - self.start
            data_start = header + 30 + len(info.filename.encode("ascii")) + 4 + (20 if zip64 else 0)
            pad = -data_start % _ALIGNMENT
        info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad  # PyTorch's padding field
        with self.zip.open(info, "w", force_zip64=zip64) as out:
            out.write(data)

    def close(self):
        self.zip.close()


def _archive_name(f):
    """PyTorch's folder name: the path's file name up to its last dot, or "archive"."""
    if not isinstance(f, (str, os.PathLike)):
        return "archive"
    base = os.path.basename(os.fspath(f))
    stem = base[: base.rindex(".")] if "." in base else base
    return stem if stem and stem.isascii() and "/" not in stem else "archive"


def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Saves obj to f (a path or a binary file object) in PyTorch's zip format, readable by torch.load."""
    if pickle_module not in (None, pickle):
        raise NotImplementedError(f"dyn.save pickles with the standard pickle module, got pickle_module={pickle_module!r}")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("dyn.save writes only the zip format (_use_new_zipfile_serialization=True)")
    storages = _Storages()
    _Pickler(_Discard(), pickle_protocol, storages).dump(obj)
    storages.measure = False
    data = io.BytesIO()
    _Pickler(data, pickle_protocol, storages).dump(obj)

    if isinstance(f, (str, os.PathLike)):
        parent = os.path.dirname(os.fspath(f))
        if parent and not os.path.isdir(parent):
            raise RuntimeError(f"Parent directory {parent} does not exist.")
        with open(f, "wb") as fileobj:
            _write_archive(fileobj, _archive_name(f), data.getvalue(), storages, _disable_byteorder_record)
    else:
        _write_archive(f, "archive", data.getvalue(), storages, _disable_byteorder_record)


def _write_archive(fileobj, name, pickled, storages, disable_byteorder):
    out = _ZipWriter(fileobj, name)
    out.write("data.pkl", pickled)
    out.write(".format_version", "1")
    out.write(".storage_alignment", str(_ALIGNMENT))
    if not disable_byteorder:
        out.write("byteorder", sys.byteorder)
    for record in storages.records:
        out.write(f"data/{record.key}", record.data())
    out.write("version", "3\n")
    out.close()


# ---- loading ----


class _StorageType:
    """What torch.FloatStorage... loads as: the dtype of the storage's elements."""

    def __init__(self, name, dtype=None, numpy_dtype=None):
        self.name, self.dtype, self.numpy_dtype = name, dtype, numpy_dtype

    def __repr__(self):
        return f"torch.{self.name}"


class _LoadedStorage:
    """One storage read from a file: a numpy array that the tensors viewing it share (through a dyn tensor)."""

    def __init__(self, array, dtype, location):
        self.array, self.dtype, self.location = array, dtype, location
        self._whole = None  # a dyn tensor over all of array, made on first view

    def size(self):
        return self.array.size

    def __len__(self):
        return self.array.size

    def nbytes(self):
        return self.array.nbytes

    def cpu(self):
        return self

    def cuda(self, *args, **kwargs):
        raise RuntimeError("dyn has no CUDA device: it runs on the CPU; load with map_location='cpu'")

    def view(self, offset, size, stride):
        """A dyn tensor viewing this storage, sharing its memory with the other views."""
        size, stride = tuple(size), tuple(stride)
        isz = self.array.itemsize
        if len(size) != len(stride) or any(n < 0 for n in size) or any(s < 0 for s in stride) or offset < 0:
            raise RuntimeError(
                f"invalid tensor in file: sizes {list(size)}, strides {list(stride)}, storage offset {offset}"
            )
        if 0 in size:
            return self._as_dtype(dyn.from_numpy(np.empty(size, self.array.dtype)))
        need = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
        if need > self.array.size:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and itemsize "
                f"{isz} requiring a storage size of {need * isz} are out of bounds for storage of size "
                f"{self.array.nbytes}"
            )
        if self._whole is None:
            self._whole = dyn.from_numpy(self.array)
        # from_numpy of an array that views a dyn tensor's memory gives a view of that tensor's
        # storage, so the tensors of one storage share it after loading as they did when saved.
        whole = self._whole.numpy()
        return self._as_dtype(
            dyn.from_numpy(np.lib.stride_tricks.as_strided(whole[offset:], size, [s * isz for s in stride])))

    def _as_dtype(self, t):
        return t.view(self.dtype) if self.dtype == dyn.bfloat16 else t


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    t = storage.view(storage_offset, size, stride)
    if requires_grad:
        t.requires_grad = True
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    raise RuntimeError(
        f"the file holds a tensor of dtype {dtype} (saved untyped): dyn has {_SUPPORTED}; convert it in "
        "PyTorch before saving, e.g. t.float()"
    )


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    return dyn.nn.Parameter(data, requires_grad)


def _rebuild_from_type_v2(func, new_type, args, state):
    if new_type is not dyn.Tensor:
        raise RuntimeError(f"the file holds a tensor subclass {new_type!r}; dyn rebuilds only plain tensors")
    return func(*args)


def _device(*args):
    return dyn.device(*args) if hasattr(dyn, "device") else ":".join(str(a) for a in args)


# The globals a file may name, as dyn loads them. The first group is what weights_only=True
# allows (PyTorch's allowlist, less what dyn cannot represent).
_SAFE_GLOBALS = {
    "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
    "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
    "torch._utils._rebuild_parameter": _rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": _rebuild_parameter,
    "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    "torch.Tensor": dyn.Tensor,
    "torch.Size": dyn.Size,
    "torch.device": _device,
    "collections.OrderedDict": OrderedDict,
    "_codecs.encode": codecs.encode,  # how protocol 2 pickles bytes
}
for _b in (set, frozenset, bytearray, complex):  # protocol 2 names builtins by their Python 2 module
    _SAFE_GLOBALS[f"builtins.{_b.__name__}"] = _SAFE_GLOBALS[f"__builtin__.{_b.__name__}"] = _b
_SAFE_GLOBALS.update({f"torch.{storage}": _StorageType(storage, dt, npdt) for dt, storage, _, npdt in _DTYPES})
_SAFE_GLOBALS.update({f"torch.{name}": dt for dt, _, name, _ in _DTYPES})
_SAFE_GLOBALS.update({f"torch.{storage}": _StorageType(storage) for storage in _OTHER_STORAGES})
_TORCH_DTYPE_NAMES = {
    "uint16", "uint32", "uint64", "complex64", "complex128", "cfloat", "cdouble", "float8_e4m3fn", "float8_e5m2",
}


_user_safe_globals = {}  # "module.qualname" -> object, from add_safe_globals


def add_safe_globals(safe_globals):
    """Allows these classes and functions in weights_only=True loads (torch.serialization.add_safe_globals)."""
    for g in safe_globals:
        _user_safe_globals[f"{g.__module__}.{g.__qualname__}"] = g


def get_safe_globals():
    return list(_user_safe_globals.values())


def clear_safe_globals():
    _user_safe_globals.clear()


class safe_globals:
    """with torch.serialization.safe_globals([cls, ...]): allowed in weights_only=True loads inside
    the block only (what add_safe_globals allowed before stays allowed)."""

    def __init__(self, safe_globals):
        self.globals = list(safe_globals)

    def __enter__(self):
        self.saved = dict(_user_safe_globals)
        add_safe_globals(self.globals)

    def __exit__(self, *exc):
        _user_safe_globals.clear()
        _user_safe_globals.update(self.saved)
        return False


class _Unpickler(pickle.Unpickler):
    """Reads data.pkl: torch globals become dyn's, storages come from the archive's data/ records."""

    def __init__(self, file, archive, restore, weights_only, **kwargs):
        super().__init__(file, **kwargs)
        self.archive, self.restore, self.weights_only = archive, restore, weights_only
        self.storages = {}

    def find_class(self, module, name):
        full = f"{module}.{name}"
        if full in _SAFE_GLOBALS:
            return _SAFE_GLOBALS[full]
        if full in _user_safe_globals:
            return _user_safe_globals[full]
        if module == "torch" and name in _TORCH_DTYPE_NAMES:
            raise RuntimeError(f"the file holds the dtype torch.{name}; dyn has {_SUPPORTED}")
        if self.weights_only:
            raise pickle.UnpicklingError(
                f"Weights only load failed: the file pickles the global {full}, which weights_only=True does not "
                "allow (only tensors, containers, numbers and strings). If you trust the file, load it with "
                "weights_only=False."
            )
        if module == "torch" or module.startswith("torch."):
            raise RuntimeError(
                f"the file pickles {full}, a PyTorch object dyn cannot rebuild; dyn loads tensors, Parameters and "
                "containers (for a model saved whole, save its state_dict() in PyTorch instead)"
            )
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and _ascii(pid[0]) == "storage"):
            raise RuntimeError(
                f"unknown persistent id {pid!r} in data.pkl: expected ('storage', type, key, location, numel) as "
                "torch.save writes"
            )
        _, stype, key, location, numel = pid
        key, location = _ascii(key), _ascii(location)
        if key in self.storages:
            return self.storages[key]
        if not isinstance(stype, _StorageType):
            raise RuntimeError(f"persistent id {pid!r} names {stype!r}, not a torch storage class")
        if stype.dtype is None:
            dt = _OTHER_STORAGES[stype.name]
            raise RuntimeError(
                f"the file holds a torch.{dt} tensor (storage torch.{stype.name}): dyn has {_SUPPORTED}; convert "
                "it in PyTorch before saving, e.g. t.float() or t.long()"
            )
        array = self.archive.read_storage(key, stype.numpy_dtype, numel)
        storage = self.restore(_LoadedStorage(array, stype.dtype, location), location)
        self.storages[key] = storage
        return storage


def _ascii(x):
    return x.decode("ascii") if isinstance(x, bytes) else x


class _Archive:
    """The records of one torch.save zip archive."""

    def __init__(self, zf, what):
        self.zf, self.what = zf, what
        names = zf.namelist()
        if not names:
            raise RuntimeError(f"{what} is an empty zip archive, not a file written by torch.save")
        if "/" not in names[0]:
            raise RuntimeError(
                f"{what} is a zip archive whose first entry {names[0]!r} is not in a folder; torch.save writes "
                "every record under one folder (<name>/data.pkl)"
            )
        self.prefix = names[0].split("/", 1)[0] + "/"
        records = {n[len(self.prefix):] for n in names if n.startswith(self.prefix)}
        if "data.pkl" not in records:
            if "constants.pkl" in records or any(r.startswith("code/") for r in records):
                raise RuntimeError(
                    f"{what} is a TorchScript archive (torch.jit.save); dyn.load reads files written by torch.save"
                )
            shown = ", ".join(sorted(names)[:8]) + (", ..." if len(names) > 8 else "")
            raise RuntimeError(
                f"{what} is a zip archive without {self.prefix}data.pkl (it holds {shown}); expected a file "
                "written by torch.save"
            )
        self.swap = False
        if "byteorder" in records:
            order = self.read("byteorder").decode("ascii", "replace").strip()
            if order not in ("little", "big"):
                raise RuntimeError(f"{what}: unknown byteorder record {order!r}; expected 'little' or 'big'")
            self.swap = order != sys.byteorder

    def read(self, record):
        return self.zf.read(self.prefix + record)

    def read_storage(self, key, dtype, numel):
        name = f"data/{key}"
        try:
            info = self.zf.getinfo(self.prefix + name)
        except KeyError:
            raise RuntimeError(f"{self.what} has no record {self.prefix}{name} for storage {key}") from None
        nbytes = numel * dtype.itemsize
        if info.file_size != nbytes:
            raise RuntimeError(
                f"{self.what}: record {self.prefix}{name} holds {info.file_size} bytes, but data.pkl gives storage "
                f"{key} {numel} elements of {dtype.name} ({nbytes} bytes); the file is truncated or corrupted"
            )
        array = np.empty(numel, dtype)
        with self.zf.open(info) as r:
            got = r.readinto(array.view(np.uint8))
        if got != nbytes:
            raise RuntimeError(f"{self.what}: record {self.prefix}{name} ended after {got} of {nbytes} bytes")
        if self.swap:
            array.byteswap(inplace=True)
        return array


# ---- map_location ----


def _check_cpu(location):
    location = str(location)
    if location == "cpu":
        return
    if location.startswith("cuda"):
        raise RuntimeError(
            f"Attempting to deserialize object on a CUDA device ({location}) but dyn has no CUDA: it runs on the "
            "CPU. Use dyn.load with map_location='cpu' to map your storages to the CPU."
        )
    raise RuntimeError(
        f"cannot load a storage onto device {location!r}: dyn runs on the CPU; use map_location='cpu'"
    )


def _restorer(map_location):
    """restore(storage, location) for map_location, as torch.load applies it to each storage."""

    def default(storage, location):
        _check_cpu(location)
        return storage

    if map_location is None:
        return default
    if isinstance(map_location, dict):
        def remap(storage, location):
            return default(storage, str(map_location.get(location, location)))
        return remap
    if isinstance(map_location, (str, getattr(dyn, "device", ()))):
        _check_cpu(map_location)
        return lambda storage, location: storage
    if callable(map_location):
        def call(storage, location):
            result = map_location(storage, location)
            if result is None:
                return default(storage, location)
            if not isinstance(result, _LoadedStorage):
                raise TypeError(
                    f"map_location returned {type(result).__name__}; expected None or the storage it was given"
                )
            return result
        return call
    raise TypeError(f"map_location should be None, a str, a device, a dict or a callable, got {map_location!r}")


# ---- load ----

_LEGACY_MAGIC = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"  # pickled 0x1950a86a20f9469cfc6c


def _check_start(head, what):
    """Raises for a file that is not a zip archive, saying what it looks like instead."""
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return
    if not head:
        raise RuntimeError(f"{what} is empty; expected a zip archive written by torch.save")
    if head.startswith(_LEGACY_MAGIC) or head[257:262] == b"ustar":
        raise RuntimeError(
            f"{what} is a PyTorch file in the legacy format (before PyTorch 1.6, not a zip archive); dyn.load reads "
            "the zip format torch.save writes since 1.6: load it in PyTorch and save it again"
        )
    if head[:1] == b"\x80":
        raise RuntimeError(
            f"{what} is a plain pickle, not a zip archive written by torch.save; if it is yours, use pickle.load"
        )
    raise RuntimeError(f"{what} is not a zip archive written by torch.save: it starts with {head[:8]!r}, expected b'PK\\x03\\x04'")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Loads an object saved by torch.save or dyn.save from f (a path or a binary file object).

    weights_only defaults to True, as in PyTorch 2.6: only tensors, containers, numbers and strings.
    mmap is accepted and ignored (the storages are read into memory)."""
    if pickle_module not in (None, pickle):
        raise NotImplementedError(f"dyn.load unpickles with the standard pickle module, got pickle_module={pickle_module!r}")
    restore = _restorer(map_location)
    weights_only = weights_only is None or bool(weights_only)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fileobj:
            return _load(fileobj, repr(os.fspath(f)), restore, weights_only, pickle_load_args)
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load(f, "the file object", restore, weights_only, pickle_load_args)


def _load(fileobj, what, restore, weights_only, pickle_load_args):
    start = fileobj.tell()
    _check_start(fileobj.read(512), what)
    fileobj.seek(start)
    try:
        with zipfile.ZipFile(fileobj) as zf:
            archive = _Archive(zf, what)
            unpickler = _Unpickler(io.BytesIO(archive.read("data.pkl")), archive, restore, weights_only,
                                   **pickle_load_args)
            return unpickler.load()
    except (zipfile.BadZipFile, zlib.error, EOFError, struct.error) as e:
        raise RuntimeError(
            f"{what} starts like a zip archive but cannot be read ({e}); it is truncated or corrupted"
        ) from None
