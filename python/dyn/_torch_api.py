"""The rest of PyTorch's top-level namespace that real programs use: devices, generators,
creation functions (linspace, eye, ...), random sampling, einsum, dtype information."""
import builtins
import collections
import math
import re

import _dyn
from _dyn import Tensor

from . import _ops
from ._grad_mode import _GradMode


class device:
    """torch.device: 'cpu' (dyn's only device) or 'xla' (torch_xla, mapped onto the CPU).

    Other types ('cuda', 'mps') can be named, as PyTorch allows, but tensors cannot be put there.
    """

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, builtins.int):
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(f"device() expected a str like 'cpu', got {builtins.type(type).__name__}")
        m = re.fullmatch(r"([a-z_]+)(?::(\d+))?", type)
        if not m:
            raise RuntimeError(f"Invalid device string: '{type}'")
        if m.group(2) is not None:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {type}")
            index = builtins.int(m.group(2))
        object.__setattr__(self, "type", m.group(1))
        object.__setattr__(self, "index", index)

    def __setattr__(self, name, value):
        raise AttributeError("dyn.device is immutable")

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __enter__(self):  # `with torch.device("cpu"):` sets the default device in PyTorch
        _dyn._check_device("device", self)
        return self

    def __exit__(self, *exc):
        return False

    def __reduce__(self):
        return (device, (self.type, self.index))


CPU = device("cpu")


class Generator:
    """torch.Generator: its own random stream (seed and position), passed as generator=."""

    def __init__(self, device="cpu"):
        _dyn._check_device("Generator", device)
        self._seed = 67280421310721
        self._offset = 0

    def manual_seed(self, seed):
        self._seed = builtins.int(seed) & 0xFFFFFFFFFFFFFFFF
        self._offset = 0
        return self

    def seed(self):
        import random

        return self.manual_seed(random.getrandbits(63))._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return _state_tensor(self._seed, self._offset)

    def set_state(self, state):
        self._seed, self._offset = _state_of(state)
        return self

    @property
    def device(self):
        return CPU


def get_rng_state():
    """torch.get_rng_state: the default generator's state, for set_rng_state. dyn's generator is
    counter-based (a seed and a position), so the state is the int64 tensor Generator.get_state
    gives (PyTorch's is a uint8 tensor of its Mersenne Twister's 5056 bytes)."""
    return _state_tensor(*_dyn._rng_state())


def set_rng_state(new_state):
    """torch.set_rng_state: puts back a state get_rng_state returned."""
    _dyn._rng_state(_state_of(new_state))


def _state_tensor(seed, offset):
    return _dyn.tensor([seed & 0x7FFFFFFFFFFFFFFF, seed >> 63, offset], dtype=_dyn.int64)


def _state_of(state):
    if not isinstance(state, Tensor):
        raise TypeError(f"expected the state get_rng_state() returns (an int64 tensor of 3 values), but got "
                        f"{type(state).__name__}")
    if state.dtype != _dyn.int64 or tuple(state.shape) != (3,):
        raise TypeError(f"RNG state must be the int64 tensor of 3 values get_rng_state() returns (dyn's generator "
                        f"is counter-based); got {state.dtype} of shape {list(state.shape)}")
    lo, hi, off = state.tolist()
    if lo < 0 or hi not in (0, 1) or off < 0:
        raise RuntimeError(f"RNG state {[lo, hi, off]} is not one get_rng_state() returns")
    return (lo | (hi << 63), off)


def _n(v):
    return v.item() if isinstance(v, Tensor) else v


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """steps evenly spaced values from start to end (both included), as PyTorch computes them."""
    _dyn._check_device("linspace", device)
    start, end = _n(start), _n(end)
    if steps < 0:
        raise RuntimeError("linspace(): number of steps must be non-negative")
    dtype = dtype or _dyn.get_default_dtype()
    if steps == 1:
        return _dyn.full((1,), start, dtype=dtype, requires_grad=requires_grad)
    step = (end - start) / (steps - 1)
    i = _dyn.arange(steps, dtype=_dyn.float64)
    # The first half counts up from start, the second down from end (as PyTorch's kernel), so both
    # ends are exact.
    half = steps // 2
    out = _dyn.where(i < half, start + step * i, end - step * (steps - 1 - i)).to(dtype)
    if requires_grad:
        out.requires_grad_(True)
    return out


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    dtype = dtype or _dyn.get_default_dtype()
    out = (base ** linspace(start, end, steps, dtype=_dyn.float64)).to(dtype)
    if requires_grad:
        out.requires_grad_(True)
    return out


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    _dyn._check_device("eye", device)
    m = n if m is None else m
    out = (_dyn.arange(n).view(n, 1) == _dyn.arange(m).view(1, m)).to(dtype or _dyn.get_default_dtype())
    if requires_grad:
        out.requires_grad_(True)
    return out


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of 0..n-1 (argsort of uniform draws)."""
    _dyn._check_device("randperm", device)
    out = _ops.argsort(_dyn.rand(n, dtype=_dyn.float64, generator=generator))
    return out if dtype is None or dtype == _dyn.int64 else out.to(dtype)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices drawn from the rows of input (non-negative weights, not necessarily normalized)."""
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype}")
    n = input.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    p = input if input.dim() == 2 else input.unsqueeze(0)
    rows = p.shape[0]
    if p.numel() and not _dyn._capture_active():  # (reads the weights: inside dyn.compile, left to the user)
        if not bool(((p >= 0) & (p != math.inf)).all()):  # NaN fails p >= 0
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if not bool((p.sum(1) > 0).all()):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if replacement:
        # Inverse CDF: the first index whose cumulative weight exceeds u * total.
        c = _ops.cumsum(p.to(_dyn.float64), 1)
        u = _dyn.rand(rows, num_samples, dtype=_dyn.float64, generator=generator) * c[:, -1:]
        idx = (c.unsqueeze(1) <= u.unsqueeze(2)).sum(2).clamp(max=n - 1)
    else:
        # Gumbel top-k: the k largest log(p) - log(-log(u)) are a draw without replacement.
        u = _dyn.rand(rows, n, dtype=_dyn.float64, generator=generator)
        keys = _dyn.where(p > 0, p.to(_dyn.float64).log() - (-(u.clamp(min=1e-300)).log()).log(),
                          _dyn.full((), -math.inf, dtype=_dyn.float64))
        idx = _ops.topk(keys, num_samples, 1).indices
    return idx if input.dim() == 2 else idx.squeeze(0)


def bernoulli(input, p=None, *, generator=None):
    prob = input if p is None else _dyn.full(tuple(input.shape), p, dtype=input.dtype)
    return (_dyn.rand(*input.shape, dtype=_dyn.float64, generator=generator) < prob.detach()).to(input.dtype)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None):
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        shape = (mean if isinstance(mean, Tensor) else std).shape
        return mean + std * _dyn.randn(*shape, dtype=(mean if isinstance(mean, Tensor) else std).dtype,
                                       generator=generator)
    return mean + std * _dyn.randn(*size, dtype=dtype, device=device, generator=generator)


def randint_like(input, low=0, high=None, *, dtype=None):
    if high is None:
        low, high = 0, low
    return _dyn.randint(low, high, tuple(input.shape), dtype=dtype or input.dtype)


def as_tensor(data, dtype=None, device=None):
    _dyn._check_device("as_tensor", device)
    if isinstance(data, Tensor):
        return data if dtype is None or dtype == data.dtype else data.to(dtype)
    try:
        import numpy as np

        if isinstance(data, np.ndarray) and (dtype is None or _dyn.from_numpy(data[:0]).dtype == dtype):
            return _dyn.from_numpy(data)
    except (ImportError, TypeError):
        pass
    return _dyn.tensor(data, dtype=dtype)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    t = as_tensor(obj, dtype, device)
    if copy:
        t = t.clone()
    if requires_grad:
        t.requires_grad_(True)
    return t


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return _dyn.tensor(s, dtype=dtype or _dyn.get_default_dtype(), device=device, requires_grad=requires_grad)


def _values(t):
    """t's values as a numpy array (bfloat16, which numpy lacks, as float32: exactly)."""
    t = t.detach()
    return (t.float() if t.dtype == _dyn.bfloat16 else t).numpy()


def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero elements (their number depends on the values: a graph break)."""
    import numpy as np

    idx = np.nonzero(_values(input))
    if as_tuple:
        return tuple(_dyn.tensor(i.astype(np.int64), dtype=_dyn.int64) for i in idx)
    return _dyn.tensor(np.stack(idx, 1).astype(np.int64), dtype=_dyn.int64).view(-1, input.dim())


def argwhere(input):
    return nonzero(input)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Distinct values (their number depends on the values: a graph break)."""
    import numpy as np

    if dim is not None:
        raise NotImplementedError("unique(dim=...) is not supported by dyn; use unique() on a flattened tensor")
    r = np.unique(_values(input), return_inverse=return_inverse, return_counts=return_counts)
    if not isinstance(r, tuple):
        return _dyn.tensor(r, dtype=input.dtype)
    out = [_dyn.tensor(r[0], dtype=input.dtype)]
    for extra in r[1:]:
        out.append(_dyn.tensor(extra.astype(np.int64), dtype=_dyn.int64))
    if return_inverse:
        out[1] = out[1].view(*input.shape)
    return tuple(out)


def bincount(input, weights=None, minlength=0):
    if input.dtype != _dyn.int64 and not input.dtype.is_floating_point:
        input = input.long()  # the counts index with it
    n = builtins.max(builtins.int(input.max()) + 1 if input.numel() else 0, minlength)
    w = weights if weights is not None else _dyn.ones(input.shape[0], dtype=_dyn.int64)
    return _ops.index_add(_dyn.zeros(n, dtype=w.dtype), 0, input, w)


def meshgrid(*tensors, indexing="ij"):
    tensors = _ops._dims_arg(tensors) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    if indexing not in ("ij", "xy"):
        raise ValueError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    ts = list(tensors)
    if indexing == "xy" and len(ts) >= 2:
        ts[0], ts[1] = ts[1], ts[0]
    shape = [t.numel() for t in ts]
    out = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        out.append(t.reshape(*view).expand(*shape))
    if indexing == "xy" and len(out) >= 2:
        out = [o.transpose(0, 1) for o in out]
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def cartesian_prod(*tensors):
    grids = meshgrid(*tensors)
    return _dyn.stack([g.reshape(-1) for g in grids], 1) if len(grids) > 1 else tensors[0]


def hstack(tensors):
    return _dyn.cat(tensors, 0 if tensors[0].dim() == 1 else 1)


def vstack(tensors):
    return _dyn.cat([t.view(1, -1) if t.dim() == 1 else t for t in tensors], 0)


def column_stack(tensors):
    return _dyn.cat([t.view(-1, 1) if t.dim() <= 1 else t for t in tensors], 1)


def block_diag(*tensors):
    rows = builtins.sum(t.shape[0] for t in tensors)
    cols = builtins.sum(t.shape[1] for t in tensors)
    parts, c = [], 0
    for t in tensors:
        parts.append(_dyn.cat([_dyn.zeros(t.shape[0], c, dtype=t.dtype), t,
                               _dyn.zeros(t.shape[0], cols - c - t.shape[1], dtype=t.dtype)], 1))
        c += t.shape[1]
    return _dyn.cat(parts, 0) if parts else _dyn.zeros(rows, cols)


def einsum(equation, *operands):
    """Einstein summation for explicit or implicit output, one or two operands at a time (left to
    right), lowered to permute/reshape/matmul/sum."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    lhs, _, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum(): {len(terms)} operands in the equation, {len(operands)} given")
    ell = ""
    if "..." in eq:
        terms, rhs, ell = _einsum_ellipsis(terms, rhs if _ else None, operands)
        operands = _einsum_broadcast(terms, operands)
    if not _:
        counts = collections.Counter("".join(terms))
        rhs = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    x, xs = operands[0], terms[0]
    x, xs = _einsum_single(x, xs, keep=set(rhs) | set("".join(terms[1:])))
    for y, ys in zip(operands[1:], terms[1:]):
        rest = set(rhs) | set("".join(terms[terms.index(ys) + 1:]))
        y, ys = _einsum_single(y, ys, keep=rest | set(xs))
        x, xs = _einsum_pair(x, xs, y, ys, rest)
    x, xs = _einsum_single(x, xs, keep=set(rhs))
    return x.permute(*[xs.index(c) for c in rhs]) if xs != rhs else x


def _einsum_ellipsis(terms, rhs, operands):
    """'...' written out as letters the equation does not use, right-aligned across operands (as
    broadcasting aligns dims); returns the terms, the output (None: implicit) and those letters."""
    used = set("".join(terms) + (rhs or ""))
    free = [c for c in reversed("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") if c not in used]
    counts = []
    for t, x in zip(terms, operands):
        if t.count("...") > 1:
            raise RuntimeError("einsum(): found more than one '...' in the equation")
        k = x.dim() - (len(t) - 3) if "..." in t else 0
        if k < 0:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(t) - 3}) is more than "
                               f"the number of dimensions ({x.dim()}) for operand {terms.index(t)}")
        counts.append(k)
    m = max(counts) if counts else 0
    letters = "".join(free[:m][::-1])
    terms = [t.replace("...", letters[m - k:]) if "..." in t else t for t, k in zip(terms, counts)]
    if rhs is not None:
        rhs = rhs.replace("...", letters)
    return terms, rhs, letters


def _einsum_broadcast(terms, operands):
    """Each letter's size is the largest among operands; dims of size 1 expand to it."""
    size = {}
    for t, x in zip(terms, operands):
        for c, n in zip(t, x.shape):
            if size.get(c, 1) == 1:
                size[c] = n
            elif n not in (1, size[c]):
                raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes (original->remapped): "
                                   f"subscript {c} has size {n} for one operand and {size[c]} for another")
    return tuple(x.expand(*[size[c] for c in t]) if tuple(x.shape) != tuple(size[c] for c in t) else x
                 for t, x in zip(terms, operands))


def _einsum_single(x, s, keep):
    # Repeated letters take the diagonal; letters nobody needs are summed out.
    while len(set(s)) != len(s):
        c = next(c for c in s if s.count(c) > 1)
        i, j = s.index(c), s.index(c, s.index(c) + 1)
        x = _ops.diagonal(x, 0, i, j)
        s = "".join(ch for k, ch in enumerate(s) if k not in (i, j)) + c
    drop = [i for i, c in enumerate(s) if c not in keep]
    if drop:
        x = x.sum(tuple(drop))
        s = "".join(c for c in s if c in keep)
    return x, s


def _einsum_pair(x, xs, y, ys, rest):
    batch = [c for c in xs if c in ys and c in rest]
    contract = [c for c in xs if c in ys and c not in rest]
    xonly = [c for c in xs if c not in ys]
    yonly = [c for c in ys if c not in xs]
    size = {c: x.shape[i] for i, c in enumerate(xs)}
    size.update({c: y.shape[i] for i, c in enumerate(ys)})

    def prod(cs):
        p = 1
        for c in cs:
            p *= size[c]
        return p

    xp = x.permute(*[xs.index(c) for c in batch + xonly + contract]).reshape(prod(batch), prod(xonly), prod(contract))
    yp = y.permute(*[ys.index(c) for c in batch + contract + yonly]).reshape(prod(batch), prod(contract), prod(yonly))
    out = xp.matmul(yp).reshape(*[size[c] for c in batch + xonly + yonly])
    return out, "".join(batch + xonly + yonly)


_matmul_precision = ["highest"]


def set_float32_matmul_precision(precision):
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision '{precision}': expected 'highest', 'high' or 'medium'")
    _matmul_precision[0] = precision  # dyn's float32 matmul is always full precision


def get_float32_matmul_precision():
    return _matmul_precision[0]


def set_default_device(device_):
    _dyn._check_device("set_default_device", device_)


def get_default_device():
    return CPU


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Accepted for compatibility; dyn prints with its own fixed options."""


def is_nonzero(input):
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input)


def numel(input):
    return input.numel()


def use_deterministic_algorithms(mode, *, warn_only=False):
    """dyn's kernels are deterministic already."""


def are_deterministic_algorithms_enabled():
    return True


def seed():
    import random

    s = random.getrandbits(63)
    _dyn.manual_seed(s)
    return s


class inference_mode(_GradMode):
    """torch.inference_mode: no gradients inside (a context manager or a decorator, with or
    without parentheses)."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, builtins.bool):  # @inference_mode without ()
            return cls(True)(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        super().__init__(False if mode else None)


def is_inference_mode_enabled():
    return not _dyn.is_grad_enabled()


_RANDOM_TOP = {"float16": 2 ** 11 + 1, "bfloat16": 2 ** 8 + 1, "float32": 2 ** 24 + 1, "float64": 2 ** 53 + 1,
               "bool": 2, "uint8": 2 ** 8, "int8": 2 ** 7, "int16": 2 ** 15, "int32": 2 ** 31, "int64": 2 ** 63 - 1}


def _random_methods():
    """In-place random fills: Tensor.uniform_, normal_, bernoulli_, random_, exponential_."""

    def _fill(self, values):
        # (in grad mode a write with history: the old values' gradient is zero, as PyTorch's)
        return self.copy_(values.detach())

    def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kw):
        lo, hi = kw.get("a", from_), kw.get("b", to)
        return _fill(self, _dyn.rand(*self.shape, dtype=self.dtype, generator=generator) * (hi - lo) + lo)

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        return _fill(self, _dyn.randn(*self.shape, dtype=self.dtype, generator=generator) * std + mean)

    def bernoulli_(self, p=0.5, *, generator=None):
        return _fill(self, bernoulli(self, p, generator=generator))

    def exponential_(self, lambd=1.0, *, generator=None):
        u = _dyn.rand(*self.shape, dtype=self.dtype, generator=generator)
        return _fill(self, -(1.0 - u).log() / lambd)

    def random_(self, from_=0, to=None, *, generator=None):
        if to is None:  # PyTorch's default range: every integer the dtype holds exactly
            from_, to = 0, from_ if from_ else _RANDOM_TOP.get(str(self.dtype).split(".")[-1], 2 ** 24)
        return _fill(self, _dyn.randint(from_, to, tuple(self.shape), generator=generator).to(self.dtype))

    def multinomial_m(self, num_samples, replacement=False, *, generator=None):
        return multinomial(self, num_samples, replacement, generator=generator)

    def bernoulli_m(self, p=None, *, generator=None):
        return bernoulli(self, p, generator=generator)

    return {"uniform_": uniform_, "normal_": normal_, "bernoulli_": bernoulli_, "exponential_": exponential_,
            "random_": random_, "multinomial": multinomial_m, "bernoulli": bernoulli_m}


_dyn._add_tensor_methods(_random_methods())
# Tensor.nonzero / argwhere, as torch.Tensor's
_dyn._add_tensor_methods({"nonzero": nonzero, "argwhere": argwhere})


def _in_place_function(name):
    def f(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"torch.{name}(input, ...): input.{name}(...), written in place"
    return f


# torch.relu_(x) and the other in-place functions of PyTorch's namespace
_IN_PLACE = ["relu_", "sigmoid_", "tanh_", "exp_", "log_", "sqrt_", "rsqrt_", "neg_", "abs_", "clamp_", "clamp_min_",
             "clamp_max_", "ceil_", "floor_", "round_", "trunc_", "sin_", "cos_", "erf_", "fill_", "zero_"]
globals().update({n: _in_place_function(n) for n in _IN_PLACE})

__all__ = _IN_PLACE + [
    "device", "Generator", "linspace", "logspace", "eye", "randperm", "multinomial", "bernoulli", "normal",
    "randint_like", "as_tensor", "asarray", "scalar_tensor", "nonzero", "argwhere", "unique", "bincount", "meshgrid",
    "cartesian_prod", "hstack", "vstack", "column_stack", "block_diag", "einsum",
    "set_float32_matmul_precision", "get_float32_matmul_precision", "set_default_device", "get_default_device",
    "set_printoptions", "is_nonzero", "numel", "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "seed", "inference_mode", "is_inference_mode_enabled",
    "get_rng_state", "set_rng_state",
]
