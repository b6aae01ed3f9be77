"""LayerNorm, RMSNorm, GroupNorm, InstanceNorm1d/2d/3d and LocalResponseNorm."""
import dyn

from .. import functional as F
from .module import Module, _optional_parameters


def _shape(normalized_shape):
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


class LayerNorm(Module):
    """Normalizes over the trailing normalized_shape dims; weight ones and bias zeros of that shape."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        _optional_parameters(self, elementwise_affine, self.normalized_shape, dtype, weight=dyn.ones)
        _optional_parameters(self, elementwise_affine and bias, self.normalized_shape, dtype, bias=dyn.zeros)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        _optional_parameters(self, elementwise_affine, self.normalized_shape, dtype, weight=dyn.ones)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    """Normalizes each of num_groups channel groups; per-channel weight ones and bias zeros."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        _optional_parameters(self, affine, (num_channels,), dtype, weight=dyn.ones)
        _optional_parameters(self, affine and bias, (num_channels,), dtype, bias=dyn.zeros)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class _InstanceNorm(Module):
    """Normalizes each (sample, channel) over the spatial dims; with affine, a weight and bias per
    channel. Running statistics (track_running_stats=True) are not supported by dyn yet."""

    dims = 1

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if track_running_stats:
            raise NotImplementedError(f"{type(self).__name__}(track_running_stats=True): dyn's instance norm keeps "
                                      "no running statistics yet; leave it False (the default)")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats, self._bias = affine, track_running_stats, bias
        _optional_parameters(self, affine, (num_features,), dtype, weight=dyn.ones)
        _optional_parameters(self, affine and bias, (num_features,), dtype, bias=dyn.zeros)

    def forward(self, input):
        n = self.dims
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")
        unbatched = input.dim() == n + 1
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, weight=self.weight, bias=self.bias, eps=self.eps)
        return out.squeeze(0) if unbatched else out

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.affine and self._bias}, track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    dims = 1


class InstanceNorm2d(_InstanceNorm):
    dims = 2


class InstanceNorm3d(_InstanceNorm):
    dims = 3


class LocalResponseNorm(Module):
    """F.local_response_norm over neighbouring channels, as a module."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
