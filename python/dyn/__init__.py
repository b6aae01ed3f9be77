"""dyn: a small tensor library with PyTorch's names and semantics, built into dynrepl."""
import builtins as _builtins  # dyn.bool and dyn.float below shadow the builtins in this module

import _dyn
from _dyn import (  # noqa: F401
    Tensor, Size, bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, tensor, from_numpy,
    zeros, ones, empty, full, rand, randn, randint, arange, zeros_like, ones_like, empty_like, rand_like, randn_like,
    full_like, cat, stack, where, manual_seed, initial_seed, set_num_threads, get_num_threads, get_default_dtype,
    set_default_dtype, blas_info, is_tensor, __version__,
)

float = float32
double = float64
half = float16
long = int64
int = int32
short = int16
dtype = type(float32)


class _UnsupportedDType:
    """A PyTorch dtype dyn does not have: naming it works, using it raises a TypeError."""

    def __init__(self, name, instead):
        self._name, self._instead = name, instead
        self._unsupported_message = f"dyn has no {name} dtype; use {instead}"

    def __repr__(self):
        return f"dyn.{self._name} (not supported by dyn)"

    def __getattr__(self, attr):
        if attr.startswith("_"):
            raise AttributeError(attr)
        raise TypeError(self._unsupported_message)

    is_floating_point = False  # the complex dtypes are the ones left


complex64 = cfloat = _UnsupportedDType("complex64", "a real dtype")
complex128 = cdouble = _UnsupportedDType("complex128", "a real dtype")

from . import _ops  # noqa: E402
from . import _functional  # noqa: E402  (registers its methods with _ops before install)
from . import _scans  # noqa: E402,F401  (cumprod, cummax, cummin: methods registered the same way)
from . import _statistics, _pointwise  # noqa: E402,F401  (var, norm, ...; square, lerp, ...: the same way)
from . import _composites  # noqa: E402  (copysign, nansum, scatter_reduce, kron, ...: the same way)
from ._torch_api import *  # noqa: E402,F401,F403
from ._dtypes import *  # noqa: E402,F401,F403
from ._torch_api import device, CPU as _CPU  # noqa: E402
from . import random  # noqa: E402,F401  (torch.random)

globals().update(_ops.install(lambda self: _CPU))
globals().update(_composites.FUNCTIONS)  # torch.tril_indices, torch.hann_window, ... (not Tensor methods)
globals().update(_functional.FUNCTIONS)

# Functions that take a tensor first are the Tensor methods themselves: dyn.exp(x) is Tensor.exp(x).
# The op table's rows marked F, then the names bound by hand.
for _row in _dyn._op_table():
    if "F" in _row["python"] and _row["name"] not in globals():
        globals()[_row["name"]] = getattr(Tensor, _row["name"])
for _name in "clip max min reshape flatten transpose index_select numel clone detach t all any select".split():
    globals()[_name] = getattr(Tensor, _name)
del _name, _row
# clamp with tensor bounds (torch.clamp(x, min=lo_t, max=hi_t)) around the op table's, which takes numbers
clamp, _clamp_ = _pointwise.tensor_bound_clamps("clamp", Tensor.clamp, Tensor.clamp_)
clip, _clip_ = _pointwise.tensor_bound_clamps("clip", Tensor.clamp, Tensor.clamp_)
_dyn._add_tensor_methods({"clamp": clamp, "clip": clip, "clamp_": _clamp_, "clip_": _clip_})

negative = neg

# out= as torch functions take it (torch.add(a, b, out=c)): the result is written into out, which
# is returned. Functions only: the Tensor methods take no out=, as in PyTorch. Creation functions
# make their result in out's dtype.
for _name in ("add sub mul div true_divide matmul mm bmm mv dot outer cat stack exp log sqrt rsqrt abs neg tanh "
              "sigmoid pow clamp maximum minimum addmm cumsum sin cos floor ceil round sign erf log1p expm1 "
              "remainder lerp addcmul addcdiv sum mean prod logsumexp argmax argmin").split():
    if _name in globals():
        globals()[_name] = _dyn._with_out(globals()[_name], _name, False)
for _name in "zeros ones full arange rand randn randint linspace logspace eye randperm".split():
    if _name in globals():
        globals()[_name] = _dyn._with_out(globals()[_name], _name, True)
del _name
negative = neg


class return_types:
    """Named tuples returned by reductions, as torch.return_types."""

    max = _dyn.max_return_type
    min = _dyn.max_return_type


from ._grad_mode import _GradMode  # noqa: E402


def no_grad():
    """Context manager (or decorator): ops inside record no gradients."""
    return _GradMode(False)


def enable_grad():
    """Context manager (or decorator): ops inside record gradients again."""
    return _GradMode(True)


class set_grad_enabled(_GradMode):
    """set_grad_enabled(mode): sets grad mode now; also usable as a context manager."""

    def __init__(self, mode):
        super().__init__(mode)
        self._prev = _dyn.is_grad_enabled()
        _dyn._set_grad_enabled(mode)

    def __enter__(self):
        return self


is_grad_enabled = _dyn.is_grad_enabled


def equal(input, other):
    """True if both tensors have the same shape and elements (as torch.equal)."""
    return input.shape == other.shape and _builtins.bool((input == other).all())


def is_floating_point(input):
    return input.dtype.is_floating_point


_dyn._set_package_dir(__path__[0] + "/")
sync = _dyn.sync
GraphBreakError = _dyn.GraphBreakError

from . import nn  # noqa: E402,F401
from . import optim  # noqa: E402,F401
from . import debug  # noqa: E402,F401
from ._compile import compile, mark_dynamic, maybe_mark_dynamic, mark_static, InvalidBackend, LiftMismatch  # noqa: E402,F401
from . import autograd, cuda, amp, backends, compiler, linalg, accelerator, distributed  # noqa: E402,F401
from . import sparse  # noqa: E402,F401
from .sparse import sparse_coo_tensor, spmm, sparse_coo, strided, layout  # noqa: E402,F401
_dyn._add_tensor_methods({"to_sparse": sparse.to_sparse})
from ._lapack import TORCH_FUNCTIONS as _LAPACK_FUNCTIONS  # noqa: E402
globals().update(_LAPACK_FUNCTIONS)  # torch.inverse, torch.det, torch.svd, ...
_dyn._add_tensor_methods(_LAPACK_FUNCTIONS)  # A.inverse(), A.det(), ...
from . import special  # noqa: E402
globals().update(special.TORCH_FUNCTIONS)  # torch.lgamma, torch.erfinv, ...
_dyn._add_tensor_methods(special.TENSOR_METHODS)
from . import distributions  # noqa: E402,F401
from .distributions.poisson import poisson  # noqa: E402,F401  (torch.poisson)
from .amp import autocast, is_autocast_enabled, get_autocast_dtype  # noqa: E402,F401


def is_autocast_cpu_enabled():
    return is_autocast_enabled("cpu")


def get_autocast_cpu_dtype():
    return get_autocast_dtype("cpu")

from .nn import Parameter as _Parameter  # noqa: E402,F401

from . import utils, serialization  # noqa: E402,F401
from .serialization import save, load  # noqa: E402,F401

# numpy's names for the inverse trigonometric functions, which PyTorch has too (torch.arcsin, x.arccos())
_ALIASES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
            "arctanh": "atanh", "arctan2": "atan2"}
globals().update({a: globals()[n] for a, n in _ALIASES.items() if n in globals()})
_dyn._add_tensor_methods({a: getattr(Tensor, n) for a, n in _ALIASES.items() if hasattr(Tensor, n)})
