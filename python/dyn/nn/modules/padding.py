"""The padding modules (torch.nn.modules.padding): constant, zero, reflection, replication and
circular padding of the last 1, 2 or 3 dims, as F.pad with the module's mode."""
from .. import functional as F
from .module import Module


def _pads(padding, n, name):
    if isinstance(padding, int):
        return (padding,) * (2 * n)
    padding = tuple(padding)
    if len(padding) != 2 * n:
        raise ValueError(f"{name}: padding must be an int or a tuple of {2 * n} ints, got {padding}")
    return padding


class _PadNd(Module):
    mode = "constant"
    dims = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _pads(padding, self.dims, type(self).__name__)

    def forward(self, input):
        return F.pad(input, self.padding, mode=self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, mode="constant", value=self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


def _padding_class(name, base, mode, dims):
    cls = type(name, (base,), {"mode": mode, "dims": dims, "__module__": __name__,
                               "__doc__": f"Pads the last {dims} dim(s) of the input ({mode})."})
    globals()[name] = cls
    return cls


for _n in (1, 2, 3):
    _padding_class(f"ConstantPad{_n}d", _ConstantPadNd, "constant", _n)
    _padding_class(f"ReflectionPad{_n}d", _PadNd, "reflect", _n)
    _padding_class(f"ReplicationPad{_n}d", _PadNd, "replicate", _n)
    _padding_class(f"CircularPad{_n}d", _PadNd, "circular", _n)


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


for _n in (1, 2, 3):
    _padding_class(f"ZeroPad{_n}d", _ZeroPadNd, "constant", _n)
del _n

__all__ = [f"{kind}Pad{n}d" for kind in ("Constant", "Zero", "Reflection", "Replication", "Circular")
           for n in (1, 2, 3)]
