"""BatchNorm1d and BatchNorm2d with running statistics, as PyTorch's.

Note [cumulative momentum]: with momentum=None the running statistics are a plain average of every
batch seen: factor 1 / num_batches_tracked. The factor is computed as a tensor from the
num_batches_tracked buffer, so a compiled training step neither breaks the graph to read the count
nor bakes one count into the trace.
"""
import dyn

from .. import functional as F
from .module import Module, _optional_parameters


class _BatchNorm(Module):
    _dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _optional_parameters(self, affine, (num_features,), dtype, weight=dyn.ones)
        _optional_parameters(self, affine and bias, (num_features,), dtype, bias=dyn.zeros)
        if track_running_stats:
            self.register_buffer("running_mean", dyn.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", dyn.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", dyn.tensor(0, dtype=dyn.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        if self.track_running_stats:
            with dyn.no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1.0)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            with dyn.no_grad():
                self.weight.fill_(1.0)
                if self.bias is not None:
                    self.bias.zero_()

    def _check_input_dim(self, input):
        if input.ndim not in self._dims:
            expected = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {expected} input (got {input.ndim}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with dyn.no_grad():
                self.num_batches_tracked.add_(1)
                if self.momentum is None:  # Note [cumulative momentum]
                    factor = 1.0 / self.num_batches_tracked.to(input.dtype)
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None, self.running_var if track else None,
                            self.weight, self.bias, use_batch_stats, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Over [N, C] or [N, C, L]."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Over [N, C, H, W]."""

    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Over [N, C, D, H, W]."""

    _dims = (5,)
