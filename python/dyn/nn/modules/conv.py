"""Conv1d, Conv2d and Conv3d and their transposes, with PyTorch's parameters, padding modes and default initialization."""
import math

import dyn

from .. import Parameter
from .. import functional as F
from .. import init
from .._conv import _conv_padding
from .._util import ntuple
from .module import Module, _check_device, _optional_parameters

_PADDING_MODES = {"zeros": "constant", "reflect": "reflect", "replicate": "replicate", "circular": "circular"}


class _ConvNd(Module):
    _spatial = 0
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None, output_padding=0):
        super().__init__()
        n = self._spatial
        _check_device(type(self).__name__, device)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = ntuple(kernel_size, n, "kernel_size")
        self.stride = ntuple(stride, n, "stride")
        self.dilation = ntuple(dilation, n, "dilation")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = ntuple(padding, n, "padding")
        self.groups, self.padding_mode = groups, padding_mode
        self.transposed, self.output_padding = self._transposed, ntuple(output_padding, n, "output_padding")
        # a transposed conv's weight is [in, out / groups, kernel]: the adjoint of the conv from out to in
        channels = (in_channels, out_channels // groups) if self._transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(dyn.empty(*channels, *self.kernel_size, dtype=dtype))
        _optional_parameters(self, bias, (out_channels,), dtype, bias=dyn.empty)
        self.reset_parameters()

    def reset_parameters(self):
        # PyTorch: kaiming_uniform_(a=sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in)), the bias the same;
        # fan_in = in_channels / groups * prod(kernel_size)
        fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def _explicit_padding(self):
        """F.pad's argument for a non-zeros padding_mode: (left, right) per dim, last dim first."""
        pairs = _conv_padding(self.padding, self.kernel_size, self.dilation, self.stride)
        return tuple(v for pair in reversed(pairs) for v in pair)

    def _conv(self, fn, input):
        if self.padding_mode == "zeros":
            return fn(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
        input = F.pad(input, self._explicit_padding(), mode=_PADDING_MODES[self.padding_mode])
        return fn(input, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._spatial:
            s += f", padding={self.padding!r}" if isinstance(self.padding, str) else f", padding={self.padding}"
        if self.output_padding != (0,) * self._spatial:
            s += f", output_padding={self.output_padding}"
        if self.dilation != (1,) * self._spatial:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-d convolution over [N, C_in, L] (or [C_in, L]); weight [C_out, C_in / groups, k]."""

    _spatial = 1

    def forward(self, input):
        return self._conv(F.conv1d, input)


class Conv2d(_ConvNd):
    """2-d convolution over [N, C_in, H, W] (or [C_in, H, W]); weight [C_out, C_in / groups, kH, kW]."""

    _spatial = 2

    def forward(self, input):
        return self._conv(F.conv2d, input)


class Conv3d(_ConvNd):
    """3-d convolution over [N, C_in, D, H, W] (or [C_in, D, H, W]); weight [C_out, C_in / groups, kD, kH, kW]."""

    _spatial = 3

    def forward(self, input):
        return self._conv(F.conv3d, input)


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple of ints, got {padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                         device, dtype, output_padding)

    def _output_padding(self, input, output_size):
        """The output_padding that makes the output output_size (the trailing spatial sizes)."""
        if output_size is None:
            return self.output_padding
        n = self._spatial
        output_size = tuple(output_size)[-n:]
        if len(output_size) != n:
            raise ValueError(f"output_size must have {n} or {n + 2} elements (got {len(output_size)})")
        result = []
        for d in range(n):
            size = input.shape[input.ndim - n + d]
            smallest = ((size - 1) * self.stride[d] - 2 * self.padding[d] + self.dilation[d] *
                        (self.kernel_size[d] - 1) + 1)
            largest = smallest + self.stride[d] - 1
            if not smallest <= output_size[d] <= largest:
                raise ValueError(f"requested an output size of {list(output_size)}, but valid sizes range from "
                                 f"{smallest} to {largest} (for an input of {list(input.shape[-n:])})")
            result.append(output_size[d] - smallest)
        return tuple(result)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-d convolution (the adjoint of Conv1d); weight [C_in, C_out / groups, k]."""

    _spatial = 1

    def forward(self, input, output_size=None):
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-d convolution (the adjoint of Conv2d); weight [C_in, C_out / groups, kH, kW]."""

    _spatial = 2

    def forward(self, input, output_size=None):
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-d convolution (the adjoint of Conv3d); weight [C_in, C_out / groups, kD, kH, kW]."""

    _spatial = 3

    def forward(self, input, output_size=None):
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups, self.dilation)
