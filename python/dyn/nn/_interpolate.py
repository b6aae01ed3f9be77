"""interpolate (nearest, nearest-exact, linear, bilinear, area) of dyn.nn.functional.

Each spatial dim is resampled on its own with index_select and, for the linear modes, a lerp of
two gathered neighbours with constant weights; source coordinates follow PyTorch's rules
(half-pixel centres unless align_corners=True; 1 / scale_factor when one is given).
"""
import math

import dyn

from ._pool import adaptive_avg_pool1d, adaptive_avg_pool2d
from ._util import check_tensor

_LINEAR = {"linear": 1, "bilinear": 2}


def _source(out, n, scale, align_corners, mode):
    """(i0, i1, weight of i1) per output position along a dim of size n."""
    rows = []
    for i in range(out):
        if mode == "nearest":
            j = min(int(math.floor(i * scale)), n - 1)
            rows.append((j, j, 0.0))
            continue
        if mode == "nearest-exact":
            j = min(int(math.floor((i + 0.5) * scale)), n - 1)
            rows.append((j, j, 0.0))
            continue
        if align_corners:
            src = i * (n - 1) / (out - 1) if out > 1 else 0.0
        else:
            src = max((i + 0.5) * scale - 0.5, 0.0)
        j = min(int(math.floor(src)), n - 1)
        rows.append((j, min(j + 1, n - 1), src - j))
    return rows


def _resample(x, dim, out, scale, align_corners, mode):
    n = x.shape[dim]
    rows = _source(out, n, scale, align_corners, mode)
    lo = x.index_select(dim, dyn.tensor([r[0] for r in rows], dtype=dyn.int64))
    if mode.startswith("nearest"):
        return lo
    hi = x.index_select(dim, dyn.tensor([r[1] for r in rows], dtype=dyn.int64))
    shape = [1] * x.ndim
    shape[dim] = out
    w = dyn.tensor([r[2] for r in rows], dtype=x.dtype).reshape(shape)
    return lo + (hi - lo) * w


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """Resizes the trailing spatial dims of [N, C, *spatial] input to size (or spatial * scale_factor)."""
    check_tensor("interpolate", "input", input)
    spatial = input.ndim - 2
    if spatial < 1:
        raise ValueError(f"interpolate: expected an input of shape [N, C, *spatial], got {list(input.shape)}")
    if mode not in ("nearest", "nearest-exact", "linear", "bilinear", "area"):
        raise NotImplementedError(f"interpolate: mode '{mode}' is not supported by dyn (nearest, nearest-exact, "
                                  "linear, bilinear and area are)")
    if mode in _LINEAR and spatial != _LINEAR[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_LINEAR[mode] + 2}D input")
    if align_corners is not None and mode not in _LINEAR:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported by dyn")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    sizes_in = tuple(input.shape[2:])
    if size is not None:
        size = (size,) * spatial if isinstance(size, int) else tuple(size)
        if len(size) != spatial:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(sizes_in)} and output size of {list(size)}.")
        scales = [n / o for n, o in zip(sizes_in, size)]
    else:
        factors = (scale_factor,) * spatial if isinstance(scale_factor, (int, float)) else tuple(scale_factor)
        size = tuple(int(math.floor(n * f)) for n, f in zip(sizes_in, factors))
        scales = [n / o for n, o in zip(sizes_in, size)] if recompute_scale_factor else [1.0 / f for f in factors]
    if mode == "area":
        return (adaptive_avg_pool1d if spatial == 1 else adaptive_avg_pool2d)(input, size)
    out = input
    for k in range(spatial):
        out = _resample(out, 2 + k, size[k], scales[k], bool(align_corners), mode)
    return out
