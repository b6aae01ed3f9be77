"""The dtype table as PyTorch's namespace shows it: promotion (promote_types, result_type,
can_cast), the limits of each dtype (finfo, iinfo) and the legacy typed constructors
(torch.IntTensor, ...). The dtypes themselves and their promotion table live in the engine
(core/dtype.cpp); this module names them."""
import builtins
import functools
import numbers

import _dyn
from _dyn import Tensor, promote_types


REDUCED = (_dyn.float16, _dyn.bfloat16)


def computes_in_float32(fn):
    """fn(input, ...) for a float16 or bfloat16 input: run on the float32 values of input and of the
    other tensors of its dtype, and each result rounded back once. Ops that dyn composes of several
    (var, norm, normalize...) would otherwise round every step and overflow where PyTorch's kernels,
    which accumulate in float32, do not (a float16 norm of [300, 300] is 424, not inf)."""
    @functools.wraps(fn)
    def wrapper(input, *args, **kwargs):
        if not (isinstance(input, Tensor) and input.dtype in REDUCED):
            return fn(input, *args, **kwargs)
        d = input.dtype
        up = lambda v: v.float() if isinstance(v, Tensor) and v.dtype == d else v  # noqa: E731
        out = fn(input.float(), *[up(a) for a in args], **{k: up(v) for k, v in kwargs.items()})
        if isinstance(out, tuple):
            return type(out)(o.to(d) if isinstance(o, Tensor) and o.dtype == _dyn.float32 else o for o in out)
        return out.to(d) if isinstance(out, Tensor) and out.dtype == _dyn.float32 else out
    return wrapper


def _category(dtype):
    return 2 if dtype.is_floating_point else 0 if dtype == _dyn.bool else 1


def _scalar_dtype(x):
    if isinstance(x, builtins.bool):
        return _dyn.bool
    if isinstance(x, numbers.Integral):
        return _dyn.int64
    if isinstance(x, numbers.Real):
        return _dyn.get_default_dtype()
    raise TypeError(f"result_type(): arguments must be tensors or numbers, got {type(x).__name__}")


def result_type(tensor1, tensor2):
    """The dtype an op on these operands computes in: tensors with dims decide, then 0-dim tensors,
    then Python numbers, each lower group counting only when it is of a higher category (bool <
    integer < float)."""
    groups = [None, None, None]  # tensors with dims, 0-dim tensors, numbers
    for x in (tensor1, tensor2):
        k, d = (0 if x.dim() else 1, x.dtype) if isinstance(x, Tensor) else (2, _scalar_dtype(x))
        groups[k] = d if groups[k] is None else promote_types(groups[k], d)
    result = None
    for d in groups:
        if d is None:
            continue
        if result is None:
            result = d
        elif _category(d) > _category(result):
            result = promote_types(result, d)
    return result


def can_cast(from_, to):
    """Whether an op may write a result of dtype from_ into a tensor of dtype to (no float to
    integer, nothing but bool to bool)."""
    if from_.is_floating_point and not to.is_floating_point:
        return False
    return not (from_ != _dyn.bool and to == _dyn.bool)


class finfo:
    """Machine limits of a float dtype (torch.finfo)."""

    # bits, eps, max, smallest normal, resolution
    _TABLE = {
        "float16": (16, 0.0009765625, 65504.0, 6.103515625e-05, 0.001),
        "bfloat16": (16, 0.0078125, 3.3895313892515355e38, 1.1754943508222875e-38, 0.01),
        "float32": (32, 1.1920928955078125e-07, 3.4028234663852886e38, 1.1754943508222875e-38, 1e-06),
        "float64": (64, 2.220446049250313e-16, 1.7976931348623157e308, 2.2250738585072014e-308, 1e-15),
    }

    def __init__(self, type=None):
        type = type or _dyn.get_default_dtype()
        name = str(type).split(".")[-1]
        if name not in self._TABLE:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        self.bits, self.eps, self.max, self.tiny, self.resolution = self._TABLE[name]
        self.min = -self.max
        self.smallest_normal = self.tiny
        self.dtype = name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype (torch.iinfo)."""

    _BITS = {"uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64}

    def __init__(self, type):
        name = str(type).split(".")[-1]
        if name not in self._BITS:
            raise TypeError(f"torch.{name} is not supported by torch.iinfo")
        self.bits = self._BITS[name]
        self.min, self.max = (0, 2 ** self.bits - 1) if name == "uint8" else (-(2 ** (self.bits - 1)),
                                                                                2 ** (self.bits - 1) - 1)
        self.dtype = name

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def _legacy_tensor_type(dtype, name):
    def make(*args):
        """The pre-0.4 constructor: a list or array gives its values, sizes give an uninitialized tensor."""
        if len(args) == 1 and not isinstance(args[0], builtins.int):
            return _dyn.tensor(args[0], dtype=dtype) if not isinstance(args[0], Tensor) else args[0].to(dtype)
        return _dyn.empty(*args, dtype=dtype)

    make.__name__ = name
    return make


FloatTensor = _legacy_tensor_type(_dyn.float32, "FloatTensor")
DoubleTensor = _legacy_tensor_type(_dyn.float64, "DoubleTensor")
LongTensor = _legacy_tensor_type(_dyn.int64, "LongTensor")
BoolTensor = _legacy_tensor_type(_dyn.bool, "BoolTensor")


FloatTensor = _legacy_tensor_type(_dyn.float32, "FloatTensor")
DoubleTensor = _legacy_tensor_type(_dyn.float64, "DoubleTensor")
HalfTensor = _legacy_tensor_type(_dyn.float16, "HalfTensor")
BFloat16Tensor = _legacy_tensor_type(_dyn.bfloat16, "BFloat16Tensor")
LongTensor = _legacy_tensor_type(_dyn.int64, "LongTensor")
IntTensor = _legacy_tensor_type(_dyn.int32, "IntTensor")
ShortTensor = _legacy_tensor_type(_dyn.int16, "ShortTensor")
CharTensor = _legacy_tensor_type(_dyn.int8, "CharTensor")
ByteTensor = _legacy_tensor_type(_dyn.uint8, "ByteTensor")
BoolTensor = _legacy_tensor_type(_dyn.bool, "BoolTensor")

__all__ = [
    "promote_types", "result_type", "can_cast", "finfo", "iinfo", "FloatTensor", "DoubleTensor",
    "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor",
]
