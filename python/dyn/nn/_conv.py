"""pad, conv1d, conv2d and conv3d (and their transposes) of dyn.nn.functional, composed from
slicing, cat/stack and matmul.

Note [conv as one matmul]: conv2d pads the input, takes one strided slice per kernel offset
(i, j) -- x_pad[:, :, i*dh :: sh, j*dw :: sw], cut to the output size -- and stacks them into
columns [N, C, kh*kw, Ho*Wo]. Row c*kh*kw + i*kw + j of the columns then meets weight[o, c, i, j]
in one (grouped, batched) matmul. Every step is an ordinary op, so autograd, tracing and
compilation need nothing special, and eager and compiled results are bitwise equal.
"""
import _dyn
import dyn

from ._util import check_tensor, ntuple

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_index(n, left, right, mode):
    """Source index of each padded position along a dim of size n (non-constant modes)."""
    if mode == "reflect":
        if left >= n or right >= n:
            raise RuntimeError(f"Padding size should be less than the corresponding input dimension, but got: "
                               f"padding ({left}, {right}) at a dimension of size {n}")
        return list(range(left, 0, -1)) + list(range(n)) + list(range(n - 2, n - 2 - right, -1))
    if mode == "replicate":
        return [0] * left + list(range(n)) + [n - 1] * right
    if left > n or right > n:
        raise RuntimeError("Padding value causes wrapping around more than once.")
    return [(i - left) % n for i in range(n + left + right)]


def pad(input, pad, mode="constant", value=None):
    """Pads the last len(pad) // 2 dims: pad = (last_left, last_right, second_last_left, ...).

    constant (negative amounts crop), reflect (mirror without the edge), replicate (repeat the
    edge) or circular (wrap around)."""
    check_tensor("pad", "input", input)
    pad = tuple(pad)
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length must be divisible by 2 and at most twice the number of dims of the "
                           f"input ({input.ndim}), got {len(pad)}")
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}; expected one of {', '.join(_PAD_MODES)}")
    if mode != "constant" and value not in (None, 0, 0.0):
        raise ValueError(f"Padding mode \"{mode}\" doesn't take in value argument.")
    out = input
    for k in range(len(pad) // 2):
        dim = input.ndim - 1 - k
        left, right = pad[2 * k], pad[2 * k + 1]
        if left == 0 and right == 0:
            continue
        if mode == "constant":
            out = _pad_constant(out, dim, left, right, 0.0 if value is None else value)
        else:
            if left < 0 or right < 0:
                raise RuntimeError(f"pad: negative padding is only supported in constant mode, got {pad}")
            index = dyn.tensor(_pad_index(out.shape[dim], left, right, mode), dtype=dyn.int64)
            out = out.index_select(dim, index)
    return out


def _pad_constant(x, dim, left, right, value):
    n = x.shape[dim]
    if left < 0 or right < 0:
        start, stop = max(-left, 0), n - max(-right, 0)
        if stop < start:
            raise RuntimeError(f"pad: the padding {(left, right)} removes more than the {n} elements of dim {dim}")
        index = [slice(None)] * x.ndim
        index[dim] = slice(start, stop)
        x = x[tuple(index)]
        left, right = max(left, 0), max(right, 0)
    def filler(amount):
        shape = list(x.shape)
        shape[dim] = amount
        return dyn.full(tuple(shape), value, dtype=x.dtype)
    parts = ([filler(left)] if left else []) + [x] + ([filler(right)] if right else [])
    return dyn.cat(parts, dim) if len(parts) > 1 else x


def _conv_padding(padding, kernel, dilation, stride):
    """(left, right) padding per spatial dim, from an int, a tuple, 'valid' or 'same'."""
    n = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * n
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            # an odd total puts the extra element on the right, as PyTorch does
            return [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(kernel, dilation)]
        raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
    return [(p, p) for p in ntuple(padding, n, "padding")]


def _columns(x, kh, kw, sh, sw, dh, dw, ho, wo):
    """[N, C, kh * kw, Ho, Wo]: the input under each kernel offset, one strided slice per offset."""
    if kh == kw == 1:
        return x[:, :, : sh * (ho - 1) + 1: sh, : sw * (wo - 1) + 1: sw].unsqueeze(2)
    return dyn.stack([x[:, :, i * dh: i * dh + sh * (ho - 1) + 1: sh, j * dw: j * dw + sw * (wo - 1) + 1: sw]
                      for i in range(kh) for j in range(kw)], 2)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: [N, C, H, W] -> [N, C * kH * kW, L], each column one sliding block (row c * kH * kW + i * kW + j)."""
    check_tensor("unfold", "input", input)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    (kh, kw), (dh, dw) = ntuple(kernel_size, 2, "kernel_size"), ntuple(dilation, 2, "dilation")
    (ph, pw), (sh, sw) = ntuple(padding, 2, "padding"), ntuple(stride, 2, "stride")
    if ph or pw:
        x = pad(x, (pw, pw, ph, ph))
    ho, wo = (x.shape[2] - dh * (kh - 1) - 1) // sh + 1, (x.shape[3] - dw * (kw - 1) - 1) // sw + 1
    if ho < 1 or wo < 1:
        raise RuntimeError(f"unfold: the kernel ({kh} x {kw}, dilation {dilation}) is larger than the padded input "
                           f"({x.shape[2]} x {x.shape[3]})")
    out = _columns(x, kh, kw, sh, sw, dh, dw, ho, wo).reshape(x.shape[0], x.shape[1] * kh * kw, ho * wo)
    return out.squeeze(0) if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im, unfold's adjoint: [N, C * kH * kW, L] -> [N, C, H, W], overlapping blocks summed in
    PyTorch's order (channel, kernel row, kernel column, block)."""
    check_tensor("fold", "input", input)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got "
                           f"{input.ndim}D)")
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    (h, w), (kh, kw) = ntuple(output_size, 2, "output_size"), ntuple(kernel_size, 2, "kernel_size")
    (dh, dw), (ph, pw) = ntuple(dilation, 2, "dilation"), ntuple(padding, 2, "padding")
    sh, sw = ntuple(stride, 2, "stride")
    n, rows, cols = x.shape
    if rows % (kh * kw):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           f"but got input.size(1)={rows} and kernel_size=({kh}, {kw}).")
    hp, wp = h + 2 * ph, w + 2 * pw
    ho, wo = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    if ho * wo != cols:
        raise RuntimeError(f"Given output_size=({h}, {w}), kernel_size=({kh}, {kw}), dilation=({dh}, {dw}), "
                           f"padding=({ph}, {pw}), stride=({sh}, {sw}), expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {ho} * {wo} = {ho * wo}, but got "
                           f"input.size(2)={cols}.")
    c = rows // (kh * kw)
    i = dyn.arange(kh).reshape(kh, 1, 1, 1) * dh + dyn.arange(ho).reshape(1, 1, ho, 1) * sh
    j = dyn.arange(kw).reshape(1, kw, 1, 1) * dw + dyn.arange(wo).reshape(1, 1, 1, wo) * sw
    index = (i * wp + j).reshape(kh * kw * cols)
    out = dyn.zeros(n, c, hp * wp, dtype=x.dtype).index_add(2, index, x.reshape(n, c, kh * kw * cols))
    out = out.reshape(n, c, hp, wp)[:, :, ph:ph + h, pw:pw + w]
    return out.squeeze(0) if unbatched else out


def _check_groups(x, weight, bias, groups):
    """PyTorch's errors for groups, channels and bias that do not fit the weight."""
    c, o, cg = x.shape[1], weight.shape[0], weight.shape[1]
    if not isinstance(groups, int) or groups < 1:
        raise RuntimeError(f"non-positive groups is not supported, got groups={groups}")
    if c != cg * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(x.shape)} to have {cg * groups} channels, but got {c} channels instead")
    if o % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size {list(weight.shape)} instead")
    if bias is not None and tuple(bias.shape) != (o,):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with {o} "
                           f"elements, but got bias of size {list(bias.shape)} instead")


def _conv2d(x, weight, bias, stride, padding, dilation, groups):
    """x [N, C, H, W], weight [O, C / groups, kH, kW]: see Note [conv as one matmul]."""
    n = x.shape[0]
    o, cg, kh, kw = weight.shape
    _check_groups(x, weight, bias, groups)
    (sh, sw), (dh, dw) = stride, dilation
    if min(sh, sw) < 1 or min(dh, dw) < 1:
        raise RuntimeError(f"conv: stride and dilation must be positive, got stride={stride}, dilation={dilation}")
    (pt, pb), (pl, pr) = _conv_padding(padding, (kh, kw), dilation, stride)
    if pt or pb or pl or pr:
        x = pad(x, (pl, pr, pt, pb))
    hp, wp = x.shape[2], x.shape[3]
    ho, wo = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    if ho < 1 or wo < 1:
        raise RuntimeError(f"Calculated padded input size per channel: ({hp} x {wp}). Kernel size: "
                           f"({dh * (kh - 1) + 1} x {dw * (kw - 1) + 1}). Kernel size can't be greater than actual "
                           "input size")
    cols = _columns(x, kh, kw, sh, sw, dh, dw, ho, wo).reshape(n, groups, cg * kh * kw, ho * wo)
    out = (weight.reshape(groups, o // groups, cg * kh * kw) @ cols).reshape(n, o, ho, wo)
    if bias is not None:
        out = out + bias.reshape(1, o, 1, 1)
    return out


def _conv3d(x, weight, bias, stride, padding, dilation, groups):
    """x [N, C, D, H, W], weight [O, C / groups, kD, kH, kW]: Note [conv as one matmul] with one
    strided slice per offset (a, i, j) of the 3-d kernel."""
    n = x.shape[0]
    o, cg, kd, kh, kw = weight.shape
    _check_groups(x, weight, bias, groups)
    (sd, sh, sw), (dd, dh, dw) = stride, dilation
    if min(stride) < 1 or min(dilation) < 1:
        raise RuntimeError(f"conv: stride and dilation must be positive, got stride={stride}, dilation={dilation}")
    pads = _conv_padding(padding, (kd, kh, kw), dilation, stride)
    if any(v for pair in pads for v in pair):
        x = pad(x, tuple(v for pair in reversed(pads) for v in pair))
    dp, hp, wp = x.shape[2], x.shape[3], x.shape[4]
    do = (dp - dd * (kd - 1) - 1) // sd + 1
    ho, wo = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    if do < 1 or ho < 1 or wo < 1:
        raise RuntimeError(f"Calculated padded input size per channel: ({dp} x {hp} x {wp}). Kernel size: "
                           f"({dd * (kd - 1) + 1} x {dh * (kh - 1) + 1} x {dw * (kw - 1) + 1}). Kernel size can't "
                           "be greater than actual input size")
    cols = dyn.stack([x[:, :, a * dd: a * dd + sd * (do - 1) + 1: sd, i * dh: i * dh + sh * (ho - 1) + 1: sh,
                        j * dw: j * dw + sw * (wo - 1) + 1: sw]
                      for a in range(kd) for i in range(kh) for j in range(kw)], 2)
    cols = cols.reshape(n, groups, cg * kd * kh * kw, do * ho * wo)
    out = (weight.reshape(groups, o // groups, cg * kd * kh * kw) @ cols).reshape(n, o, do, ho, wo)
    if bias is not None:
        out = out + bias.reshape(1, o, 1, 1, 1)
    return out


def _check_conv_args(fn, spatial, input, weight, bias, weight_layout):
    """The checks conv and conv_transpose share: tensors, the weight's rank and the input's rank (batched or not)."""
    check_tensor(fn, "input", input)
    check_tensor(fn, "weight", weight)
    check_tensor(fn, "bias", bias, optional=True)
    if weight.ndim != spatial + 2:
        raise RuntimeError(f"{fn}: expected a {spatial + 2}-D weight {weight_layout}, got size {list(weight.shape)}")
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to {fn}, but got "
                           f"input of size: {list(input.shape)}")


def _conv(fn, spatial, input, weight, bias, stride, padding, dilation, groups):
    ac = _dyn.autocast_dtype()
    if ac is not None:  # torch.autocast: the convolutions are on its lower-precision list
        input, weight, bias = (t.to(ac) if isinstance(t, dyn.Tensor) and t.dtype == dyn.float32 else t
                               for t in (input, weight, bias))
    _check_conv_args(fn, spatial, input, weight, bias, "[out_channels, in_channels / groups, kernel]")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"Input type ({input.dtype}) and weight type ({weight.dtype}) should be the same")
    unbatched = input.ndim == spatial + 1
    x = input.unsqueeze(0) if unbatched else input
    stride = ntuple(stride, spatial, "stride")
    dilation = ntuple(dilation, spatial, "dilation")
    if spatial == 3:
        out = _conv3d(x, weight, bias, stride, padding, dilation, groups)
        return out.squeeze(0) if unbatched else out
    if spatial == 1:  # a conv1d is a conv2d over height 1
        x, weight = x.unsqueeze(2), weight.unsqueeze(2)
        stride, dilation = (1,) + stride, (1,) + dilation
        if not isinstance(padding, str):
            padding = (0,) + ntuple(padding, 1, "padding")
    out = _conv2d(x, weight, bias, stride, padding, dilation, groups)
    if spatial == 1:
        out = out.squeeze(2)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """input [N, C_in, L] (or [C_in, L]), weight [C_out, C_in / groups, k]; padding an int, 'valid' or 'same'."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """input [N, C_in, H, W] (or [C_in, H, W]), weight [C_out, C_in / groups, kH, kW]."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """input [N, C_in, D, H, W] (or [C_in, D, H, W]), weight [C_out, C_in / groups, kD, kH, kW]."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _dilate(x, dim, stride):
    """(stride - 1) zeros between neighbours along dim (the input of a strided transposed conv)."""
    if stride == 1:
        return x
    n = x.shape[dim]
    shape = list(x.shape)
    shape[dim] = n * (stride - 1)
    zeros = dyn.zeros(*shape[:dim], n, stride - 1, *shape[dim + 1:], dtype=x.dtype)
    spread = dyn.cat([x.unsqueeze(dim + 1), zeros], dim + 1)  # [..., n, stride, ...]
    shape[dim] = n * stride
    spread = spread.reshape(shape)
    index = [slice(None)] * x.ndim
    index[dim] = slice(0, (n - 1) * stride + 1)
    return spread[tuple(index)]


def _check_transposed(fn, x, weight, groups, stride, output_padding, dilation):
    """PyTorch's errors for a transposed conv's channels, groups and output_padding."""
    cin = weight.shape[0]
    if x.shape[1] != cin:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input{list(x.shape)} "
                           f"to have {cin} channels, but got {x.shape[1]} channels instead")
    if cin % groups:
        raise RuntimeError(f"{fn}: in_channels ({cin}) must be divisible by groups ({groups})")
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                               f"output_padding={output_padding}, stride={stride}, dilation={dilation}")


def _conv_transpose2d(x, weight, bias, stride, padding, output_padding, groups, dilation):
    """The gradient of conv2d with respect to its input, as a conv2d: spread the input by stride,
    pad it by dilation * (k - 1) - padding (plus output_padding on the right), and convolve with the
    kernel flipped and its in/out channels swapped."""
    cin, cout_g, kh, kw = weight.shape
    _check_transposed("conv_transpose2d", x, weight, groups, stride, output_padding, dilation)
    x = _dilate(_dilate(x, 2, stride[0]), 3, stride[1])
    (ph, pw), (dh, dw), (oh, ow) = padding, dilation, output_padding
    x = pad(x, (dw * (kw - 1) - pw, dw * (kw - 1) - pw + ow, dh * (kh - 1) - ph, dh * (kh - 1) - ph + oh))
    flipped = weight.index_select(2, dyn.arange(kh - 1, -1, -1)).index_select(3, dyn.arange(kw - 1, -1, -1))
    swapped = flipped.reshape(groups, cin // groups, cout_g, kh, kw).transpose(1, 2)
    return _conv2d(x, swapped.reshape(groups * cout_g, cin // groups, kh, kw), bias, (1, 1), 0, dilation, groups)


def _conv_transpose3d(x, weight, bias, stride, padding, output_padding, groups, dilation):
    """_conv_transpose2d's construction over three spatial dims."""
    cin, cout_g, kd, kh, kw = weight.shape
    _check_transposed("conv_transpose3d", x, weight, groups, stride, output_padding, dilation)
    for dim, s in zip((2, 3, 4), stride):
        x = _dilate(x, dim, s)
    amounts = []
    for k, p, d, op in reversed(list(zip((kd, kh, kw), padding, dilation, output_padding))):
        amounts += [d * (k - 1) - p, d * (k - 1) - p + op]
    x = pad(x, tuple(amounts))
    flipped = weight
    for dim, k in zip((2, 3, 4), (kd, kh, kw)):
        flipped = flipped.index_select(dim, dyn.arange(k - 1, -1, -1))
    swapped = flipped.reshape(groups, cin // groups, cout_g, kd, kh, kw).transpose(1, 2)
    return _conv3d(x, swapped.reshape(groups * cout_g, cin // groups, kd, kh, kw), bias, (1, 1, 1), 0, dilation,
                   groups)


def _conv_transpose(fn, spatial, input, weight, bias, stride, padding, output_padding, groups, dilation):
    ac = _dyn.autocast_dtype()
    if ac is not None:  # torch.autocast: the transposed convolutions are on its list too
        input, weight, bias = (t.to(ac) if isinstance(t, dyn.Tensor) and t.dtype == dyn.float32 else t
                               for t in (input, weight, bias))
    _check_conv_args(fn, spatial, input, weight, bias, "[in_channels, out_channels / groups, kernel]")
    unbatched = input.ndim == spatial + 1
    x = input.unsqueeze(0) if unbatched else input
    args = [ntuple(v, spatial, name) for v, name in ((stride, "stride"), (padding, "padding"),
                                                       (output_padding, "output_padding"), (dilation, "dilation"))]
    if spatial == 3:
        out = _conv_transpose3d(x, weight, bias, args[0], args[1], args[2], groups, args[3])
        return out.squeeze(0) if unbatched else out
    if spatial == 1:  # over height 1, as conv1d
        x, weight = x.unsqueeze(2), weight.unsqueeze(2)
        args = [(first,) + a for first, a in zip((1, 0, 0, 1), args)]
    out = _conv_transpose2d(x, weight, bias, args[0], args[1], args[2], groups, args[3])
    if spatial == 1:
        out = out.squeeze(2)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """input [N, C_in, L], weight [C_in, C_out / groups, k]."""
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """input [N, C_in, H, W], weight [C_in, C_out / groups, kH, kW]: the adjoint of conv2d."""
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """input [N, C_in, D, H, W], weight [C_in, C_out / groups, kD, kH, kW]: the adjoint of conv3d."""
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)
