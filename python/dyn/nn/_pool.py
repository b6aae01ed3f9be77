"""Pooling of dyn.nn.functional: max, average and adaptive pools over 1, 2 or 3 trailing dims.

max and average pools stack one strided slice per kernel offset into windows [..., Ho, Wo, kh*kw]
and reduce the last dim (see Note [conv as one matmul] in _conv.py for the slicing). Adaptive pools
use PyTorch's bins: output i covers input [floor(i * n / out), ceil((i + 1) * n / out)).
"""
import dyn

from ._conv import pad
from ._util import check_tensor, ntuple


def _out_size(n, k, s, p, d, ceil_mode):
    span = n + 2 * p - d * (k - 1) - 1
    if ceil_mode:
        out = -(-span // s) + 1
        if (out - 1) * s >= n + p:  # the last window must start inside the input or its left padding
            out -= 1
        return out
    return span // s + 1


def _pool_args(fn, input, spatial, kernel_size, stride, padding, dilation):
    check_tensor(fn, "input", input)
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{fn}: expected a {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input, got "
                           f"input of size {list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: expected a floating point input, got {input.dtype}")
    k = ntuple(kernel_size, spatial, "kernel_size")
    s = k if stride is None or stride == () or stride == [] else ntuple(stride, spatial, "stride")
    p = ntuple(padding, spatial, "padding")
    d = ntuple(dilation, spatial, "dilation")
    if spatial == 1:  # a 1-d pool is a 2-d pool over height 1
        k, s, p, d = (1,) + k, (1,) + s, (0,) + p, (1,) + d
    if min(k) < 1 or min(s) < 1 or min(d) < 1:
        raise RuntimeError(f"{fn}: kernel_size, stride and dilation must be positive, got kernel_size={kernel_size}, "
                           f"stride={stride}, dilation={dilation}")
    return k, s, p, d


def _windows(x, k, s, p, d, ceil_mode, fill):
    """x [..., H, W] -> ([..., Ho, Wo, kh*kw], Ho, Wo); positions outside x hold fill."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = k, s, p, d
    h, w = x.shape[-2], x.shape[-1]
    ho, wo = _out_size(h, kh, sh, ph, dh, ceil_mode), _out_size(w, kw, sw, pw, dw, ceil_mode)
    if ho < 1 or wo < 1:
        raise RuntimeError(f"Given input size: ({'x'.join(str(v) for v in x.shape[1:])}). Calculated output size: "
                           f"({ho}x{wo}). Output size is too small")
    right = max((wo - 1) * sw + dw * (kw - 1) + 1 - w - pw, 0)
    bottom = max((ho - 1) * sh + dh * (kh - 1) + 1 - h - ph, 0)
    if ph or pw or right or bottom:
        x = pad(x, (pw, right, ph, bottom), value=fill)
    parts = [x[..., i * dh: i * dh + sh * (ho - 1) + 1: sh, j * dw: j * dw + sw * (wo - 1) + 1: sw]
             for i in range(kh) for j in range(kw)]
    return dyn.stack(parts, -1), ho, wo


def _max_pool(fn, spatial, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    k, s, p, d = _pool_args(fn, input, spatial, kernel_size, stride, padding, dilation)
    for kk, pp, dd in zip(k, p, d):
        if 2 * pp > dd * (kk - 1) + 1:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pp}, "
                               f"kernel_size={kk} and dilation={dd}")
    x = input.unsqueeze(-2) if spatial == 1 else input
    windows, ho, wo = _windows(x, k, s, p, d, ceil_mode, float("-inf"))
    values, picked = windows.max(-1)  # ties go to the first offset in row-major order, as PyTorch
    if spatial == 1:
        values = values.squeeze(-2)
    if not return_indices:
        return values
    # the flat index h * W + w of each maximum in the input
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = k, s, p, d
    row = (dyn.arange(ho) * sh - ph).reshape(ho, 1) + picked.floor_divide(kw) * dh
    col = (dyn.arange(wo) * sw - pw).reshape(1, wo) + picked.remainder(kw) * dw
    indices = row * x.shape[-1] + col
    return values, indices.squeeze(-2) if spatial == 1 else indices


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over kernel windows of [N, C, H, W] (or [C, H, W]); padding counts as -inf."""
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _divisors(n, k, s, p, out, count_include_pad):
    """Per output position: how many elements its window averages over (PyTorch's rule)."""
    result = []
    for i in range(out):
        start = i * s - p
        end = min(start + k, n + p)  # windows may reach into the padding but not past it
        result.append(end - start if count_include_pad else min(end, n) - max(start, 0))
    return result


def _avg_pool(fn, spatial, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    k, s, p, d = _pool_args(fn, input, spatial, kernel_size, stride, padding, 1)
    for kk, pp in zip(k, p):
        if 2 * pp > kk:
            raise RuntimeError(f"pad should be at most half of kernel size, but got pad={pp} and kernel_size={kk}")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    x = input.unsqueeze(-2) if spatial == 1 else input
    windows, ho, wo = _windows(x, k, s, p, d, ceil_mode, 0.0)
    total = windows.sum(-1)
    if divisor_override is not None:
        out = total / divisor_override
    else:
        rows = _divisors(x.shape[-2], k[0], s[0], p[0], ho, count_include_pad)
        cols = _divisors(x.shape[-1], k[1], s[1], p[1], wo, count_include_pad)
        if all(r == rows[0] for r in rows) and all(c == cols[0] for c in cols):
            out = total / (rows[0] * cols[0])
        else:
            out = total / dyn.tensor([[float(r * c) for c in cols] for r in rows], dtype=input.dtype)
    return out.squeeze(-2) if spatial == 1 else out


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over kernel windows of [N, C, H, W] (or [C, H, W]); zero padding counted unless
    count_include_pad=False."""
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def _depth_windows(y, k, s, p, d, ceil_mode, fill):
    """y [N, C, D, ...] -> [N, C, Do, ..., k]: the depth windows of a 3-d pool, whose (h, w) part
    was already pooled (max and sums are separable: over the window, then over depth)."""
    n = y.shape[2]
    out = _out_size(n, k, s, p, d, ceil_mode)
    if out < 1:
        raise RuntimeError(f"Given input size: {list(y.shape[1:])}. Calculated output depth: {out}. Output size is "
                           "too small")
    right = max((out - 1) * s + d * (k - 1) + 1 - n - p, 0)
    if p or right:
        amounts = [0, 0] * (y.ndim - 3) + [p, right]
        y = pad(y, tuple(amounts), value=fill)
    return dyn.stack([y[:, :, a * d: a * d + s * (out - 1) + 1: s] for a in range(k)], -1), out


def _pool3d_args(fn, input, kernel_size, stride, padding, dilation):
    check_tensor(fn, "input", input)
    if input.ndim not in (4, 5):
        raise RuntimeError(f"{fn}: expected a 4D (unbatched) or 5D (batched) input, got input of size "
                           f"{list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: expected a floating point input, got {input.dtype}")
    k = ntuple(kernel_size, 3, "kernel_size")
    s = k if stride is None or stride == () or stride == [] else ntuple(stride, 3, "stride")
    return k, s, ntuple(padding, 3, "padding"), ntuple(dilation, 3, "dilation")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over kernel windows of [N, C, D, H, W] (or [C, D, H, W]); padding counts as -inf."""
    _no_indices("max_pool3d", return_indices)
    k, s, p, d = _pool3d_args("max_pool3d", input, kernel_size, stride, padding, dilation)
    for kk, pp, dd in zip(k, p, d):
        if 2 * pp > dd * (kk - 1) + 1:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pp}, "
                               f"kernel_size={kk} and dilation={dd}")
    x = input.unsqueeze(0) if input.ndim == 4 else input
    plane = max_pool2d(x.reshape(-1, x.shape[3], x.shape[4]), k[1:], s[1:], p[1:], d[1:], ceil_mode)
    plane = plane.reshape(x.shape[0], x.shape[1], x.shape[2], plane.shape[-2], plane.shape[-1])
    windows, _ = _depth_windows(plane, k[0], s[0], p[0], d[0], ceil_mode, float("-inf"))
    out = windows.max(-1).values
    return out.squeeze(0) if input.ndim == 4 else out


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over kernel windows of [N, C, D, H, W] (or [C, D, H, W])."""
    k, s, p, _ = _pool3d_args("avg_pool3d", input, kernel_size, stride, padding, 1)
    for kk, pp in zip(k, p):
        if 2 * pp > kk:
            raise RuntimeError(f"pad should be at most half of kernel size, but got pad={pp} and kernel_size={kk}")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    x = input.unsqueeze(0) if input.ndim == 4 else input
    sums, ho, wo = _windows(x.reshape(-1, x.shape[3], x.shape[4]), k[1:], s[1:], p[1:], (1, 1), ceil_mode, 0.0)
    plane = sums.sum(-1).reshape(x.shape[0], x.shape[1], x.shape[2], ho, wo)
    windows, do = _depth_windows(plane, k[0], s[0], p[0], 1, ceil_mode, 0.0)
    total = windows.sum(-1)
    if divisor_override is not None:
        out = total / divisor_override
    else:
        deps = _divisors(x.shape[2], k[0], s[0], p[0], do, count_include_pad)
        rows = _divisors(x.shape[3], k[1], s[1], p[1], ho, count_include_pad)
        cols = _divisors(x.shape[4], k[2], s[2], p[2], wo, count_include_pad)
        counts = [[[float(a * r * c) for c in cols] for r in rows] for a in deps]
        out = total / dyn.tensor(counts, dtype=input.dtype)
    return out.squeeze(0) if input.ndim == 4 else out


def _bins(n, out):
    return [((i * n) // out, -(-((i + 1) * n) // out)) for i in range(out)]


def _adaptive_sizes(fn, input, spatial, output_size):
    check_tensor(fn, "input", input)
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{fn}: expected a {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input, got "
                           f"input of size {list(input.shape)}")
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * spatial
    output_size = tuple(output_size)
    if len(output_size) != spatial:
        raise ValueError(f"{fn}: output_size must be an int or a tuple of {spatial} ints, got {output_size!r}")
    sizes = tuple(input.shape[-spatial:][i] if o is None else o for i, o in enumerate(output_size))
    if min(sizes) < 1 or min(input.shape[-spatial:]) < 1:
        raise RuntimeError(f"{fn}: expected non-empty input and a positive output_size, got input of size "
                           f"{list(input.shape)} and output_size {output_size}")
    return sizes


def _adaptive(x, dim, out, reduce):
    """Pools dim (negative) of x into out bins; reduce(piece, dim) keeps the dim."""
    n = x.shape[dim]
    if n % out == 0:
        shape = tuple(x.shape)
        split = shape[:dim] + (out, n // out) + (shape[dim + 1:] if dim != -1 else ())
        return reduce(x.reshape(split), dim).squeeze(dim)
    index = [slice(None)] * x.ndim
    pieces = []
    for start, stop in _bins(n, out):
        index[dim] = slice(start, stop)
        pieces.append(reduce(x[tuple(index)], dim))
    return dyn.cat(pieces, dim)


def _mean_keep(x, dim):
    return x.mean(dim, keepdim=True)


def _max_keep(x, dim):
    return x.max(dim).values.unsqueeze(dim)


def adaptive_avg_pool1d(input, output_size):
    (lo,) = _adaptive_sizes("adaptive_avg_pool1d", input, 1, output_size)
    return _adaptive(input, -1, lo, _mean_keep)


def adaptive_avg_pool2d(input, output_size):
    """Means over PyTorch's adaptive bins of [N, C, H, W] (or [C, H, W]) to output_size (None keeps a dim)."""
    ho, wo = _adaptive_sizes("adaptive_avg_pool2d", input, 2, output_size)
    return _adaptive(_adaptive(input, -2, ho, _mean_keep), -1, wo, _mean_keep)


def adaptive_avg_pool3d(input, output_size):
    """Means over PyTorch's adaptive bins of [N, C, D, H, W] (or [C, D, H, W])."""
    do, ho, wo = _adaptive_sizes("adaptive_avg_pool3d", input, 3, output_size)
    return _adaptive(_adaptive(_adaptive(input, -3, do, _mean_keep), -2, ho, _mean_keep), -1, wo, _mean_keep)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    _no_indices("adaptive_max_pool3d", return_indices)
    do, ho, wo = _adaptive_sizes("adaptive_max_pool3d", input, 3, output_size)
    return _adaptive(_adaptive(_adaptive(input, -3, do, _max_keep), -2, ho, _max_keep), -1, wo, _max_keep)


def _no_indices(fn, return_indices):
    if return_indices:
        raise NotImplementedError(f"{fn}: return_indices=True is not supported by dyn")


def adaptive_max_pool1d(input, output_size, return_indices=False):
    _no_indices("adaptive_max_pool1d", return_indices)
    (lo,) = _adaptive_sizes("adaptive_max_pool1d", input, 1, output_size)
    return _adaptive(input, -1, lo, _max_keep)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Maxima over PyTorch's adaptive bins (a max over rows of maxima over columns)."""
    _no_indices("adaptive_max_pool2d", return_indices)
    ho, wo = _adaptive_sizes("adaptive_max_pool2d", input, 2, output_size)
    return _adaptive(_adaptive(input, -2, ho, _max_keep), -1, wo, _max_keep)


def pixel_shuffle(input, upscale_factor):
    """[*, C * r^2, H, W] -> [*, C, H * r, W * r]."""
    check_tensor("pixel_shuffle", "input", input)
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """[*, C, H * r, W * r] -> [*, C * r^2, H, W] (the inverse of pixel_shuffle)."""
    check_tensor("pixel_unshuffle", "input", input)
    r = downscale_factor
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, but got "
                           f"{h} x {w} and {r}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)
